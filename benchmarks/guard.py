"""Submissions through ``ranked serve`` with the full write guard on against the guard off.

Run from the repository root (needs Debian's ``wrk`` and redis-server)::

    python benchmarks/guard.py              # 6 s cells, 3 rounds
    python benchmarks/guard.py --quick      # smoke run: 2 s cells, 1 round
    python benchmarks/guard.py --markdown   # also write RESULTS-guard.md
    python benchmarks/guard.py --only "(default)"   # the deployments so named only
    python benchmarks/guard.py --only "(default)|diagnostic"   # either

Each deployment is one ``ranked serve`` (pinned to CPU 0, wrk on CPU 1, 64 connections,
2 threads; ``benchmarks/_wrk.py``) with two boards: ``plain`` (no guard) and ``guarded``
(the full guard of issue 19: rate limits per member and per IP (GCRA), bounds, velocity
cap, HMAC-SHA256 + clock skew + nonce, z-score; the limits set high enough that nothing is
refused, so every layer runs and every write is applied; accepted verdicts journaled, in
the board's own submission events).
The unguarded board is driven with a write key and ``{"member", "score"}`` bodies; the
guarded one with a read key (a client: every layer applies) and signed bodies, generated
beforehand (HMAC needs a computation per request, and each nonce is accepted once): one
body per line in a file each wrk thread reads in ``init()``. Members ``m0`` .. ``m99999``
and scores are random in both. Rounds alternate plain and guarded; each figure is the
median over the rounds.

Deployments: the embedded default (``memory://``, SQLite journal, durability ``always``,
the default), the same with ``audit_accepted`` off (rejections, holds and moderation are
still journaled), the same with durability ``none`` (no fsync: the guard's CPU cost shows
most), and Redis (a redis-server on CPU 0 too, SQLite journal, durability ``none``).
Then two rows on ``ranked serve``'s bare server stack (the HTTP floor, and the library's
guard without the service), and two diagnostic rows: the default with the guard's one
backend step taken out (``stack_apps/guard_without_step.py``: what the guard costs
without its stateful layers), and with that step answering a real verdict at once
(``stack_apps/guard_instant_step.py``: the same with the verdict's handling, its note's
z-score included).

The per-IP limit is 1,000,000 a second, the most a GCRA policy takes (a faster one's
interval, under a microsecond, would round away against today's instants in microseconds).

Round trips: on Redis, ``INFO commandstats`` before and after 500 sequential submissions
to each board gives the commands each submission sends.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path[0] = str(ROOT)
elif str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._servers import BenchRedis  # noqa: E402 - path set above
from benchmarks._wrk import (  # noqa: E402
    CLIENT_CPU,
    HOST,
    Sample,
    Server,
    Target,
    by_thread,
    median_sample,
    parse_wrk,
    run_wrk,
    thread_cpu_seconds,
    write_results,
)
from benchmarks.engine import machine_info  # noqa: E402
from benchmarks.stack_apps._board import CONSTANT_PATH, LIMITED_PATH  # noqa: E402
from ranked.guard import sign  # noqa: E402
from ranked.service.keys import KeyStore, Scope  # noqa: E402

RESULTS = HERE / "RESULTS-guard.md"
GUARDED_PATH = "/v1/boards/guarded/scores"
FLOOR = "the HTTP floor: bare ASGI on ranked serve's server"
"""The guard's HTTP floor (:func:`bench_stack`): a row of the table like a deployment."""
BARE = "the library's guard on the bare stack: naive submits, journal always"
"""The guard without the service (:func:`bench_stack`)."""
WITHOUT_STEP = "diagnostic: the default with the guard's stateful step taken out"
"""``ranked serve`` with the guard's one backend step not run: what the rest costs."""
INSTANT_STEP = "diagnostic: the default with the guard's stateful step answering at once"
"""``ranked serve`` with the guard's step answering a real verdict at once: what the
stateful layers' own cost is on top of it."""
SECRET = bytes(range(32))
MEMBERS = 100_000
CONNECTIONS, THREADS = 64, 2
ROUND_TRIP_SUBMITS = 500
TARGET_RATIO = 1.3

