"""A throwaway redis-server for the benchmarks: free loopback port, no persistence.

A deliberately small sibling of ``tests/servers.py`` (benchmarks run outside pytest and
must not import the test tree).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time

from benchmarks._wrk import HOST, free_port

__all__ = ["BenchPostgres", "BenchRedis"]


def _pong(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class BenchRedis:
    """Start with ``with BenchRedis() as server:``; ``server.port`` answers PING inside."""

    def __init__(self, extra: tuple[str, ...] = ()) -> None:
        self.extra = extra
        """Further server arguments (``--appendonly yes --appendfsync always``)."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server not found on PATH (Debian package 'redis-server')")
        self.binary = binary
        self.port = 0
        self.tmp = tempfile.TemporaryDirectory(prefix="ranked-bench-")
        self.process: subprocess.Popen[bytes] | None = None

    def version(self) -> str:
        done = subprocess.run([self.binary, "--version"], capture_output=True, check=True)
        return done.stdout.decode().split()[2].removeprefix("v=")

    def __enter__(self) -> BenchRedis:
        for _ in range(5):  # retry on a port taken between the probe and the bind
            self.port = free_port()
            args = [self.binary, "--save", "", "--appendonly", "no", "--port", str(self.port)]
            args += ["--bind", HOST, "--dir", self.tmp.name, *self.extra]
            self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.process.poll() is None:
                if _pong(self.port):
                    return self
                time.sleep(0.05)
            self._stop()
        raise SystemExit("redis-server did not start")

    def _stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def __exit__(self, *exc: object) -> None:
        self._stop()
        self.tmp.cleanup()


class BenchPostgres:
    """A throwaway PostgreSQL server (``initdb`` into a temporary directory, trust auth,
    loopback port); as root, run as ``nobody`` (PostgreSQL refuses root). ``url`` inside
    ``with BenchPostgres() as server:``."""

    def __init__(self) -> None:
        import glob
        import os
        import pwd

        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
        binary = shutil.which("postgres") or (found[-1] if found else None)
        if binary is None:
            raise SystemExit("postgres not found (Debian package 'postgresql')")
        self.bin = os.path.dirname(binary)
        self.tmp = tempfile.TemporaryDirectory(prefix="ranked-bench-pg-")
        self.user = "nobody" if os.geteuid() == 0 else None
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.tmp.name, entry.pw_uid, entry.pw_gid)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@{HOST}:{self.port}/postgres"

    def __enter__(self) -> BenchPostgres:
        import os

        data = os.path.join(self.tmp.name, "data")
        subprocess.run(
            [f"{self.bin}/initdb", "-D", data, "-A", "trust", "-U", "postgres", "-N"],
            user=self.user,
            cwd=self.tmp.name,
            capture_output=True,
            check=True,
        )
        self.port = free_port()
        self.process = subprocess.Popen(
            [
                f"{self.bin}/postgres",
                "-D",
                data,
                "-h",
                HOST,
                "-p",
                str(self.port),
                "-k",
                self.tmp.name,
                "-c",
                "max_connections=200",
            ],
            user=self.user,
            cwd=self.tmp.name,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import psycopg

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                psycopg.connect(self.url, connect_timeout=1).close()
                return self
            except psycopg.Error:
                time.sleep(0.1)
        raise SystemExit("postgres did not start")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.tmp.cleanup()
