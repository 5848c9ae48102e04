"""The web stack for ``ranked serve``, chosen by measurement: frameworks x ASGI servers.

Run from the repository root (after ``pip install -e .[bench]``; needs Debian's ``wrk``)::

    python benchmarks/service_stack.py             # 8 s per cell, 3 rounds, medians
    python benchmarks/service_stack.py --quick     # smoke run: 1 s per cell, 1 round (CI)
    python benchmarks/service_stack.py --markdown  # also write RESULTS-service-stack.md

Each variant (a tiny app in ``benchmarks/stack_apps/``, or the FastAPI + redis-py
baseline of ``benchmarks/baseline_service.py``) runs under uvicorn (uvloop, httptools)
and under granian (ASGI, one worker, one runtime thread), each server alone on CPU 0 and
wrk on CPU 1 (64 connections, 2 threads; ``benchmarks/_wrk.py``):

- ``constant``: ``GET /const``, a constant ``{member, score, rank}`` built and encoded per
  request (raw ASGI, Starlette + msgspec, Litestar, FastAPI + pydantic);
- ``rank read``: ``GET /v1/boards/arena/members/m<i>`` on a 1,000,000-member ``memory://``
  board, ``i`` random per request (raw ASGI, Starlette + msgspec, Litestar); the baseline
  reads ZSCORE + ZREVRANK from a redis-server (also on CPU 0: the service side gets one
  core in every variant);
- ``submit`` (baseline only): ``POST /v1/boards/arena/scores``, ZADD then ZREVRANK;
- ``... @ N/s``: the same reads paced to N requests/s (``--rate``), on the same server
  right after the saturated run: latency below saturation.

Every round starts each server afresh (the board is loaded before it answers), warms it
up, then measures; rounds go over all cells in turn, so load from other work on the
machine hits them alike. Each figure is the median over the rounds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
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
from benchmarks._servers import BenchRedis  # noqa: E402
from benchmarks._wrk import (  # noqa: E402
    Sample,
    Server,
    Target,
    median_sample,
    process_cpu_seconds,
    run_wrk,
    write_results,
)
from benchmarks.engine import machine_info  # noqa: E402
from benchmarks.stack_apps._board import BOARD, CONSTANT_PATH, MEMBERS_ENV  # noqa: E402

RESULTS = HERE / "RESULTS-service-stack.md"
CONNECTIONS = 64
THREADS = 2

SERVERS: dict[str, list[str]] = {
    "uvicorn": [
        sys.executable, "-m", "uvicorn", "--factory", "--host", "127.0.0.1", "--port",
        "{port}", "--workers", "1", "--loop", "uvloop", "--http", "httptools",
        "--no-access-log", "--log-level", "warning",
    ],
    "granian": [
        sys.executable, "-m", "granian", "--interface", "asgi", "--factory", "--host",
        "127.0.0.1", "--port", "{port}", "--workers", "1", "--runtime-mode", "st",
        "--runtime-threads", "1", "--blocking-threads", "1", "--loop", "uvloop",
        "--http", "1", "--no-ws", "--no-access-log", "--log-level", "warning",
    ],
}  # fmt: skip
"""Each server's command (``{port}`` filled in, the app's factory appended)."""

PACKAGES = (
    "uvicorn", "granian", "uvloop", "httptools", "starlette", "litestar", "fastapi",
    "pydantic", "msgspec", "redis", "hiredis",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Variant:
    """One app and the requests sent to it."""

    stack: str
    endpoint: str
    app: str
    """``module:factory`` under ``benchmarks``."""
    target: Target
    ready: str
    redis: bool = False


STACKS = {
    "raw ASGI + msgspec": "raw_asgi",
    "Starlette + msgspec": "starlette_app",
    "Litestar": "litestar_app",
    "FastAPI + pydantic": "fastapi_app",
}
"""Each stack's module in ``benchmarks/stack_apps``."""
READERS = ("raw ASGI + msgspec", "Starlette + msgspec", "Litestar")
"""The stacks with a rank-read app."""
BASELINE = "baseline FastAPI + Redis"


