"""Drive an HTTP server with ``wrk``: the server pinned to one core, wrk to another.

A :class:`Server` starts a command (``{port}`` in it becomes a free loopback port) as its
own process group under ``taskset -c 0`` and waits until it answers HTTP; :func:`run_wrk`
runs ``wrk --latency`` under ``taskset -c 1`` (64 connections, 2 threads by default) with
a generated Lua script, and parses requests/s, p50/p99 (wrk's ``--latency`` block) and
p99.9 (the script's ``done()`` hook prints ``latency:percentile(99.9)``).

A :class:`Target` says what each request is: a fixed request, or one whose path and body
name a member ``m<i>`` (``i`` uniform in ``[0, members)``, a fresh draw per request) and a
score. ``rate`` paces the requests with wrk's ``delay()`` hook to about that many per
second in all (a per-thread schedule on the monotonic clock, through LuaJIT's ffi). It
stays closed-loop: a request waits for a free connection, and its latency is timed from
when it is sent, so when the server falls behind the latencies under-report the queueing
(coordinated omission). It shows latency at a load below saturation, not an open-loop
measurement.

Each run also reads the server's CPU time (:func:`process_cpu_seconds`), so that a run on a
core shared with other work can be judged (:attr:`Sample.per_core`). :func:`measure`
starts a server, warms it up, runs wrk ``runs`` times and returns the medians
(:func:`median_sample`).

Needs Debian's ``wrk`` (built on LuaJIT) and util-linux's ``taskset``.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

__all__ = [
    "HOST",
    "LANE_THREAD",
    "Sample",
    "Server",
    "Target",
    "by_thread",
    "free_port",
    "lua_script",
    "measure",
    "median_sample",
    "parse_wrk",
    "process_cpu_seconds",
    "process_stats",
    "run_wrk",
    "thread_cpu_seconds",
    "write_results",
]

HOST = "127.0.0.1"
SERVER_CPU = "0"
CLIENT_CPU = "1"
LANE_THREAD = "ranked-lane"
"""The name of the journal's native lane thread (``comm``)."""
MARK = "ranked-wrk"
"""The first word of the line the ``done()`` hook prints."""


def free_port() -> int:
    """A loopback TCP port free at the time of the call."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


_TICK = os.sysconf("SC_CLK_TCK")


def process_stats() -> Iterator[tuple[int, list[str]]]:
    """Every process's pid and its ``/proc/<pid>/stat`` fields after ``pid (comm)``:
    state, ppid, pgrp, ... utime, stime (fields 3.. of proc(5)). A process gone is
    skipped."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        yield int(entry.name), stat[stat.rindex(")") + 2 :].split()


def process_cpu_seconds(*, groups: Iterable[int] = (), pids: Iterable[int] = ()) -> float:
    """User + system CPU seconds used so far by every process in the process ``groups``
    and by the ``pids`` (all their threads; Linux ``/proc``)."""
    wanted_groups, wanted = set(groups), set(pids)
    ticks = 0
    for pid, rest in process_stats():
        if pid in wanted or int(rest[2]) in wanted_groups:
            ticks += int(rest[11]) + int(rest[12])
    return ticks / _TICK


