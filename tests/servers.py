"""Real servers for tests: one redis-server, a 3-master Redis cluster, or one PostgreSQL
server, on loopback ports.

Nothing here is mocked: each object owns real child processes, started with no persistence
(``--save "" --appendonly no``) in a private temporary directory. Ports come from the kernel
(bind to port 0, read the number back); if another process grabs a port between the probe and
the server's own bind, the start is retried on fresh ports. Children are stopped on ``stop()``,
on leaving the ``with`` block, at interpreter exit, and (on Linux) by the kernel when the
Python process dies, so no server outlives its test run.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

import pytest
import redis

__all__ = [
    "PostgresServer",
    "RedisCluster",
    "RedisServer",
    "ServerError",
    "free_port",
    "require_binary",
]

HOST = "127.0.0.1"
START_ATTEMPTS = 5
START_TIMEOUT = 15.0
CLUSTER_TIMEOUT = 30.0
PR_SET_PDEATHSIG = 1

_live: set[subprocess.Popen[bytes]] = set()


class ServerError(RuntimeError):
    """A redis-server or redis-cli could not be found, started or joined."""


def require_binary(name: str) -> str:
    """Absolute path of ``name`` on PATH, or a ``ServerError`` saying how to get it."""
    path = shutil.which(name)
    if path is None:
        raise ServerError(
            f"{name!r} was not found on PATH. These tests need a real Redis: install the "
            f"Debian package 'redis-server' (it provides redis-server and redis-cli)."
        )
    return path


def free_port() -> int:
    """A loopback TCP port the kernel reports free right now (it may be taken later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def _die_with_parent() -> None:
    # Runs in the child before exec: ask Linux to SIGKILL it if the test process dies,
    # so a crashed or killed pytest never leaves servers behind.
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _spawn(args: Sequence[str], log: Path, user: str | None = None) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        process = subprocess.Popen(
            list(args),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
            user=user,
            group=None if user is None else pwd.getpwnam(user).pw_gid,
            extra_groups=None if user is None else [],
        )
    _live.add(process)
    return process


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
    _live.discard(process)


@atexit.register
def _terminate_all() -> None:
    for process in list(_live):
        _terminate(process)


def _ask(port: int, command: bytes, timeout: float = 1.0) -> bytes:
    """Send one inline command over a raw socket and return the reply bytes ('' on failure).

    Deliberately not redis-py: its client retries with back-off, which turns a probe of a
    port held by something else into seconds of waiting.
    """
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as conn:
            conn.sendall(command + b"\r\n")
            reply = b""
            while not _complete(reply):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                reply += chunk
            return reply
    except OSError:
        return b""


def _complete(reply: bytes) -> bool:
    """True once ``reply`` holds one whole simple, error or bulk-string RESP reply."""
    head, sep, body = reply.partition(b"\r\n")
    if not sep:
        return False
    if head[:1] != b"$":
        return True
    length = int(head[1:])
    return length < 0 or len(body) >= length + 2


def _answers_ping(port: int) -> bool:
    return _ask(port, b"PING").startswith(b"+PONG")


def _wait_until(
    ready: Callable[[], bool], process: subprocess.Popen[bytes], timeout: float
) -> bool:
    """True once ``ready()``; False if the process exits first or the time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        if ready():
            return True
        time.sleep(0.05)
    return False


class _Node:
    """One redis-server process with a fixed directory; the port may change until it starts."""

    def __init__(self, binary: str, workdir: Path, extra_args: Sequence[str]) -> None:
        self.binary = binary
        self.workdir = workdir
        self.extra_args = list(extra_args)
        self.port = 0
        self.bus_port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.workdir / "redis.log"

    def command(self) -> list[str]:
        args = [self.binary, "--save", "", "--appendonly", "no"]
        args += ["--port", str(self.port), "--bind", HOST, "--dir", str(self.workdir)]
        args += ["--daemonize", "no"]
        if self.bus_port:
            args += ["--cluster-port", str(self.bus_port)]
        return args + self.extra_args

    def launch(self) -> bool:
        """Start on the current port; True once PING answers."""
        self.process = _spawn(self.command(), self.log)
        port = self.port
        if _wait_until(lambda: _answers_ping(port), self.process, START_TIMEOUT):
            return True
        _terminate(self.process)
        self.process = None
        return False

    def start(self, *, keep_port: bool, cluster_bus: bool = False) -> None:
        """Start, choosing fresh ports on each attempt unless ``keep_port``."""
        for _ in range(START_ATTEMPTS):
            if not keep_port or not self.port:
                self.port = free_port()
                self.bus_port = free_port() if cluster_bus else 0
                if self.bus_port == self.port:
                    continue
            if self.launch():
                return
            time.sleep(0.2)  # a collision or a slow release: try again
        raise ServerError(
            f"redis-server did not answer PING on {HOST}:{self.port} after "
            f"{START_ATTEMPTS} attempts; last log lines:\n{self.tail_log()}"
        )

    def stop(self) -> None:
        if self.process is not None:
            _terminate(self.process)
            self.process = None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def tail_log(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


class RedisServer:
    """A standalone redis-server on a free loopback port, in a temporary directory.

    >>> with RedisServer() as server:          # doctest: +SKIP
    ...     server.client().ping()
    """

    def __init__(self, extra_args: Sequence[str] = ()) -> None:
        self._binary = require_binary("redis-server")
        self._tmp = tempfile.TemporaryDirectory(prefix="ranked-redis-")
        self._node = _Node(self._binary, Path(self._tmp.name), extra_args)

    @property
    def host(self) -> str:
        return HOST

    @property
    def port(self) -> int:
        return self._node.port

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    @property
    def running(self) -> bool:
        return self._node.running()

    def start(self) -> None:
        """Start on a fresh port (or the previous one after :meth:`stop`); waits for PING."""
        self._node.start(keep_port=bool(self._node.port))

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 5 s). Data is not kept."""
        self._node.stop()

    def restart(self) -> None:
        """Stop, then start again on the same port."""
        self.stop()
        self._node.start(keep_port=True)

    def client(self, **kwargs: object) -> redis.Redis:
        """A redis-py client for this server (bytes replies unless told otherwise)."""
        return redis.Redis(host=HOST, port=self.port, **kwargs)  # type: ignore[arg-type]

    def close(self) -> None:
        """Stop the server and remove its directory."""
        self.stop()
        self._tmp.cleanup()

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class RedisCluster:
    """A Redis Cluster of ``masters`` nodes (no replicas) on free loopback ports.

    Every node runs with ``--cluster-enabled yes`` in its own directory; the nodes are joined
    with ``redis-cli --cluster create`` and the start waits until every node reports
    ``cluster_state:ok``. The cluster bus uses a second probed port per node
    (``--cluster-port``) instead of the fixed ``port + 10000``.
    """

    def __init__(self, masters: int = 3, extra_args: Sequence[str] = ()) -> None:
        if masters < 3:
            raise ValueError("redis-cli --cluster create needs at least 3 masters")
        self._binary = require_binary("redis-server")
        self._cli = require_binary("redis-cli")
        self._tmp = tempfile.TemporaryDirectory(prefix="ranked-cluster-")
        root = Path(self._tmp.name)
        node_args = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
        node_args += ["--cluster-node-timeout", "5000", *extra_args]
        self._nodes: list[_Node] = []
        for number in range(masters):
            workdir = root / f"node{number}"
            workdir.mkdir()
            self._nodes.append(_Node(self._binary, workdir, node_args))

    @property
    def host(self) -> str:
        return HOST

    @property
    def ports(self) -> list[int]:
        return [node.port for node in self._nodes]

    @property
    def startup_nodes(self) -> list[tuple[str, int]]:
        return [(HOST, port) for port in self.ports]

    @property
    def url(self) -> str:
        """``redis+cluster://127.0.0.1:P1,...``: every node as a startup node."""
        return "redis+cluster://" + ",".join(f"{host}:{port}" for host, port in self.startup_nodes)

    @property
    def running(self) -> bool:
        return all(node.running() for node in self._nodes)

    def start(self) -> None:
        """Start every node and create the cluster (or rejoin it after :meth:`stop`)."""
        created = bool(self._nodes[0].port)
        for node in self._nodes:
            node.start(keep_port=created, cluster_bus=True)
        if not created:
            self._create()
        self._wait_ok()

    def stop(self) -> None:
        for node in self._nodes:
            node.stop()

    def restart(self) -> None:
        """Stop every node and start them on the same ports; the slot map survives in
        each node's nodes.conf, so the cluster comes back as it was (without data)."""
        self.stop()
        for node in self._nodes:
            node.start(keep_port=True, cluster_bus=True)
        self._wait_ok()

    def client(self, **kwargs: object) -> redis.RedisCluster:
        """A redis-py cluster client for this cluster."""
        return redis.RedisCluster(host=HOST, port=self.ports[0], **kwargs)  # type: ignore[arg-type]

    def node_client(self, index: int, **kwargs: object) -> redis.Redis:
        """A plain client connected to one node (for CLUSTER commands)."""
        return redis.Redis(host=HOST, port=self._nodes[index].port, **kwargs)  # type: ignore[arg-type]

    def node_clients(self) -> list[redis.Redis]:
        """A plain client per node (to flush, scan or inspect every node)."""
        return [self.node_client(index) for index in range(len(self._nodes))]

    def close(self) -> None:
        self.stop()
        self._tmp.cleanup()

    def _create(self) -> None:
        addresses = [f"{HOST}:{node.port}" for node in self._nodes]
        args = [self._cli, "--cluster", "create", *addresses]
        args += ["--cluster-replicas", "0", "--cluster-yes"]
        done = subprocess.run(args, capture_output=True, timeout=60, check=False)
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")
            raise ServerError(f"redis-cli --cluster create failed:\n{output}")

    def _wait_ok(self) -> None:
        deadline = time.monotonic() + CLUSTER_TIMEOUT
        pending = list(range(len(self._nodes)))
        while pending and time.monotonic() < deadline:
            pending = [i for i in pending if not self._node_ok(i)]
            if pending:
                time.sleep(0.1)
        if pending:
            ports = [self._nodes[i].port for i in pending]
            raise ServerError(f"cluster_state never became ok on ports {ports}")

    def cluster_info(self, index: int) -> dict[str, str]:
        """CLUSTER INFO of one node as a dict (empty when the node does not answer)."""
        reply = _ask(self._nodes[index].port, b"CLUSTER INFO")
        lines = reply.decode(errors="replace").splitlines()[1:]
        return dict(line.split(":", 1) for line in lines if ":" in line)

    def _node_ok(self, index: int) -> bool:
        return self.cluster_info(index).get("cluster_state") == "ok"

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def flushed_store(kind: str, request: pytest.FixtureRequest) -> tuple[str, list[redis.Redis]]:
    """The URL of the session's ``redis`` server or ``cluster``, flushed, with one plain
    client per node (the caller closes them); ``memory`` gives ``memory://``, the
    process's default store (every URL-opened handle shares it), flushed, and none."""
    if kind == "memory":
        from ranked.backends.memory import MemoryBackend

        MemoryBackend.from_url("memory://").flushall()
        return "memory://", []
    if kind == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        url, clients = server.url, [server.client()]
    else:
        cluster: RedisCluster = request.getfixturevalue("redis_cluster")
        url, clients = cluster.url, cluster.node_clients()
    for client in clients:
        client.flushall()
    return url, clients


def require_postgres_binary(name: str) -> str:
    """Absolute path of PostgreSQL's ``name`` (initdb, postgres): on PATH, else in Debian's
    /usr/lib/postgresql/<version>/bin (newest version first); else a ``ServerError``."""
    path = shutil.which(name)
    if path is not None:
        return path
    found = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return found[-1]
    raise ServerError(
        f"{name!r} was not found on PATH nor in /usr/lib/postgresql/*/bin. These tests need"
        " a real PostgreSQL: install the Debian package 'postgresql' (scripts/setup.sh does)."
    )


class PostgresServer:
    """A PostgreSQL server on a free loopback port, its cluster initialised (trust auth,
    superuser ``postgres``) in a temporary directory that also holds its unix socket.

    PostgreSQL refuses to run as root: when the tests run as root, the directory is given to
    ``nobody`` and initdb and the server run as that user.
    """

    def __init__(self) -> None:
        self._initdb = require_postgres_binary("initdb")
        self._postgres = require_postgres_binary("postgres")
        self._tmp = tempfile.TemporaryDirectory(prefix="ranked-pg-")
        self.dir = Path(self._tmp.name)
        self._user = "nobody" if os.geteuid() == 0 else None
        if self._user is not None:
            entry = pwd.getpwnam(self._user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._databases = 0

    @property
    def host(self) -> str:
        return HOST

    @property
    def log(self) -> Path:
        return self.dir / "postgres.log"

    def _run(self, args: Sequence[str]) -> None:
        with self.log.open("ab") as out:
            done = subprocess.run(
                list(args),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                user=self._user,
                group=None if self._user is None else pwd.getpwnam(self._user).pw_gid,
                extra_groups=None if self._user is None else [],
                cwd=self.dir,
                check=False,
                timeout=120,
            )
        if done.returncode:
            raise ServerError(f"{args[0]} failed; last log lines:\n{self.tail_log()}")

    def start(self) -> None:
        """initdb (once), then start the server on a fresh port; waits until it answers."""
        data = self.dir / "data"
        if not data.exists():
            self._run([self._initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "-N"])
        for _ in range(START_ATTEMPTS):
            self.port = free_port()
            args = [self._postgres, "-D", str(data), "-h", HOST, "-p", str(self.port)]
            args += ["-k", str(self.dir), "-c", "max_connections=200"]
            self.process = _spawn(args, self.log, self._user)
            if _wait_until(self._answers, self.process, START_TIMEOUT):
                return
            _terminate(self.process)
            self.process = None
            time.sleep(0.2)
        raise ServerError(
            f"postgres did not answer on {HOST}:{self.port} after {START_ATTEMPTS} attempts;"
            f" last log lines:\n{self.tail_log()}"
        )

    def _answers(self) -> bool:
        import psycopg

        try:
            psycopg.connect(self.url("postgres"), connect_timeout=1).close()
        except psycopg.Error:
            return False
        return True

    def url(self, database: str) -> str:
        return f"postgresql://postgres@{HOST}:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; returns its URL."""
        import psycopg

        self._databases += 1
        name = f"journal_{self._databases}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        if self.process is not None:
            _terminate(self.process)
            self.process = None

    def tail_log(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def close(self) -> None:
        """Stop the server and remove its directory."""
        self.stop()
        self._tmp.cleanup()


class RankedService:
    """``ranked serve`` (or ``ranked demo``: ``command``) in a subprocess on a free loopback
    port, over ``data_dir``; extra command-line arguments in ``args``. :meth:`start` waits
    until ``/readyz`` answers 200; :meth:`stop` is a graceful SIGTERM, :meth:`kill` a
    SIGKILL."""

    def __init__(self, data_dir: Path, args: Sequence[str] = (), command: str = "serve") -> None:
        self.data_dir = data_dir
        self.args = list(args)
        self.command = command
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log = data_dir / "serve.log"

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        import sys
        import urllib.error
        import urllib.request

        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        command = [sys.executable, "-m", "ranked", self.command, "--data-dir", str(self.data_dir)]
        self.process = _spawn([*command, "--port", str(self.port), *self.args], self.log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(f"ranked serve exited; log:\n{self.tail_log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", timeout=1) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        raise ServerError(f"ranked serve not ready after {timeout} s; log:\n{self.tail_log()}")

    def stop(self) -> int | None:
        """SIGTERM, then wait: the exit code."""
        if self.process is None:
            return None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=30)
        _live.discard(self.process)
        self.process = None
        return code

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            _live.discard(self.process)
            self.process = None

    def close(self) -> None:
        if self.process is not None:
            _terminate(self.process)
            self.process = None

    def tail_log(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