def variants(members: int) -> list[Variant]:
    """Every variant, on a board of ``members`` members."""
    read = Target(f"/v1/boards/{BOARD}/members/{{member}}", members=members)
    ready = f"/v1/boards/{BOARD}/members/m0"
    submit = Target(
        f"/v1/boards/{BOARD}/scores",
        method="POST",
        body='{"member":"{member}","score":{score}}',
        members=members,
    )
    const = Target(CONSTANT_PATH)
    found = [
        Variant(stack, "constant", f"stack_apps.{module}:constant_app", const, CONSTANT_PATH)
        for stack, module in STACKS.items()
    ]
    found += [
        Variant(stack, "rank read", f"stack_apps.{STACKS[stack]}:rank_app", read, ready)
        for stack in READERS
    ]
    baseline = "baseline_service:make_app"
    found.append(Variant(BASELINE, "rank read", baseline, read, ready, redis=True))
    found.append(Variant(BASELINE, "submit", baseline, submit, ready, redis=True))
    return found


@dataclass(frozen=True, slots=True)
class Settings:
    duration: float
    warmup: float
    rounds: int
    members: int
    rate: float
    only: tuple[str, ...]

    @property
    def paced(self) -> str:
        return f"rank read @ {self.rate:,.0f}/s"


Cell = tuple[str, str, str]
"""(stack, server, endpoint)."""


def run(settings: Settings) -> tuple[dict[Cell, list[Sample]], str]:
    """All rounds; the samples per cell and the redis-server version."""
    chosen = [v for v in variants(settings.members) if _wanted(v, settings.only)]
    samples: dict[Cell, list[Sample]] = {}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    env[MEMBERS_ENV] = str(settings.members)
    with BenchRedis() as redis:
        assert redis.process is not None
        os.sched_setaffinity(redis.process.pid, {0})  # the service side's core
        env[baseline_service.REDIS_ENV] = f"redis://127.0.0.1:{redis.port}/0"
        if any(v.redis for v in chosen):
            baseline_service.load(env[baseline_service.REDIS_ENV], BOARD, settings.members)
        for number in range(settings.rounds):
            for server, command in SERVERS.items():
                for variant in chosen:
                    started = time.monotonic()
                    measured = _cell(settings, env, command, variant, redis.process.pid)
                    for endpoint, sample in measured.items():
                        cell = (variant.stack, server, endpoint)
                        samples.setdefault(cell, []).append(sample)
                        print(
                            f"round {number + 1}/{settings.rounds} {server:8} "
                            f"{variant.stack:25} {endpoint:22} "
                            f"{sample.requests_per_s:10,.0f}/s p99 {sample.p99_ms:7.2f} ms "
                            f"({time.monotonic() - started:.0f} s)",
                            flush=True,
                        )
        return samples, redis.version()


def _wanted(variant: Variant, only: Sequence[str]) -> bool:
    text = f"{variant.stack} {variant.endpoint}".lower()
    return not only or any(word.lower() in text for word in only)


def _cell(
    settings: Settings, env: dict[str, str], command: list[str], variant: Variant, redis: int
) -> dict[str, Sample]:
    """One server start: warm-up, the saturated run, and for reads the paced run. The
    service's CPU is the server's process group's, plus redis-server's for the baseline."""
    app = "benchmarks." + variant.app
    with Server([*command, app], ready=variant.ready, env=env, cwd=str(ROOT)) as server:
        assert server.process is not None
        group, pids = [server.process.pid], [redis] if variant.redis else []

        def cpu() -> float:
            return process_cpu_seconds(groups=group, pids=pids)

        run_wrk(server.url, variant.target, duration=settings.warmup)
        out = {
            variant.endpoint: run_wrk(
                server.url, variant.target, duration=settings.duration, server_cpu=cpu
            )
        }
        if variant.endpoint == "rank read":
            out[settings.paced] = run_wrk(
                server.url,
                variant.target,
                duration=settings.duration,
                rate=settings.rate,
                server_cpu=cpu,
            )
        if any(each.status_errors for each in out.values()):
            print(f"non-2xx answers from {app}; the server's last output:\n{server.log_tail()}")
    return out


