"""``ranked serve`` under load: each deployment against the seed-style baseline and the floor.

Run from the repository root (after ``pip install -e .[bench]``; needs Debian's ``wrk``,
redis-server and PostgreSQL's server)::

    python benchmarks/service.py             # 1,000,000 members, 8 s per cell, 3 rounds
    python benchmarks/service.py --quick     # smoke run: 100,000 members, 2 s cells (CI)
    python benchmarks/service.py --markdown  # also write RESULTS-service.md

The servers, each alone on CPU 0 with whatever it talks to (``taskset``; wrk on CPU 1,
64 connections, 2 threads; ``benchmarks/_wrk.py``):

- ``ranked serve`` on the embedded default (``memory://``, SQLite journal) with durability
  ``always``, ``batch`` and ``none``. The data directory (a board ``arena`` of ``members``
  members ``m0`` .. ``m<n-1>``, its snapshot, and the keys) is built once per run with the
  library, and each server start gets a fresh copy of it, so every start restores the same
  snapshot;
- ``ranked serve`` on Redis with a PostgreSQL journal (durability ``always``), the board
  loaded once through the library (``submit_many``, the fastest correct way measured);
- the seed-style baseline (``benchmarks/baseline_service.py``: FastAPI + redis-py async
  on a real redis-server, ZADD then ZREVRANK; its submit sets the score, it does not keep
  the best);
- the floor: ``GET /healthz`` of the embedded ``always`` server (same process and stack:
  router, metrics, granian embedded), and for reference the raw-ASGI constant app of
  ``benchmarks/stack_apps`` under uvicorn (uvloop, httptools);
- the bare endpoints on ``ranked serve``'s own server stack
  (``benchmarks/stack_apps/embedded.py``): a constant ``GET``, a ``POST`` that reads its
  body, the naive rank read (the same board read by hand-written ASGI with no
  authentication, validation or metrics, the least a Python endpoint does on this stack)
  and the naive durable submit (the same submission written by hand-written ASGI through
  the library to the same data directory's board and journal, durability ``always``, and
  on a second start ``batch``).

Endpoints: ``rank read`` (``GET /v1/boards/arena/members/m<i>``, a read key) and ``submit``
(``POST /v1/boards/arena/scores`` ``{"member": "m<i>", "score": s}``, a write key; the
board keeps each member's best), ``i`` and ``s`` random per request; on the ``always``
server also ``rank read, 1,000 members`` (``i`` below 1,000: the same read, its nodes in
the CPU's caches, beside ``rank read`` what the board's memory latency costs); each at 64
connections (saturated) and paced to ``--rate`` requests/s (latency below saturation).
Rounds go over every server in turn; each figure is the median over the rounds. Then the
cold start: seconds from starting ``ranked serve`` on a fresh copy of the data directory
to ``/readyz`` answering 200 (median of ``--cold`` starts).

``RANKED_SERVICE_BENCH_PROFILE=DIR`` runs every ``ranked serve`` of the benchmark under
cProfile and leaves one ``.prof`` file per server start in ``DIR`` (the figures are then
cProfile's, not the service's).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    # Run as a script: the repository root replaces this folder on the path, so that
    # benchmarks/queue.py does not shadow the standard library's queue.
    sys.path[0] = str(ROOT)
elif str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import baseline_service  # noqa: E402 - path set above
from benchmarks._servers import BenchPostgres, BenchRedis  # noqa: E402
from benchmarks._wrk import (  # noqa: E402
    HOST,
    SERVER_CPU,
    Sample,
    Server,
    Target,
    by_thread,
    free_port,
    median_sample,
    process_cpu_seconds,
    process_stats,
    run_wrk,
    thread_cpu_seconds,
    write_results,
)
from benchmarks.engine import machine_info  # noqa: E402
from benchmarks.stack_apps._board import CONSTANT_PATH  # noqa: E402
from ranked import Leaderboard  # noqa: E402
from ranked.service.keys import KeyStore, Scope  # noqa: E402

RESULTS = HERE / "RESULTS-service.md"
BOARD = "arena"
CHUNK = 20_000
_PRIME = 1_000_003
CONNECTIONS = 64
THREADS = 2
PROFILE_ENV = "RANKED_SERVICE_BENCH_PROFILE"

UVICORN = [
    sys.executable, "-m", "uvicorn", "--factory", "--host", HOST, "--port", "{port}",
    "--workers", "1", "--loop", "uvloop", "--http", "httptools", "--no-access-log",
    "--log-level", "warning",
]  # fmt: skip
"""The baseline's and the reference app's server (``ranked serve`` embeds granian)."""
_BARE_COMMAND = [sys.executable, "-m", "benchmarks.stack_apps.embedded", "{port}"]
"""The bare endpoints' server: ``ranked serve``'s stack (``benchmarks/stack_apps``)."""

PACKAGES = (
    "granian", "uvicorn", "uvloop", "httptools", "msgspec", "prometheus-client", "fastapi",
    "pydantic", "redis", "hiredis", "psycopg",
)  # fmt: skip

EMBEDDED = ("always", "batch", "none")
REDIS_PG = "ranked serve, Redis + PostgreSQL journal"
BASELINE = "baseline FastAPI + redis-py"
RAW = "raw ASGI constant (reference)"
BARE = "bare ASGI on ranked serve's server"
READ, SUBMIT, FLOOR, CONSTANT = "rank read", "submit", "/healthz (floor)", "constant"
READ_HOT = "rank read, 1,000 members"
HOT_MEMBERS = 1_000
"""The hot set's size: reads of ``m0`` .. ``m999`` of the same board, whose nodes stay in
the CPU's caches: set beside ``rank read``, it shows what the memory latency of a random
member of the whole board costs."""
BARE_GET, BARE_POST = "GET constant", "POST constant"
"""The bare endpoint by method: a POST reads its body (a submission's) before answering."""
NAIVE_READ = "naive rank read"
"""The same read by hand-written ASGI on the bare server: no authentication, validation or
metrics (``benchmarks/stack_apps/embedded.py``)."""
NAIVE_SUBMIT = "naive durable submit"
"""The same submission by hand-written ASGI on the bare server, through the library on
the same data directory's board and journal (durability ``always``; on :data:`BARE_BATCH`
``batch``): no authentication, validation beyond the body's types, or metrics."""
BARE_BATCH = "bare ASGI on ranked serve's server, journal batch"
SAME_METHOD = {
    READ: BARE_GET,
    READ_HOT: BARE_GET,
    NAIVE_READ: BARE_GET,
    SUBMIT: BARE_POST,
    NAIVE_SUBMIT: BARE_POST,
    FLOOR: BARE_GET,
}
"""The bare endpoint each ranked endpoint is compared with (its method's)."""
NAIVE_OF = {NAIVE_READ: READ, NAIVE_SUBMIT: SUBMIT}
"""The service's endpoint each naive one does by hand (compared with the same baseline)."""

TARGET_BASELINE = 8.0
TARGET_P99 = 1.5
TARGET_READ_FLOOR = 0.8
TARGET_SUBMIT_FLOOR = 0.5
TARGET_COLD_S = 2.0


def embedded(durability: str) -> str:
    return f"ranked serve, embedded, journal {durability}"


@dataclass(frozen=True, slots=True)
class Settings:
    duration: float
    warmup: float
    rounds: int
    members: int
    rate: float | None
    """Paced runs' requests/s (None: no paced runs)."""
    cold: int
    only: tuple[str, ...]


@dataclass(slots=True)
class Keys:
    read: str
    write: str

    def bearer(self, scope: str) -> tuple[tuple[str, str], ...]:
        return (("Authorization", f"Bearer {getattr(self, scope)}"),)


def _no_pids() -> list[int]:
    return []


@dataclass(slots=True)
class Spec:
    """One server: its command, where it reads its data, the endpoints it is driven with,
    and the processes besides its own group whose CPU counts as the service's."""

    name: str
    command: list[str]
    ready: str
    endpoints: dict[str, Target]
    data: Path | None = None
    """Copied afresh into the server's data directory before each start."""
    extra_pids: Callable[[], list[int]] = _no_pids
    ranked: bool = False


Cell = tuple[str, str, str]
"""(server, endpoint, load): load is ``64 conns`` or ``N/s``."""


# -- data ---------------------------------------------------------------------------------


def _items(start: int, stop: int) -> list[tuple[str, float]]:
    return [(f"m{i}", float(i * 7919 % _PRIME)) for i in range(start, stop)]


def build_embedded(directory: Path, members: int) -> tuple[Keys, float]:
    """The embedded data directory: the board (journal, one snapshot) built with the
    library, and a read and a write key. Returns the keys and the seconds taken."""
    started = time.monotonic()
    board = Leaderboard(
        "memory://", BOARD, journal=f"sqlite:///{directory}/journal.db", snapshot_every=None
    )
    try:
        board.record_config()
        for start in range(0, members, CHUNK):
            board.submit_many(_items(start, min(start + CHUNK, members)))
        board.snapshot()
    finally:
        board.close()
    with KeyStore(directory) as keys:
        found = Keys(keys.create(Scope.READ, "bench-read")[1], keys.create(Scope.WRITE)[1])
    return found, time.monotonic() - started


def build_redis(redis_url: str, journal_url: str, members: int) -> float:
    """The board on Redis with the PostgreSQL journal, through the library; seconds taken.
    (The service's batch route takes 1,000 members a request through the same path, plus
    HTTP: slower.)"""
    started = time.monotonic()
    board = Leaderboard(redis_url, BOARD, journal=journal_url, snapshot_every=None)
    try:
        board.record_config()
        for start in range(0, members, CHUNK):
            board.submit_many(_items(start, min(start + CHUNK, members)))
    finally:
        board.close()
    return time.monotonic() - started


def copy_data(source: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)


def _get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def check_request(url: str, target: Target) -> None:
    """Send ``target`` once (member ``m1``, score 5) and insist on a 2xx answer: a cell
    that only collects refusals would look fast."""
    path = target.path.replace("{member}", "m1").replace("{score}", "5")
    body = None if target.body is None else target.body.replace("{member}", "m1")
    body = None if body is None else body.replace("{score}", "5")
    headers = dict(target.headers)
    if body is not None:
        headers.setdefault("Content-Type", "application/json")
    conn = http.client.HTTPConnection(HOST, int(url.rsplit(":", 1)[1]), timeout=10)
    try:
        conn.request(target.method, path, body=body, headers=headers)
        answer = conn.getresponse()
        text = answer.read()
    finally:
        conn.close()
    if not 200 <= answer.status < 300:
        raise RuntimeError(f"{target.method} {path}: {answer.status} {text[:300]!r}")


def check_board(port: int, keys: Keys, members: int) -> None:
    """The served board holds ``members`` members."""
    status, body = _get(port, f"/v1/boards/{BOARD}", {"Authorization": f"Bearer {keys.read}"})
    found = json.loads(body).get("members") if status == 200 else None
    if found != members:
        raise RuntimeError(f"GET /v1/boards/{BOARD}: {status} {body[:300]!r}, not {members}")


# -- servers ------------------------------------------------------------------------------


def ranked_command(data_dir: Path, *flags: str, label: str) -> list[str]:
    """``ranked serve`` on ``data_dir`` (under cProfile when :data:`PROFILE_ENV` is set)."""
    runner = [sys.executable, "-m", "ranked"]
    profile = os.environ.get(PROFILE_ENV)
    if profile:
        Path(profile).mkdir(parents=True, exist_ok=True)
        runner = [sys.executable, "-c", _PROFILED, str(Path(profile) / f"{label}-{{run}}.prof")]
    return [
        *runner, "serve", "--data-dir", str(data_dir), "--host", HOST, "--port", "{port}",
        "--log-level", "warning", *flags,
    ]  # fmt: skip


_PROFILED = """
import cProfile, signal, sys
from ranked.cli import main
# SIGTERM as an exception, so that the profile is written whatever the server does with it.
signal.signal(signal.SIGTERM, signal.default_int_handler)
out = sys.argv.pop(1)
profile = cProfile.Profile()
profile.enable()
try:
    main(prog_name="ranked")
except (KeyboardInterrupt, SystemExit):
    pass
finally:
    profile.disable()
    profile.dump_stats(out)
"""
"""``ranked`` under cProfile (``python -c _PROFILED OUT serve ...``)."""


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (Linux ``/proc``)."""
    parents: dict[int, list[int]] = {}
    for pid, rest in process_stats():
        parents.setdefault(int(rest[1]), []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += parents.get(pid, [])
    return found


def pin(pids: Sequence[int]) -> None:
    """Put ``pids`` on the servers' core (their children inherit it)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(pid, {int(SERVER_CPU)})


SUBMIT_BODY = '{"member":"{member}","score":{score}}'


def targets(members: int, keys: Keys | None) -> dict[str, Target]:
    read = Target(
        f"/v1/boards/{BOARD}/members/{{member}}",
        members=members,
        headers=() if keys is None else keys.bearer("read"),
    )
    submit = Target(
        f"/v1/boards/{BOARD}/scores",
        method="POST",
        body=SUBMIT_BODY,
        members=members,
        headers=() if keys is None else keys.bearer("write"),
    )
    return {READ: read, SUBMIT: submit}


def loads(settings: Settings) -> list[tuple[str, float | None]]:
    """Each endpoint's runs: saturated, then paced when a rate is set."""
    found: list[tuple[str, float | None]] = [(f"{CONNECTIONS} conns", None)]
    if settings.rate is not None:
        found.append((f"{settings.rate:,.0f}/s", settings.rate))
    return found


def measure(
    settings: Settings, spec: Spec, env: dict[str, str], workdir: Path, keys: Keys
) -> dict[tuple[str, str], Sample]:
    """One start of ``spec``'s server: for each endpoint a warm-up, the saturated run and
    the paced run."""
    data_dir = workdir / "data"
    if spec.data is not None:
        copy_data(spec.data, data_dir)
    run = time.strftime("%H%M%S")
    command = [p.replace("{data}", str(data_dir)).replace("{run}", run) for p in spec.command]
    out: dict[tuple[str, str], Sample] = {}
    try:
        with Server(command, ready=spec.ready, env=env, cwd=str(ROOT)) as server:
            assert server.process is not None
            group = [server.process.pid]
            if spec.ranked:
                check_board(server.port, keys, settings.members)

            def cpu() -> float:
                return process_cpu_seconds(groups=group, pids=spec.extra_pids())

            for endpoint, target in spec.endpoints.items():
                check_request(server.url, target)
                run_wrk(server.url, target, duration=settings.warmup)
                for load, rate in loads(settings):
                    before = thread_cpu_seconds(server.process.pid)
                    sample = run_wrk(
                        server.url,
                        target,
                        duration=settings.duration,
                        connections=CONNECTIONS,
                        threads=THREADS,
                        rate=rate,
                        server_cpu=cpu,
                    )
                    after = thread_cpu_seconds(server.process.pid)
                    out[(endpoint, load)] = by_thread(sample, server.process.pid, before, after)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


def cold_start(data: Path, workdir: Path, env: dict[str, str], keys: Keys, members: int) -> float:
    """Seconds from starting ``ranked serve`` (on CPU 0, a fresh copy of ``data``) to
    ``/readyz`` answering 200, polled every 5 ms; checks the board it serves."""
    data_dir = workdir / "cold"
    copy_data(data, data_dir)
    port = free_port()
    command = ranked_command(data_dir, label="cold")
    argv = [p.replace("{port}", str(port)).replace("{run}", "start") for p in command]
    taskset = shutil.which("taskset") or "taskset"
    started = time.monotonic()
    process = subprocess.Popen(
        [taskset, "-c", SERVER_CPU, *argv],
        env=env,
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"ranked serve exited {process.returncode} at start")
            with contextlib.suppress(OSError):
                if _get(port, "/readyz")[0] == 200:
                    break
            if time.monotonic() - started > 120:
                raise RuntimeError("ranked serve was not ready within 120 s")
            time.sleep(0.005)
        seconds = time.monotonic() - started
        check_board(port, keys, members)
        return seconds
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        shutil.rmtree(data_dir, ignore_errors=True)


@dataclass(slots=True)
class Outcome:
    samples: dict[Cell, list[Sample]]
    cold: list[float]
    builds: list[str]
    redis_version: str
    postgres_version: str


@contextlib.contextmanager
def _backing() -> Iterator[tuple[BenchRedis, BenchPostgres]]:
    with BenchRedis() as redis, BenchPostgres() as postgres:
        assert redis.process is not None and postgres.process is not None
        pin([redis.process.pid, *descendants(postgres.process.pid)])
        yield redis, postgres


def run(settings: Settings) -> Outcome:
    """Build the data, then every round over every server; then the cold starts."""
    samples: dict[Cell, list[Sample]] = {}
    builds: list[str] = []
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    with tempfile.TemporaryDirectory(prefix="ranked-svcbench-") as tmp, _backing() as backing:
        redis, postgres = backing
        assert redis.process is not None and postgres.process is not None
        work = Path(tmp)
        master = work / "master"
        master.mkdir()
        keys, seconds = build_embedded(master, settings.members)
        builds.append(
            f"embedded data directory ({settings.members:,} members, journal and snapshot) "
            f"built with the library in {seconds:.1f} s"
        )
        print(builds[-1], flush=True)
        redis_keys = work / "redis-keys"
        redis_keys.mkdir()
        for path in master.glob("keys.db*"):
            shutil.copy2(path, redis_keys / path.name)
        ranked_url = f"redis://{HOST}:{redis.port}/0"
        baseline_url = f"redis://{HOST}:{redis.port}/1"
        specs = servers(settings, keys, master, redis_keys, ranked_url, postgres, redis)
        chosen = [s for s in specs if _wanted(s.name, settings.only)]
        if any(s.name == REDIS_PG for s in chosen):
            seconds = build_redis(ranked_url, postgres.url, settings.members)
            builds.append(
                f"Redis + PostgreSQL board ({settings.members:,} members) built with the "
                f"library (submit_many, {CHUNK:,} a call) in {seconds:.1f} s"
            )
            print(builds[-1], flush=True)
        if any(s.name == BASELINE for s in chosen):
            started = time.monotonic()
            baseline_service.load(baseline_url, BOARD, settings.members)
            builds.append(
                f"baseline board loaded (pipelined ZADDs) in {time.monotonic() - started:.1f} s"
            )
        env[baseline_service.REDIS_ENV] = baseline_url
        for number in range(settings.rounds):
            for spec in chosen:
                started = time.monotonic()
                measured = measure(settings, spec, env, work, keys)
                for (endpoint, load), sample in measured.items():
                    samples.setdefault((spec.name, endpoint, load), []).append(sample)
                    print(
                        f"round {number + 1}/{settings.rounds} {spec.name:42} {endpoint:16} "
                        f"{load:9} {sample.requests_per_s:8,.0f}/s p99 {sample.p99_ms:7.2f} ms "
                        f"cpu {sample.server_cpu:4.0%} errors {sample.status_errors}",
                        flush=True,
                    )
                print(f"  ({time.monotonic() - started:.0f} s)", flush=True)
        cold = []
        for _ in range(settings.cold):
            cold.append(cold_start(master, work, env, keys, settings.members))
            print(f"cold start {cold[-1]:.2f} s", flush=True)
        return Outcome(samples, cold, builds, redis.version(), _postgres_version(postgres))


def servers(
    settings: Settings,
    keys: Keys,
    master: Path,
    redis_keys: Path,
    ranked_url: str,
    postgres: BenchPostgres,
    redis: BenchRedis,
) -> list[Spec]:
    """Every server of the comparison, in the order each round starts them."""
    assert redis.process is not None and postgres.process is not None
    redis_pid, pg_pid = redis.process.pid, postgres.process.pid
    found = []
    for durability in EMBEDDED:
        endpoints = targets(settings.members, keys)
        if durability == "always":
            endpoints[FLOOR] = Target("/healthz")
            endpoints[READ_HOT] = replace(
                endpoints[READ], members=min(HOT_MEMBERS, settings.members)
            )
        found.append(
            Spec(
                embedded(durability),
                ranked_command(
                    Path("{data}"), "--durability", durability, label=f"embedded-{durability}"
                ),
                "/readyz",
                endpoints,
                data=master,
                ranked=True,
            )
        )
    found.append(
        Spec(
            REDIS_PG,
            ranked_command(
                Path("{data}"),
                "--backend",
                ranked_url,
                "--journal",
                postgres.url,
                label="redis-postgres",
            ),
            "/readyz",
            targets(settings.members, keys),
            data=redis_keys,
            extra_pids=lambda: [redis_pid, *descendants(pg_pid)],
            ranked=True,
        )
    )
    found.append(
        Spec(
            BASELINE,
            [*UVICORN, "benchmarks.baseline_service:make_app"],
            f"/v1/boards/{BOARD}/members/m0",
            targets(settings.members, None),
            extra_pids=lambda: [redis_pid],
        )
    )
    found.append(
        Spec(
            RAW,
            [*UVICORN, "benchmarks.stack_apps.raw_asgi:constant_app"],
            CONSTANT_PATH,
            {CONSTANT: Target(CONSTANT_PATH)},
        )
    )
    naive_submit = targets(settings.members, None)[SUBMIT]
    found.append(
        Spec(
            BARE,
            [*_BARE_COMMAND, "--members", f"{settings.members}", "--data", "{data}"],
            CONSTANT_PATH,
            {
                BARE_GET: Target(CONSTANT_PATH),
                BARE_POST: Target(
                    CONSTANT_PATH, method="POST", body=SUBMIT_BODY, members=settings.members
                ),
                NAIVE_READ: Target(
                    f"/v1/boards/{BOARD}/members/{{member}}", members=settings.members
                ),
                NAIVE_SUBMIT: naive_submit,
            },
            data=master,
        )
    )
    found.append(
        Spec(
            BARE_BATCH,
            [*_BARE_COMMAND, "--members", "0", "--data", "{data}", "--durability", "batch"],
            CONSTANT_PATH,
            {NAIVE_SUBMIT: naive_submit},
            data=master,
        )
    )
    return found


def _wanted(name: str, only: Sequence[str]) -> bool:
    return not only or any(word.lower() in name.lower() for word in only)


def _postgres_version(postgres: BenchPostgres) -> str:
    done = subprocess.run(
        [f"{postgres.bin}/postgres", "--version"], capture_output=True, text=True, check=False
    )
    return done.stdout.split()[2]


# -- report -------------------------------------------------------------------------------


def _ratio(value: float, other: Sample | None, attr: str) -> str:
    if other is None:
        return ""
    base = getattr(other, attr)
    return f"{value / base:.2f}x" if base else ""


def table(samples: dict[Cell, list[Sample]]) -> tuple[str, list[str]]:
    """The Markdown table of medians, and notes on errors and on wrk's own load."""
    medians = {cell: median_sample(runs) for cell, runs in samples.items()}
    floor_server = embedded("always")
    lines = [
        "| server | endpoint | load | requests/s | p50 ms | p99 ms | p99.9 ms | server CPU "
        "| requests/s per core | requests/s vs floor | requests/s vs baseline "
        "| p99 vs floor | requests/s per core vs bare, same method |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for (server, endpoint, load), each in medians.items():
        floor = medians.get((floor_server, FLOOR, load))
        baseline = medians.get((BASELINE, NAIVE_OF.get(endpoint, endpoint), load))
        bare = medians.get((BARE, SAME_METHOD.get(endpoint, ""), load))
        paced = not load.endswith("conns")
        vs_floor = "" if paced else _ratio(each.requests_per_s, floor, "requests_per_s")
        vs_base = "" if paced else _ratio(each.requests_per_s, baseline, "requests_per_s")
        constant = endpoint in (BARE_GET, BARE_POST)
        vs_bare = "" if paced or constant else _ratio(each.per_core, bare, "per_core")
        lines.append(
            f"| {server} | {endpoint} | {load} | {each.requests_per_s:,.0f} | "
            f"{each.p50_ms:.2f} | {each.p99_ms:.2f} | {each.p999_ms:.2f} | "
            f"{each.server_cpu:.0%} | {each.per_core:,.0f} | {vs_floor} | {vs_base} | "
            f"{_ratio(each.p99_ms, floor, 'p99_ms')} | {vs_bare} |"
        )
        runs = samples[(server, endpoint, load)]
        sockets = sum(s.socket_errors for s in runs)
        statuses = sum(s.status_errors for s in runs)
        if sockets or statuses:
            notes.append(
                f"{server}, {endpoint} at {load}: {sockets:,} socket errors or timeouts, "
                f"{statuses:,} non-2xx answers (over {len(runs)} runs)"
            )
    busiest = max(s.client_cpu for runs in samples.values() for s in runs)
    notes.append(f"wrk's busiest run used {busiest:.0%} of its core (CPU 1)")
    return "\n".join(lines) + "\n\n" + thread_table(medians), notes


def thread_table(medians: dict[Cell, Sample]) -> str:
    """CPU µs per request by thread of the server process, saturated runs: where the
    time of one request goes (redis-server's and PostgreSQL's are not in it)."""
    lines = [
        f"CPU µs per request by thread of the server's process ({CONNECTIONS} connections):",
        "",
        "| server | endpoint | main thread (Python) | journal lane | other threads (HTTP "
        "I/O, ...) | all |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for (server, endpoint, load), each in medians.items():
        if not load.endswith("conns") or not each.main_us:
            continue
        total = each.main_us + each.lane_us + each.other_us
        lines.append(
            f"| {server} | {endpoint} | {each.main_us:.1f} | {each.lane_us:.1f} | "
            f"{each.other_us:.1f} | {total:.1f} |"
        )
    return "\n".join(lines)


def _verdict(met: bool) -> str:
    return "MET" if met else "NOT MET"


def verdicts(samples: dict[Cell, list[Sample]], cold: list[float], rate: float | None) -> str:
    """The issue's targets, each with its figures and MET / NOT MET."""
    medians = {cell: median_sample(runs) for cell, runs in samples.items()}
    sat = f"{CONNECTIONS} conns"
    paced = None if rate is None else f"{rate:,.0f}/s"
    lines = []

    def get(server: str, endpoint: str, load: str | None) -> Sample | None:
        return None if load is None else medians.get((server, endpoint, load))

    floor_server = embedded("always")
    for endpoint in (READ, SUBMIT):
        mine, base = get(embedded("batch"), endpoint, sat), get(BASELINE, endpoint, sat)
        floor = get(floor_server, FLOOR, sat)
        if mine is None or base is None or floor is None:
            continue
        speed = mine.requests_per_s / base.requests_per_s
        per_core = mine.per_core / base.per_core if base.per_core else 0.0
        tail = mine.p99_ms / floor.p99_ms
        met = speed >= TARGET_BASELINE and tail <= TARGET_P99
        text = (
            f"embedded {endpoint} (journal batch) >= {TARGET_BASELINE:g}x the baseline's "
            f"requests/s with p99 <= {TARGET_P99:g}x the floor's: {speed:.1f}x "
            f"({mine.requests_per_s:,.0f} vs {base.requests_per_s:,.0f}/s; per core "
            f"{per_core:.1f}x), p99 {tail:.2f}x the floor's at {CONNECTIONS} connections "
            f"({mine.p99_ms:.2f} vs {floor.p99_ms:.2f} ms)"
        )
        mine_paced, floor_paced = (
            get(embedded("batch"), endpoint, paced),
            get(floor_server, FLOOR, paced),
        )
        if mine_paced is not None and floor_paced is not None:
            paced_tail = mine_paced.p99_ms / floor_paced.p99_ms
            met = met and paced_tail <= TARGET_P99
            text += (
                f", {paced_tail:.2f}x at {paced} ({mine_paced.p99_ms:.2f} vs "
                f"{floor_paced.p99_ms:.2f} ms)"
            )
        lines.append(f"- {text}: **{_verdict(met)}**")
    floor = get(floor_server, FLOOR, sat)
    for endpoint, durability, goal in (
        (READ, "always", TARGET_READ_FLOOR),
        (SUBMIT, "always", TARGET_SUBMIT_FLOOR),
    ):
        mine = get(embedded(durability), endpoint, sat)
        if mine is None or floor is None:
            continue
        ratio = mine.requests_per_s / floor.requests_per_s
        per_core = mine.per_core / floor.per_core if floor.per_core else 0.0
        lines.append(
            f"- embedded {endpoint} (journal {durability}) >= {goal:g}x the floor's "
            f"requests/s: {ratio:.2f}x ({mine.requests_per_s:,.0f} vs "
            f"{floor.requests_per_s:,.0f}/s; per core {per_core:.2f}x): "
            f"**{_verdict(ratio >= goal)}**"
        )
    hot, whole = get(floor_server, READ_HOT, sat), get(floor_server, READ, sat)
    if hot is not None and whole is not None and floor is not None and hot.per_core:
        lines.append(
            f"- for comparison (no target): embedded {READ_HOT} (journal always, the same "
            f"reads with their nodes in the CPU's caches) against the floor's requests/s: "
            f"{hot.requests_per_s / floor.requests_per_s:.2f}x "
            f"({hot.requests_per_s:,.0f}/s); CPU per request {1e6 / hot.per_core:.1f} µs "
            f"against {1e6 / whole.per_core:.1f} µs for a random member of the whole board"
        )
    naive, bare_get = get(BARE, NAIVE_READ, sat), get(BARE, BARE_GET, sat)
    if naive is not None and bare_get is not None and bare_get.per_core:
        lines.append(
            f"- for comparison (no target): the {NAIVE_READ} (hand-written ASGI on the bare "
            f"server, the same board: no authentication, validation or metrics) against the "
            f"bare GET constant endpoint, per core: "
            f"{naive.per_core / bare_get.per_core:.2f}x ({naive.per_core:,.0f} vs "
            f"{bare_get.per_core:,.0f})"
        )
    naive, bare_post = get(BARE, NAIVE_SUBMIT, sat), get(BARE, BARE_POST, sat)
    if naive is not None and bare_get is not None and bare_post is not None:
        lines.append(
            f"- for comparison (no target): the {NAIVE_SUBMIT} (journal always; hand-written "
            f"ASGI on the bare server through the library, the same board: no authentication,"
            f" validation or metrics) against the bare GET and the bare POST constant "
            f"endpoints, per core: {naive.per_core / bare_get.per_core:.2f}x and "
            f"{naive.per_core / bare_post.per_core:.2f}x ({naive.per_core:,.0f} vs "
            f"{bare_get.per_core:,.0f} and {bare_post.per_core:,.0f})"
        )
    naive, base = get(BARE_BATCH, NAIVE_SUBMIT, sat), get(BASELINE, SUBMIT, sat)
    if naive is not None and base is not None:
        lines.append(
            f"- for comparison (no target): the {NAIVE_SUBMIT} with journal batch against the "
            f"baseline's submit: {naive.requests_per_s / base.requests_per_s:.1f}x "
            f"({naive.requests_per_s:,.0f} vs {base.requests_per_s:,.0f}/s)"
        )
    for endpoint, durability in ((READ, "always"), (SUBMIT, "always"), (SUBMIT, "batch")):
        mine = get(embedded(durability), endpoint, sat)
        bare = get(BARE, SAME_METHOD[endpoint], sat)
        if mine is None or bare is None or not bare.per_core:
            continue
        lines.append(
            f"- for comparison (no target): embedded {endpoint} (journal {durability}) "
            f"against the bare {SAME_METHOD[endpoint]} endpoint on the same server stack, "
            f"per core: {mine.per_core / bare.per_core:.2f}x ({mine.per_core:,.0f} vs "
            f"{bare.per_core:,.0f})"
        )
    if cold:
        median = statistics.median(cold)
        runs = ", ".join(f"{c:.2f}" for c in cold)
        lines.append(
            f"- cold start (process start to /readyz 200, the board restored from its "
            f"snapshot) <= {TARGET_COLD_S:g} s: {median:.2f} s (median of {len(cold)}: "
            f"{runs}): **{_verdict(median <= TARGET_COLD_S)}**"
        )
    return "\n".join(lines)


def versions(redis_version: str, postgres_version: str) -> str:
    found = []
    for name in PACKAGES:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} (missing)")
    found.append(f"PostgreSQL {postgres_version}")
    wrk = shutil.which("wrk")
    if wrk is not None:
        done = subprocess.run([wrk, "-v"], capture_output=True, text=True, check=False)
        found.append(" ".join((done.stdout + done.stderr).split()[:2]))
    return ", ".join(found)


def method(settings: Settings) -> str:
    paced = (
        f" The paced rows send {settings.rate:,.0f} requests/s through wrk's `delay()` hook "
        "(closed-loop: latencies are timed from the send, so they under-report queueing "
        "if the server falls behind)."
        if settings.rate is not None
        else " No paced runs (quick mode)."
    )
    return (
        f"Each server start: the server alone on CPU 0 (`taskset -c 0`; redis-server and "
        f"PostgreSQL pinned there too), a board of {settings.members:,} members; per "
        f"endpoint one request checked for a 2xx answer, a {settings.warmup:g} s warm-up, "
        f"then wrk on CPU 1 for {settings.duration:g} s per run ({CONNECTIONS} connections, "
        f"{THREADS} threads, keep-alive), a random member (and score) per request.{paced} "
        f"Medians over {settings.rounds} round(s), each round starting every server afresh "
        "in turn (the embedded ones on a fresh copy of the same data directory). `ranked "
        "serve` runs granian's server embedded in its process (uvloop); the baseline and "
        "the raw-ASGI reference run under uvicorn (uvloop, httptools, one worker, no "
        "access log). Server CPU: the CPU time of the server's processes (with "
        "redis-server's, and PostgreSQL's for its deployment) over the run's wall time; "
        "under 100% at saturation, other work on the machine took the rest of CPU 0. "
        "Requests/s per core: requests/s over server CPU, the figure least moved by that "
        "other work. Floor: `GET /healthz` of the embedded `always` server; ratios of "
        "requests/s at 64 connections, p99 against the floor's at the same load. The "
        "baseline's submit is ZADD (it sets the score) then ZREVRANK; ranked's keeps each "
        "member's best."
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help="100k members, one 2 s run per cell, no paced runs"
    )
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--members", type=int, default=1_000_000)
    parser.add_argument("--rate", type=float, default=1000.0, help="paced rows' requests/s")
    parser.add_argument("--cold", type=int, default=3, help="cold starts measured")
    parser.add_argument("--only", nargs="*", default=[], help="servers naming these words")
    parser.add_argument("--markdown", action="store_true", help=f"also write {RESULTS.name}")
    args = parser.parse_args(argv)
    rate: float | None = args.rate
    if args.quick:
        args.duration, args.warmup, args.rounds, args.members = 2.0, 1.0, 1, 100_000
        args.cold, rate = 1, None
    settings = Settings(
        args.duration,
        args.warmup,
        args.rounds,
        args.members,
        rate,
        args.cold,
        tuple(args.only),
    )
    started = time.monotonic()
    outcome = run(settings)
    rendered, notes = table(outcome.samples)
    text = "\n\n".join(
        [
            "# `ranked serve` under load (benchmarks/service.py)",
            machine_info(outcome.redis_version),
            "- " + versions(outcome.redis_version, outcome.postgres_version),
            method(settings),
            "\n".join(f"- {line}" for line in outcome.builds),
            rendered,
            "## Targets",
            verdicts(outcome.samples, outcome.cold, settings.rate),
            "\n".join(f"- {note}" for note in notes),
        ]
    )
    print("\n" + text + f"\n\n({time.monotonic() - started:.0f} s)")
    if args.markdown:
        write_results(RESULTS, text + "\n")


if __name__ == "__main__":
    main()