GUARD = {
    "min_score": 0,
    "max_score": 10_000_000,
    "secrets": [{"key": SECRET.hex()}],
    "skew": 3600,
    "player_limit": {"limit": 1_000_000, "window": 1, "algorithm": "gcra"},
    "ip_limit": {"limit": 1_000_000, "window": 1, "algorithm": "gcra"},
    "max_step": 5_000_000,
    "max_change": 5_000_000,
    "change_span": 60,
    "z_threshold": 1_000_000,
    "z_min_history": 2,
}
"""The full guard: every layer on, every limit high enough that nothing is refused."""


@dataclass(frozen=True, slots=True)
class Deployment:
    name: str
    flags: tuple[str, ...]
    redis: bool = False
    audit_accepted: bool = True
    floor: bool = False
    """The bare stack instead of ``ranked serve``: the guard's HTTP floor."""
    bare: bool = False
    """The bare stack instead of ``ranked serve``: the library's guard without the service."""
    without_step: bool = False
    """``ranked serve`` with the guard's stateful step taken out
    (``stack_apps/guard_without_step.py``): a diagnostic row."""
    instant_step: bool = False
    """``ranked serve`` with the guard's stateful step answering at once
    (``stack_apps/guard_instant_step.py``): a diagnostic row."""

    @property
    def program(self) -> str:
        """The module ``ranked serve`` runs as."""
        if self.without_step:
            return "benchmarks.stack_apps.guard_without_step"
        if self.instant_step:
            return "benchmarks.stack_apps.guard_instant_step"
        return "ranked"