def table(samples: dict[Cell, list[Sample]]) -> tuple[str, list[str]]:
    """The Markdown table of medians, and notes on errors and on wrk's own load."""
    medians = {cell: median_sample(runs) for cell, runs in samples.items()}
    lines = [
        "| stack | server | endpoint | requests/s | server CPU | requests/s per core "
        "| p50 ms | p99 ms | p99.9 ms | per core vs raw ASGI constant |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for server in SERVERS:
        floor = medians.get(("raw ASGI + msgspec", server, "constant"))
        for (stack, on, endpoint), each in medians.items():
            if on != server:
                continue
            ratio = "" if floor is None else f"{each.per_core / floor.per_core:.2f}x"
            if "@" in endpoint:
                ratio = ""  # paced: the rate is set, not measured
            lines.append(
                f"| {stack} | {server} | {endpoint} | {each.requests_per_s:,.0f} | "
                f"{each.server_cpu:.0%} | {each.per_core:,.0f} | "
                f"{each.p50_ms:.2f} | {each.p99_ms:.2f} | {each.p999_ms:.2f} | {ratio} |"
            )
            runs = samples[(stack, on, endpoint)]
            sockets = sum(s.socket_errors for s in runs)
            statuses = sum(s.status_errors for s in runs)
            if sockets or statuses:
                notes.append(
                    f"{stack} on {server}, {endpoint}: {sockets:,} socket errors or timeouts, "
                    f"{statuses:,} non-2xx answers (over {len(runs)} runs)"
                )
    busiest = max(s.client_cpu for runs in samples.values() for s in runs)
    notes.append(f"wrk's busiest run used {busiest:.0%} of its core (CPU 1)")
    return "\n".join(lines), notes


def versions() -> str:
    """The package versions and wrk's."""
    found = []
    for name in PACKAGES:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} (missing)")
    wrk = shutil.which("wrk")
    if wrk is not None:
        done = subprocess.run([wrk, "-v"], capture_output=True, text=True)
        found.append(" ".join((done.stdout + done.stderr).split()[:2]))
    return ", ".join(found)


def method(settings: Settings) -> str:
    return (
        f"Each cell: the server started afresh on CPU 0 (`taskset -c 0`; a "
        f"{settings.members:,}-member board loaded before it answers), a {settings.warmup:g} s "
        f"warm-up, then wrk on CPU 1 for {settings.duration:g} s ({CONNECTIONS} connections, "
        f"{THREADS} threads, keep-alive); reads name a random member per request. The "
        f"paced rows send {settings.rate:,.0f} requests/s through wrk's `delay()` hook "
        "(closed-loop: latencies are timed from the send, so they under-report queueing "
        f"if the server falls behind). Medians over {settings.rounds} round(s), each round "
        "going over every cell. uvicorn: `--loop uvloop --http httptools`, one worker, no "
        "access log. granian: `--interface asgi --workers 1 --runtime-mode st "
        "--runtime-threads 1 --blocking-threads 1 --loop uvloop --http 1 --no-ws`, no "
        "access log. The baseline's redis-server (no persistence) runs on CPU 0 too. "
        "Server CPU: the CPU time of the server's processes (with redis-server's for the "
        "baseline) over the run's wall time; under 100% in a saturated run, other work on "
        "the machine took the rest of CPU 0. Requests/s per core: requests/s over server "
        "CPU, the rate one dedicated core gives, the figure least moved by that other "
        "work; the last column compares it with raw ASGI's constant endpoint on the same "
        "server."
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="1 s cells, 1 round (CI smoke)")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--members", type=int, default=1_000_000)
    parser.add_argument("--rate", type=float, default=1000.0, help="paced rows' requests/s")
    parser.add_argument("--only", nargs="*", default=[], help="variants naming these words")
    parser.add_argument("--markdown", action="store_true", help=f"also write {RESULTS.name}")
    args = parser.parse_args(argv)
    if args.quick:
        args.duration, args.warmup, args.rounds, args.members = 1.0, 1.0, 1, 100_000
    settings = Settings(
        args.duration, args.warmup, args.rounds, args.members, args.rate, tuple(args.only)
    )
    started = time.monotonic()
    samples, redis_version = run(settings)
    rendered, notes = table(samples)
    text = "\n\n".join(
        [
            "# Web stack for `ranked serve` (benchmarks/service_stack.py)",
            machine_info(redis_version),
            "- " + versions(),
            method(settings),
            rendered,
            "\n".join(f"- {note}" for note in notes),
        ]
    )
    print("\n" + text + f"\n\n({time.monotonic() - started:.0f} s)")
    if args.markdown:
        write_results(RESULTS, text + "\n")


if __name__ == "__main__":
    main()