def thread_cpu_seconds(pid: int) -> dict[int, tuple[str, float]]:
    """Each thread of process ``pid``: its name (``comm``) and the user + system CPU
    seconds it used so far (Linux ``/proc``). A thread gone is skipped."""
    found: dict[int, tuple[str, float]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(f"/proc/{pid}/task"):
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            rest = stat[stat.rindex(")") + 2 :].split()
            found[int(entry.name)] = (name, (int(rest[11]) + int(rest[12])) / _TICK)
    return found


def _need(tool: str, package: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise SystemExit(f"{tool} not found on PATH (Debian package {package!r})")
    return found


@dataclass(frozen=True, slots=True)
class Target:
    """What each request is.

    ``path`` and ``body`` may hold ``{member}`` (``m<i>``, ``i`` drawn uniformly from
    ``[0, members)`` per request) and ``{score}`` (an int drawn from ``[0, 1_000_000]``).
    Without placeholders wrk sends one fixed request (its cheapest mode). ``headers``
    (name, value) go with every request (``Authorization: Bearer <key>``); a body gets
    ``Content-Type: application/json`` unless they name another.
    """

    path: str
    method: str = "GET"
    body: str | None = None
    members: int = 0
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def dynamic(self) -> bool:
        text = self.path + (self.body or "")
        return "{member}" in text or "{score}" in text


@dataclass(frozen=True, slots=True)
class Sample:
    """One wrk run (latencies in milliseconds)."""

    requests_per_s: float
    p50_ms: float
    p99_ms: float
    p999_ms: float
    requests: int
    socket_errors: int
    """Connect, read, write errors and timeouts."""
    status_errors: int
    """Responses other than 2xx/3xx."""
    client_cpu: float
    """wrk's CPU time over the run's wall time: near 1.0, the client is the limit."""
    server_cpu: float = 0.0
    """The server's CPU time over the run's wall time (0.0: not measured). Below 1.0 at
    saturation: other work on the machine took part of the server's core."""
    main_us: float = 0.0
    """CPU µs per request of the server's main thread, which runs the Python application
    (0.0: not measured)."""
    lane_us: float = 0.0
    """CPU µs per request of the journal's native lane thread (``ranked-lane``)."""
    other_us: float = 0.0
    """CPU µs per request of the server's other threads (the HTTP server's own I/O
    threads, the journal's Python committer)."""

    @property
    def per_core(self) -> float:
        """Requests per second of server CPU time (0.0 when not measured): the rate one
        dedicated core would give, little moved by other work on the machine."""
        return self.requests_per_s / self.server_cpu if self.server_cpu > 0 else 0.0


def _lua_string(text: str) -> str:
    """``text`` as a Lua string literal (ASCII; control characters as ``\\ddd``)."""
    out = []
    for char in text:
        code = ord(char)
        if code > 126:
            raise ValueError(f"non-ASCII character in a request template: {char!r}")
        if char in '\\"':
            out.append("\\" + char)
        elif code < 32:
            out.append(f"\\{code:03d}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _lua_concat(template: str) -> str:
    """A Lua expression building ``template`` from the locals ``m`` and ``s``."""
    parts = []
    for piece in re.split(r"(\{member\}|\{score\})", template):
        if piece == "{member}":
            parts.append("m")
        elif piece == "{score}":
            parts.append("s")
        elif piece:
            parts.append(_lua_string(piece))
    return " .. ".join(parts) or '""'


_DONE = f"""
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("{MARK} %d %d %d %d %d %d\\n",
    summary.requests, summary.duration, latency:percentile(99.9),
    e.connect + e.read + e.write + e.timeout, e.status, latency.max))
end
"""

_PACING = """
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long sec; long nsec; } ranked_timespec;
int clock_gettime(int clock, ranked_timespec *now);
]]
local clock = ffi.new("ranked_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, clock)  -- CLOCK_MONOTONIC
  return tonumber(clock.sec) * 1000 + tonumber(clock.nsec) / 1e6
end
local interval_ms = %r
local due = nil
-- Each thread sends on its own schedule: the next free slot, whichever connection asks.
function delay()
  local now = now_ms()
  if due == nil then due = now end
  local wait = due - now
  due = due + interval_ms
  if wait < 0 then return 0 end
  return wait
end
"""


def lua_script(target: Target, *, threads: int, rate: float | None = None) -> str:
    """The wrk script for ``target``: method, headers, body, the per-request member when
    the target has one, pacing when ``rate`` is set, and the ``done()`` hook."""
    lines = [f"wrk.method = {_lua_string(target.method)}"]
    if target.body is not None:
        lines.append('wrk.headers["Content-Type"] = "application/json"')
    for name, value in target.headers:
        lines.append(f"wrk.headers[{_lua_string(name)}] = {_lua_string(value)}")
    if target.body is not None and not target.dynamic:
        lines.append(f"wrk.body = {_lua_string(target.body)}")
    if target.dynamic:
        if target.members < 1 and "{member}" in target.path + (target.body or ""):
            raise ValueError("a target naming {member} needs members >= 1")
        body = "nil" if target.body is None else _lua_concat(target.body)
        lines += [
            "local started = 0",
            "function setup(thread)",
            "  thread:set('index', started)",
            "  started = started + 1",
            "end",
            "function init(args)",
            "  math.randomseed(7919 * (index or 0) + 1)",
            "end",
            "function request()",
            f"  local m = 'm' .. math.random(0, {max(target.members, 1) - 1})",
            "  local s = math.random(0, 1000000)",
            f"  return wrk.format(nil, {_lua_concat(target.path)}, nil, {body})",
            "end",
        ]
    if rate is not None:
        if rate <= 0:
            raise ValueError("rate must be > 0")
        lines.append(_PACING % (threads * 1000.0 / rate))
    lines.append(_DONE)
    return "\n".join(lines) + "\n"


_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}


def _ms(value: str) -> float:
    found = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", value)
    if found is None:
        raise ValueError(f"not a wrk duration: {value!r}")
    return float(found.group(1)) * _UNITS_MS[found.group(2)]


def parse_wrk(output: str, client_cpu: float = 0.0, server_cpu: float = 0.0) -> Sample:
    """A :class:`Sample` from wrk's output (run with ``--latency`` and the ``done()``
    hook of :func:`lua_script`)."""
    rps = re.search(r"^Requests/sec:\s+([\d.]+)", output, re.MULTILINE)
    p50 = re.search(r"^\s+50%\s+(\S+)", output, re.MULTILINE)
    p99 = re.search(r"^\s+99%\s+(\S+)", output, re.MULTILINE)
    hook = re.search(rf"^{MARK} (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)$", output, re.MULTILINE)
    if rps is None or p50 is None or p99 is None or hook is None:
        raise ValueError(f"unexpected wrk output:\n{output}")
    requests, _duration_us, p999_us, socket_errors, status_errors, _max = map(int, hook.groups())
    return Sample(
        requests_per_s=float(rps.group(1)),
        p50_ms=_ms(p50.group(1)),
        p99_ms=_ms(p99.group(1)),
        p999_ms=p999_us / 1e3,
        requests=requests,
        socket_errors=socket_errors,
        status_errors=status_errors,
        client_cpu=client_cpu,
        server_cpu=server_cpu,
    )


def run_wrk(
    url: str,
    target: Target,
    *,
    duration: float,
    connections: int = 64,
    threads: int = 2,
    rate: float | None = None,
    timeout_s: float = 5.0,
    server_cpu: Callable[[], float] | None = None,
) -> Sample:
    """One wrk run against ``url`` (``http://host:port``) for ``duration`` seconds, pinned
    to CPU 1. ``server_cpu`` (e.g. :meth:`Server.cpu_seconds`), read before and after,
    fills :attr:`Sample.server_cpu`. Raises ``RuntimeError`` when wrk fails."""
    wrk = _need("wrk", "wrk")
    taskset = _need("taskset", "util-linux")
    with tempfile.TemporaryDirectory(prefix="ranked-wrk-") as tmp:
        script = Path(tmp) / "load.lua"
        script.write_text(lua_script(target, threads=threads, rate=rate))
        argv = [taskset, "-c", CLIENT_CPU, wrk, f"-t{threads}", f"-c{connections}"]
        argv += [
            f"-d{max(1, round(duration))}s",
            f"--timeout={max(1, round(timeout_s))}s",
            "--latency",
        ]
        argv += ["-s", str(script), url + target.path.split("{", 1)[0]]
        served = 0.0 if server_cpu is None else server_cpu()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60)
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        served = 0.0 if server_cpu is None else server_cpu() - served
    if done.returncode != 0:
        raise RuntimeError(
            f"wrk exited {done.returncode}: {done.stderr.strip()} {done.stdout.strip()}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return parse_wrk(done.stdout, client_cpu=cpu / wall, server_cpu=served / wall)


def by_thread(
    sample: Sample,
    pid: int,
    before: dict[int, tuple[str, float]],
    after: dict[int, tuple[str, float]],
) -> Sample:
    """``sample`` with the server process's CPU per request split by thread: its main
    thread (the Python application), the journal's lane thread, and the others."""
    if not sample.requests:
        return sample
    main = lane = other = 0.0
    for tid, (name, seconds) in after.items():
        used = seconds - before.get(tid, (name, 0.0))[1]
        if tid == pid:
            main += used
        elif name == LANE_THREAD:
            lane += used
        else:
            other += used
    scale = 1e6 / sample.requests
    return replace(sample, main_us=main * scale, lane_us=lane * scale, other_us=other * scale)


def median_sample(samples: Sequence[Sample]) -> Sample:
    """Each field's median over ``samples`` (fields taken apart: the median p99 need not
    come from the run with the median requests/s, and ``per_core`` of the result is the
    ratio of two medians)."""
    if not samples:
        raise ValueError("no samples")
    values = {
        f.name: statistics.median(getattr(each, f.name) for each in samples) for f in fields(Sample)
    }
    return Sample(
        requests_per_s=float(values["requests_per_s"]),
        p50_ms=float(values["p50_ms"]),
        p99_ms=float(values["p99_ms"]),
        p999_ms=float(values["p999_ms"]),
        requests=int(values["requests"]),
        socket_errors=int(values["socket_errors"]),
        status_errors=int(values["status_errors"]),
        client_cpu=float(values["client_cpu"]),
        server_cpu=float(values["server_cpu"]),
        main_us=float(values["main_us"]),
        lane_us=float(values["lane_us"]),
        other_us=float(values["other_us"]),
    )


class Server:
    """``with Server(["uvicorn", ..., "--port", "{port}"], ready="/ping") as server:``.

    Starts the command pinned to CPU 0 in a process group of its own (its workers, if it
    forks any, inherit the pinning), waits until ``GET ready`` answers below 500, and
    stops the whole group on exit (SIGTERM, then SIGKILL after 10 s). The server's output
    goes to a log file shown when it fails to start.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        ready: str = "/",
        env: Mapping[str, str] | None = None,
        start_timeout_s: float = 180.0,
        cwd: str | None = None,
    ) -> None:
        self.command = list(command)
        self.ready = ready
        self.env = dict(os.environ if env is None else env)
        self.start_timeout_s = start_timeout_s
        self.cwd = cwd
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile(prefix="ranked-server-")  # noqa: SIM115 - closed in __exit__
        self.startup_s = 0.0
        """Seconds from the start to the first good answer."""

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def __enter__(self) -> Server:
        taskset = _need("taskset", "util-linux")
        for _ in range(3):  # a port taken between the probe and the bind: try another
            self.port = free_port()
            argv = [part.replace("{port}", str(self.port)) for part in self.command]
            started = time.monotonic()
            self.process = subprocess.Popen(
                [taskset, "-c", SERVER_CPU, *argv],
                env=self.env,
                cwd=self.cwd,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            if self._wait_ready(started):
                self.startup_s = time.monotonic() - started
                return self
            self._stop()
        raise RuntimeError(f"server did not start: {' '.join(self.command)}\n{self.log_tail()}")

    def log_tail(self, size: int = 3000) -> str:
        """The last ``size`` characters the server printed."""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-size:]

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by the server's process group."""
        return 0.0 if self.process is None else process_cpu_seconds(groups=[self.process.pid])

    def _wait_ready(self, started: float) -> bool:
        assert self.process is not None
        while time.monotonic() - started < self.start_timeout_s:
            if self.process.poll() is not None:
                return False
            try:
                conn = http.client.HTTPConnection(HOST, self.port, timeout=5)
                try:
                    conn.request("GET", self.ready)
                    if conn.getresponse().status < 500:
                        return True
                finally:
                    conn.close()
            except OSError:
                pass
            time.sleep(0.1)
        return False

    def _stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        except ProcessLookupError:
            process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):  # a worker that outlived the leader
            os.killpg(process.pid, signal.SIGKILL)

    def __exit__(self, *exc: object) -> None:
        self._stop()
        self._log.close()


def measure(
    command: Sequence[str],
    target: Target,
    *,
    ready: str,
    runs: int = 3,
    duration: float = 8.0,
    warmup: float = 2.0,
    rate: float | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Sample:
    """Start ``command`` (see :class:`Server`), warm it up for ``warmup`` seconds, run wrk
    ``runs`` times for ``duration`` seconds each, stop it; the medians."""
    with Server(command, ready=ready, env=env, cwd=cwd) as server:
        if warmup > 0:
            run_wrk(server.url, target, duration=warmup, rate=rate)
        samples = [
            run_wrk(server.url, target, duration=duration, rate=rate, server_cpu=server.cpu_seconds)
            for _ in range(runs)
        ]
    return median_sample(samples)


def write_results(path: Path, text: str, kept_from: str = "## Conclusion") -> None:
    """Write a results file, keeping its hand-written part (from ``kept_from`` on)."""
    kept = ""
    if path.exists():
        old = path.read_text()
        if kept_from in old:
            kept = "\n" + old[old.index(kept_from) :]
    path.write_text(text + kept)
