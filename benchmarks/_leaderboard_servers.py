"""A throwaway 3-master Redis Cluster for the leaderboard benchmark, on free loopback ports.

The cluster sibling of :class:`benchmarks._servers.BenchRedis` (benchmarks run outside
pytest and do not import the test tree): every node runs with ``--cluster-enabled yes``
and a probed ``--cluster-port``, the nodes are joined with ``redis-cli --cluster create``,
and the start waits until every node reports ``cluster_state:ok``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks._servers import _pong
from benchmarks._wrk import HOST, free_port

__all__ = ["BenchCluster"]

MASTERS = 3
START_TIMEOUT = 10.0
CLUSTER_TIMEOUT = 30.0


def _cluster_ok(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1) as conn:
            conn.sendall(b"CLUSTER INFO\r\n")
            return b"cluster_state:ok" in conn.recv(4096)
    except OSError:
        return False


class BenchCluster:
    """Start with ``with BenchCluster() as cluster:``; ``cluster.ports`` serve a cluster
    whose 16384 slots are split over three masters."""

    def __init__(self) -> None:
        server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
        if server is None or cli is None:
            raise SystemExit("redis-server / redis-cli not found (Debian package 'redis-server')")
        self.server, self.cli = server, cli
        self.tmp = tempfile.TemporaryDirectory(prefix="ranked-bench-cluster-")
        self.ports: list[int] = []
        self.processes: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"{HOST}:{port}" for port in self.ports)

    def _start_node(self, number: int) -> int:
        workdir = Path(self.tmp.name) / f"node{number}"
        workdir.mkdir(exist_ok=True)
        for _ in range(5):  # retry on a port taken between the probe and the bind
            port, bus = free_port(), free_port()
            if port == bus:
                continue
            args = [self.server, "--save", "", "--appendonly", "no", "--port", str(port)]
            args += ["--bind", HOST, "--dir", str(workdir), "--cluster-enabled", "yes"]
            args += ["--cluster-config-file", "nodes.conf", "--cluster-port", str(bus)]
            process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline and process.poll() is None:
                if _pong(port):
                    self.processes.append(process)
                    return port
                time.sleep(0.05)
            process.terminate()
            process.wait(timeout=10)
        raise SystemExit("a cluster node did not start")

    def __enter__(self) -> BenchCluster:
        try:
            self.ports = [self._start_node(number) for number in range(MASTERS)]
            addresses = [f"{HOST}:{port}" for port in self.ports]
            args = [self.cli, "--cluster", "create", *addresses]
            args += ["--cluster-replicas", "0", "--cluster-yes"]
            done = subprocess.run(args, capture_output=True, timeout=60, check=False)
            if done.returncode != 0:
                raise SystemExit(f"redis-cli --cluster create failed:\n{done.stdout.decode()}")
            deadline = time.monotonic() + CLUSTER_TIMEOUT
            while not all(_cluster_ok(port) for port in self.ports):
                if time.monotonic() > deadline:
                    raise SystemExit("cluster_state never became ok")
                time.sleep(0.1)
        except BaseException:
            self._stop()
            raise
        return self

    def _stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait(timeout=10)
        self.processes = []

    def __exit__(self, *exc: object) -> None:
        self._stop()
        self.tmp.cleanup()