def _request(port: int, method: str, path: str, key: str, body: object = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        data = None if body is None else json.dumps(body)
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        conn.request(method, path, body=data, headers=headers)
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def _signed_bodies(path: Path, count: int, seed: int) -> None:
    """``count`` signed submissions to ``guarded``, one JSON body per line."""
    rng = random.Random(seed)
    now = int(time.time() * 1000)
    with path.open("w") as out:
        for i in range(count):
            member, score = f"m{rng.randrange(MEMBERS)}", rng.randrange(1_000_000)
            nonce = f"n{seed:04d}-{i:09d}"
            signature = sign(SECRET, "guarded", member, score, now, nonce)
            out.write(
                json.dumps(
                    {
                        "member": member,
                        "score": score,
                        "client_time": now,
                        "nonce": nonce,
                        "signature": signature,
                    },
                    separators=(",", ":"),
                )
                + "\n"
            )


_BODIES_LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %(key)s"
local started = 0
function setup(thread)
  thread:set("index", started)
  started = started + 1
end
local bodies, at = {}, 0
function init(args)
  local n = 0
  for line in io.lines("%(file)s") do
    if n %% %(threads)d == (index or 0) then bodies[#bodies + 1] = line end
    n = n + 1
  end
end
function request()
  at = at + 1
  if at > #bodies then at = 1 end
  return wrk.format(nil, "%(path)s", nil, bodies[at])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("ranked-wrk %%d %%d %%d %%d %%d %%d\\n",
    summary.requests, summary.duration, latency:percentile(99.9),
    e.connect + e.read + e.write + e.timeout, e.status, latency.max))
end
"""


def _run_signed(
    url: str, key: str, bodies: Path, duration: float, server: Server, path: str = GUARDED_PATH
) -> Sample:
    import resource
    import subprocess

    with tempfile.TemporaryDirectory(prefix="ranked-guard-wrk-") as tmp:
        script = Path(tmp) / "signed.lua"
        values = {"key": key, "file": bodies, "threads": THREADS, "path": path}
        script.write_text(_BODIES_LUA % values)
        argv = ["taskset", "-c", CLIENT_CPU, "wrk", f"-t{THREADS}", f"-c{CONNECTIONS}"]
        argv += [f"-d{max(1, round(duration))}s", "--timeout=5s", "--latency", "-s", str(script)]
        argv.append(url + path)
        served = server.cpu_seconds()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 120)
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        served = server.cpu_seconds() - served
    if done.returncode != 0:
        raise RuntimeError(f"wrk exited {done.returncode}: {done.stderr} {done.stdout}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return parse_wrk(done.stdout, client_cpu=cpu / wall, server_cpu=served / wall)


def _commandstats(port: int) -> dict[str, int]:
    import redis

    client = redis.Redis(host=HOST, port=port)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def _round_trips(redis_port: int, port: int, keys: dict[str, str]) -> dict[str, dict[str, float]]:
    """Redis commands per submission, per board (INFO commandstats deltas)."""
    found: dict[str, dict[str, float]] = {}
    rng = random.Random(5)
    now = int(time.time() * 1000)
    for board in ("plain", "guarded"):
        before = _commandstats(redis_port)
        for i in range(ROUND_TRIP_SUBMITS):
            member, score = f"r{rng.randrange(1000)}", rng.randrange(1_000_000)
            body: dict[str, object] = {"member": member, "score": score}
            key = keys["write"]
            if board == "guarded":
                nonce = f"rt-{i:08d}"
                body.update(client_time=now, nonce=nonce)
                body["signature"] = sign(SECRET, board, member, score, now, nonce)
                key = keys["read"]
            status, text = _request(port, "POST", f"/v1/boards/{board}/scores", key, body)
            if status != 200:
                raise RuntimeError(f"{board}: {status} {text[:300]!r}")
        after = _commandstats(redis_port)
        after.pop("info", None)
        found[board] = {
            name: (calls - before.get(name, 0)) / ROUND_TRIP_SUBMITS
            for name, calls in sorted(after.items())
            if calls != before.get(name, 0)
        }
    return found


def _serve(data_dir: Path, flags: tuple[str, ...], program: str = "ranked") -> Server:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT / "src"), str(ROOT)))}
    command = [sys.executable, "-m", program, "serve", "--data-dir", str(data_dir)]
    command += ["--host", HOST, "--port", "{port}", "--log-level", "warning", *flags]
    return Server(command, ready="/readyz", env=env)


@dataclass(frozen=True, slots=True)
class Result:
    off: Sample
    on: Sample
    costs: list[float]
    """Each round's cost (off/on requests per second)."""
    trips: dict[str, dict[str, float]] | None

    @property
    def cost(self) -> float:
        return self.off.requests_per_s / self.on.requests_per_s

    @property
    def cost_per_core(self) -> float:
        return self.off.per_core / self.on.per_core if self.on.per_core else 0.0


def _unguarded(path: str, key: str | None) -> Target:
    """The unguarded submissions to ``path``: ``{"member", "score"}``, random members."""
    headers = () if key is None else (("Authorization", f"Bearer {key}"),)
    return Target(path, "POST", '{"member": "{member}", "score": {score}}', MEMBERS, headers)


def _alternate(
    server: Server,
    off: Callable[[float], Sample],
    on: Callable[[Path, float], Sample],
    files: list[Path],
    duration: float,
    warmup: float,
    rounds: int,
) -> dict[str, list[Sample]]:
    """A warm-up of each, then ``rounds`` of off then on (``on`` reads ``files[i + 1]``),
    each sample with its CPU split by thread."""
    assert server.process is not None
    pid = server.process.pid
    off(warmup)
    on(files[0], warmup)
    samples: dict[str, list[Sample]] = {"off": [], "on": []}
    for index in range(rounds):
        before = thread_cpu_seconds(pid)
        sample = off(duration)
        samples["off"].append(by_thread(sample, pid, before, thread_cpu_seconds(pid)))
        before = thread_cpu_seconds(pid)
        sample = on(files[index + 1], duration)
        samples["on"].append(by_thread(sample, pid, before, thread_cpu_seconds(pid)))
    return samples


def _body_files(directory: Path, rounds: int, duration: float, warmup: float) -> list[Path]:
    per_run = int(12_000 * (duration + warmup)) + 1000
    files = []
    for index in range(rounds + 1):
        path = directory / f"bodies-{index}.jsonl"
        _signed_bodies(path, per_run, index)
        files.append(path)
    return files


def _result(samples: dict[str, list[Sample]], trips: dict[str, dict[str, float]] | None) -> Result:
    return Result(
        median_sample(samples["off"]),
        median_sample(samples["on"]),
        [
            a.requests_per_s / b.requests_per_s
            for a, b in zip(samples["off"], samples["on"], strict=True)
        ],
        trips,
    )


def bench_stack(deployment: Deployment, duration: float, warmup: float, rounds: int) -> Result:
    """A row on ``ranked serve``'s bare server stack, without the service.

    - The HTTP floor (``deployment.floor``): the unguarded body to a constant ``POST``
      (off) against the signed bodies to a constant ``POST`` that answers with the
      RateLimit headers of a guarded board (on). Nothing is decoded, checked or written:
      what the larger body and the headers cost the server alone.
    - The library's guard (``deployment.bare``): the naive durable submit (off) against
      the naive guarded submit (on), hand-written ASGI over the library's boards on one
      journal (``always``), the guarded one through ``AsyncGuard`` with :data:`GUARD`:
      what the guard costs with nothing of the service around it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    command = [sys.executable, "-m", "benchmarks.stack_apps.embedded", "{port}", "--members", "0"]
    with tempfile.TemporaryDirectory(prefix="ranked-guard-stack-") as tmp:
        files = _body_files(Path(tmp), rounds, duration, warmup)
        off_path, on_path = CONSTANT_PATH, LIMITED_PATH
        if not deployment.floor:
            data = Path(tmp) / "data"
            data.mkdir()
            command += ["--data", str(data), "--durability", "always", "--guard", json.dumps(GUARD)]
            off_path, on_path = "/v1/boards/plain/scores", GUARDED_PATH
        plain = _unguarded(off_path, None)
        with Server(command, ready=CONSTANT_PATH, env=env) as server:
            samples = _alternate(
                server,
                lambda seconds: run_wrk(
                    server.url, plain, duration=seconds, server_cpu=server.cpu_seconds
                ),
                lambda bodies, seconds: _run_signed(
                    server.url, "-", bodies, seconds, server, on_path
                ),
                files,
                duration,
                warmup,
                rounds,
            )
    return _result(samples, None)


def bench(deployment: Deployment, duration: float, warmup: float, rounds: int) -> Result:
    if deployment.floor or deployment.bare:
        return bench_stack(deployment, duration, warmup, rounds)
    with tempfile.TemporaryDirectory(prefix="ranked-guard-bench-") as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        with KeyStore(data_dir) as store:
            keys = {
                "admin": store.create(Scope.ADMIN)[1],
                "write": store.create(Scope.WRITE)[1],
                "read": store.create(Scope.READ)[1],
            }
        redis_server = BenchRedis() if deployment.redis else None
        flags = deployment.flags
        if redis_server is not None:
            redis_server.__enter__()
            flags = (*flags, "--backend", f"redis://{HOST}:{redis_server.port}/0")
        try:
            with _serve(data_dir, flags, deployment.program) as server:
                port = server.port
                for board in ("plain", "guarded"):
                    status, text = _request(port, "PUT", f"/v1/boards/{board}", keys["admin"], {})
                    assert status in (200, 201), text
                guard = {**GUARD, "audit_accepted": deployment.audit_accepted}
                status, text = _request(
                    port, "PUT", "/v1/boards/guarded/guard", keys["admin"], guard
                )
                assert status == 201, text
                plain = _unguarded("/v1/boards/plain/scores", keys["write"])
                files = _body_files(Path(tmp), rounds, duration, warmup)
                samples = _alternate(
                    server,
                    lambda seconds: run_wrk(
                        server.url, plain, duration=seconds, server_cpu=server.cpu_seconds
                    ),
                    lambda bodies, seconds: _run_signed(
                        server.url, keys["read"], bodies, seconds, server
                    ),
                    files,
                    duration,
                    warmup,
                    rounds,
                )
                trips = (
                    _round_trips(redis_server.port, port, keys)
                    if redis_server is not None
                    else None
                )
        finally:
            if redis_server is not None:
                redis_server.__exit__(None, None, None)
    return _result(samples, trips)


DEPLOYMENTS = (
    Deployment("embedded, journal always (default)", ()),
    Deployment(
        "embedded, journal always, accepted verdicts not journaled", (), audit_accepted=False
    ),
    Deployment("embedded, journal none", ("--durability", "none")),
    Deployment("Redis, journal none", ("--durability", "none"), redis=True),
    Deployment(FLOOR, (), floor=True),
    Deployment(BARE, (), bare=True),
    Deployment(WITHOUT_STEP, (), without_step=True),
    Deployment(INSTANT_STEP, (), instant_step=True),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=6.0)
    parser.add_argument(
        "--only",
        default="",
        help="run the deployments whose name contains this text (texts separated by |: any)",
    )
    args = parser.parse_args()
    duration, warmup, rounds = (2.0, 1.0, 1) if args.quick else (args.duration, 2.0, args.rounds)
    rows: list[tuple[str, Result]] = []
    trips = None
    for deployment in DEPLOYMENTS:
        if not any(text in deployment.name for text in args.only.split("|")):
            continue
        found = bench(deployment, duration, warmup, rounds)
        rows.append((deployment.name, found))
        trips = found.trips or trips
        off, on = found.off, found.on
        print(
            f"{deployment.name}: off {off.requests_per_s:.0f}/s, on {on.requests_per_s:.0f}/s,"
            f" cost {found.cost:.2f}x (per core {found.cost_per_core:.2f}x), p99"
            f" {off.p99_ms:.1f} / {on.p99_ms:.1f} ms,"
            f" errors {off.status_errors}/{on.status_errors}; CPU µs a request (main, lane,"
            f" other threads): off {off.main_us:.1f}, {off.lane_us:.1f}, {off.other_us:.1f};"
            f" on {on.main_us:.1f}, {on.lane_us:.1f}, {on.other_us:.1f}",
            flush=True,
        )
    if trips is not None:
        for board, calls in trips.items():
            print(f"Redis commands per submission, {board}: {calls}")
    if args.markdown:
        write_results(RESULTS, _markdown(rows, trips, duration, rounds, _redis_version()))


def _redis_version() -> str:
    return BenchRedis().version()


def _markdown(
    rows: list[tuple[str, Result]],
    trips: dict[str, dict[str, float]] | None,
    duration: float,
    rounds: int,
    redis_version: str,
) -> str:
    lines = [
        "# The write guard through the service: guard on against guard off",
        "",
        "`python benchmarks/guard.py --markdown` "
        f"({rounds} rounds of {duration:g} s cells, alternating; medians).",
        "",
        "Machine:",
        "",
        machine_info(redis_version),
        "",
        "| deployment | guard off (req/s) | guard on (req/s) | cost (off/on)"
        " | per server core (off/on) | p99 off / on (ms) | rounds' costs |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, found in rows:
        off, on = found.off, found.on
        costs = ", ".join(f"{r:.2f}" for r in found.costs)
        lines.append(
            f"| {name} | {off.requests_per_s:,.0f} | {on.requests_per_s:,.0f} | {found.cost:.2f}x"
            f" | {found.cost_per_core:.2f}x | {off.p99_ms:.1f} / {on.p99_ms:.1f} | {costs} |"
        )
    lines += ["", f"Target: cost <= {TARGET_RATIO}x on the embedded default.", ""]
    lines += [
        "CPU µs per submission by thread of the server's process (Redis's not in it):",
        "",
        "| deployment | guard | main thread (Python) | journal lane | other threads (HTTP I/O,"
        " ...) | all |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, found in rows:
        for label, each in (("off", found.off), ("on", found.on)):
            total = each.main_us + each.lane_us + each.other_us
            lines.append(
                f"| {name} | {label} | {each.main_us:.1f} | {each.lane_us:.1f} | "
                f"{each.other_us:.1f} | {total:.1f} |"
            )
    lines.append("")
    if trips is not None:
        lines += [
            f"Redis commands per submission ({ROUND_TRIP_SUBMITS} sequential submissions per"
            " board, `INFO commandstats` deltas):",
            "",
            "| board | commands per submission |",
            "|---|---|",
        ]
        for board, calls in trips.items():
            text = ", ".join(f"{name} {value:g}" for name, value in calls.items())
            lines.append(f"| {board} | {text} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
