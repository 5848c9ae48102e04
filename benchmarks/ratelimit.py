"""Rate-limiter decisions per second: ranked against ``limits`` on the same Redis, same run.

Run from the repository root (after ``pip install -e .[bench]``)::

    python benchmarks/ratelimit.py               # full run
    python benchmarks/ratelimit.py --quick       # smoke run for CI (well under a minute)
    python benchmarks/ratelimit.py --markdown    # also write benchmarks/RESULTS-ratelimit.md
    python benchmarks/ratelimit.py --memory-only # memory columns only, no redis-server

Workload: single thread, 1,000 identities hit round-robin, a policy of 50 units per 60 s,
so after the first pass half of the hits are denied (the steady state of a limiter
under pressure). Each system starts from an empty store.

- memory: ranked on ``memory://`` against ``limits`` with ``MemoryStorage`` (targets:
  ranked >= 3x ``limits``' decisions per second), and ranked's asyncio limiter on
  ``memory://`` (each ``await limiter.hit(...)`` timed inside one running event loop);
- Redis: ranked on ``redis://`` against ``limits`` with ``RedisStorage`` on the same private
  redis-server (target: ranked >= ``limits``); the bucket algorithms, which ``limits`` lacks,
  are shown against ranked's fixed window and one raw redis-py ``INCR`` round trip.

``sliding_log`` is compared with ``limits``' moving window (both exact logs), fixed window
with fixed window, ``sliding_counter`` with ``limits``' sliding-window counter. Repetitions
go round-robin over the systems, so load on a shared machine hits them alike; every figure
is a median.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0]).resolve() == HERE:
    # Run as a script: the repository root replaces this folder on the path, so that
    # benchmarks/queue.py does not shadow the standard library's queue (redis-py needs it).
    sys.path[0] = str(HERE.parent)
elif str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

import redis  # noqa: E402
from limits import RateLimitItemPerMinute  # noqa: E402
from limits.storage import MemoryStorage, RedisStorage  # noqa: E402
from limits.strategies import (  # noqa: E402
    FixedWindowRateLimiter,
    MovingWindowRateLimiter,
    SlidingWindowCounterRateLimiter,
)

from benchmarks._servers import BenchRedis  # noqa: E402 - path set above
from benchmarks.engine import _fmt_time, machine_info  # noqa: E402
from ranked.backends.factory import open_async_backend, open_backend  # noqa: E402
from ranked.ratelimit import (  # noqa: E402
    ALGORITHMS,
    Algorithm,
    AsyncRateLimiter,
    Policy,
    RateLimiter,
)

LIMIT = 50
WINDOW = 60
IDENTITIES = [f"user:{n}" for n in range(1000)]
PEERS: dict[Algorithm, Any] = {
    "fixed_window": FixedWindowRateLimiter,
    "sliding_log": MovingWindowRateLimiter,
    "sliding_counter": SlidingWindowCounterRateLimiter,
}
TARGET_MEMORY = 3.0
TARGET_REDIS = 1.0

Decide = Callable[[str], object]
"""One hit; a coroutine function for an asyncio limiter (awaited in :data:`LOOP`)."""

LOOP = asyncio.new_event_loop()
"""The event loop the asyncio decisions run in, one batch per ``run_until_complete``."""


async def _atimed(decide: Callable[[str], Awaitable[object]], calls: int, offset: int) -> float:
    """:func:`_timed` for an asyncio hit: the loop of awaits timed inside the coroutine."""
    ids = IDENTITIES
    count = len(ids)
    start = time.perf_counter()
    for n in range(offset, offset + calls):
        await decide(ids[n % count])
    return (time.perf_counter() - start) / calls


def _timed(decide: Decide, calls: int, offset: int) -> float:
    """Seconds per call over ``calls`` hits, identities round-robin from ``offset``."""
    if inspect.iscoroutinefunction(decide):
        return LOOP.run_until_complete(_atimed(decide, calls, offset))
    ids = IDENTITIES
    count = len(ids)
    start = time.perf_counter()
    for n in range(offset, offset + calls):
        decide(ids[n % count])
    return (time.perf_counter() - start) / calls


def _interleaved(
    systems: dict[str, Decide], calls: int, repeats: int, admin: redis.Redis | None = None
) -> tuple[dict[str, float], dict[str, float]]:
    """Median seconds per decision of each system and, given the server's ``admin``
    client, median server microseconds per decision (:func:`_server_us`)."""
    samples: dict[str, list[float]] = {name: [] for name in systems}
    server: dict[str, list[float]] = {name: [] for name in systems}
    for decide in systems.values():  # steady state: every identity seen once, untimed
        _timed(decide, len(IDENTITIES), 0)
    for repeat in range(repeats):
        for name, decide in systems.items():
            if admin is not None:
                admin.config_resetstat()
            samples[name].append(_timed(decide, calls, repeat * calls))
            if admin is not None:
                server[name].append(_server_us(admin) / calls)
    seconds = {name: statistics.median(values) for name, values in samples.items()}
    return seconds, {name: statistics.median(values) for name, values in server.items() if values}


def _server_us(admin: redis.Redis) -> float:
    """Microseconds the server spent executing the commands clients sent since the last
    CONFIG RESETSTAT (``INFO commandstats``). A script's EVALSHA time already includes
    the commands it runs, which commandstats also lists on their own: when scripts ran,
    only EVAL/EVALSHA count, else every command (the raw INCR)."""
    stats: dict[str, dict[str, float]] = admin.info("commandstats")
    stats = {
        name: row
        for name, row in stats.items()
        if name not in ("cmdstat_config|resetstat", "cmdstat_info")
    }
    scripts = [row["usec"] for name, row in stats.items() if name.startswith("cmdstat_eval")]
    return float(sum(scripts) if scripts else sum(row["usec"] for row in stats.values()))


def ranked(url: str, algorithm: Algorithm) -> Decide:
    backend = open_backend(url)
    return RateLimiter(backend, Policy(LIMIT, WINDOW, algorithm), prefix=f"b{time.time_ns()}").hit


def ranked_async(url: str, algorithm: Algorithm) -> Decide:
    backend = open_async_backend(url)
    policy = Policy(LIMIT, WINDOW, algorithm)
    return AsyncRateLimiter(backend, policy, prefix=f"a{time.time_ns()}").hit


def limits_peer(storage: Any, algorithm: Algorithm) -> Decide:
    item = RateLimitItemPerMinute(LIMIT)
    strategy = PEERS[algorithm](storage)
    return lambda identity: strategy.hit(item, identity)


def limits_with_stats(storage: Any, algorithm: Algorithm) -> Decide:
    """A limits hit plus its window stats: the second round trip a middleware that sends
    remaining / reset headers makes (ranked's decision carries both in one)."""
    item = RateLimitItemPerMinute(LIMIT)
    strategy = PEERS[algorithm](storage)

    def decide(identity: str) -> object:
        strategy.hit(item, identity)
        return strategy.get_window_stats(item, identity)

    return decide


def raw_incr(url: str) -> Decide:
    client = redis.Redis.from_url(url)
    return lambda identity: client.incr(identity)


def measure(port: int, calls_memory: int, calls_redis: int, repeats: int) -> list[list[str]]:
    url = f"redis://127.0.0.1:{port}"
    rows: list[list[str]] = []
    admin = redis.Redis.from_url(url)
    for algorithm in ALGORITHMS:
        admin.flushall()  # limits names its keys by item, not by strategy
        memory: dict[str, Decide] = {
            "ranked": ranked("memory://", algorithm),
            "async": ranked_async("memory://", algorithm),
        }
        on_redis: dict[str, Decide] = {"ranked": ranked(url, algorithm)}
        if algorithm in PEERS:
            memory["peer"] = limits_peer(MemoryStorage(), algorithm)
            on_redis["peer"] = limits_peer(RedisStorage(url), algorithm)
            on_redis["stats"] = limits_with_stats(RedisStorage(url), algorithm)
            peer_name = f"limits {PEERS[algorithm].__name__.removesuffix('RateLimiter')}"
        else:
            on_redis["peer"] = ranked(url, "fixed_window")
            on_redis["incr"] = raw_incr(url)
            peer_name = "ranked fixed_window / raw INCR"
        mem, _ = _interleaved(memory, calls_memory, repeats)
        red, server = _interleaved(on_redis, calls_redis, repeats, admin)
        rows.append(_row(algorithm, peer_name, mem, red, server))
    admin.close()
    return rows


def measure_memory(calls: int, repeats: int) -> list[list[str]]:
    """The memory columns alone (``--memory-only``): no redis-server is started."""
    rows: list[list[str]] = []
    for algorithm in ALGORITHMS:
        memory: dict[str, Decide] = {
            "ranked": ranked("memory://", algorithm),
            "async": ranked_async("memory://", algorithm),
        }
        if algorithm in PEERS:
            memory["peer"] = limits_peer(MemoryStorage(), algorithm)
        mem, _ = _interleaved(memory, calls, repeats)
        cells = [algorithm, _rate(mem["ranked"]), _rate(mem["async"])]
        if "peer" in mem:
            cells += [_rate(mem["peer"]), _verdict(mem["peer"] / mem["ranked"], TARGET_MEMORY)]
        else:
            cells += ["-", "-"]
        rows.append(cells)
    return rows


def _rate(seconds: float) -> str:
    per_second = 1 / seconds
    text = f"{per_second / 1e3:.1f}k/s" if per_second < 1e6 else f"{per_second / 1e6:.2f}M/s"
    return f"{_fmt_time(seconds)} ({text})"


def _verdict(ratio: float, target: float) -> str:
    return f"{ratio:.2f}x {'ok' if ratio >= target else 'MISSED'}"


def _row(
    algorithm: str,
    peer: str,
    mem: dict[str, float],
    red: dict[str, float],
    server: dict[str, float],
) -> list[str]:
    cells = [algorithm, peer, _rate(mem["ranked"]), _rate(mem["async"])]
    if "peer" in mem:
        ratio = mem["peer"] / mem["ranked"]
        cells += [_rate(mem["peer"]), _verdict(ratio, TARGET_MEMORY)]
    else:
        cells += ["-", "-"]
    cells += [_rate(red["ranked"]), _rate(red["peer"])]
    if "incr" in red:
        cells += [f"{red['peer'] / red['ranked']:.2f}x vs fixed; INCR {_rate(red['incr'])}"]
    else:
        cells += [_verdict(red["peer"] / red["ranked"], TARGET_REDIS)]
    if "stats" in red:
        cells += [f"{_rate(red['stats'])}: {red['stats'] / red['ranked']:.2f}x"]
    else:
        cells += ["-"]
    cells += [f"{server['ranked']:.2f}", f"{server['peer']:.2f}"]
    if "incr" in server:
        cells[-1] += f"; INCR {server['incr']:.2f}"
    return cells


HEADER = [
    "algorithm",
    "compared with",
    "memory: ranked",
    "memory: ranked async",
    "memory: peer",
    "memory: speedup (target >= 3x)",
    "redis: ranked",
    "redis: peer",
    "redis: speedup (target >= 1x)",
    "redis: limits hit + window stats (speedup)",
    "redis: server us per decision, ranked",
    "redis: server us per decision, peer",
]


def render(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run (CI)")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--markdown", action="store_true", help="write RESULTS-ratelimit.md")
    parser.add_argument(
        "--memory-only", action="store_true", help="only the memory columns (no Redis)"
    )
    args = parser.parse_args(argv)
    calls_memory, calls_redis, repeats = (2_000, 200, 3) if args.quick else (20_000, 2_000, 5)
    repeats = args.repeats or repeats
    if args.memory_only:
        header = ["algorithm", *HEADER[2:6]]
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in measure_memory(calls_memory, repeats)]
        print("\n".join(lines))
        return
    with BenchRedis() as server:
        rows = measure(server.port, calls_memory, calls_redis, repeats)
        version = server.version()
    table = render(rows)
    print(table)
    if args.markdown:
        text = "\n\n".join(
            [
                "# Rate-limiter benchmark results",
                "Written by `python benchmarks/ratelimit.py --markdown`; do not edit by hand.",
                machine_info(version),
                f"Single thread; {len(IDENTITIES):,} identities hit round-robin; policy {LIMIT}"
                f" units / {WINDOW} s (half the hits denied in the steady state); every system"
                " first hits each identity once, untimed. Medians of"
                f" {repeats} round-robin repetitions over batches of {calls_memory:,} (memory)"
                f" and {calls_redis:,} (Redis) decisions. `limits` {_limits_version()}."
                " Each cell: latency per decision (decisions per second); speedup = peer"
                " time / ranked time.",
                "*Server us per decision* is the time redis-server spent executing the"
                " commands of one decision (`INFO commandstats` after `CONFIG RESETSTAT`,"
                " every command counted: a script's EVALSHA time includes the commands it"
                " runs), median over the repetitions. One client waits on its round trip"
                " (about 75 us here), so single-thread latency is at parity; when many clients"
                " share one server, its CPU per decision is what bounds throughput.",
                "*limits hit + window stats*: `hit` then `get_window_stats`, the second round"
                " trip a middleware needs for `remaining` / reset headers with limits; a ranked"
                " decision carries them in its one round trip.",
                table,
                "",
            ]
        )
        (HERE / "RESULTS-ratelimit.md").write_text(text)


def _limits_version() -> str:
    import limits

    return str(limits.__version__)


if __name__ == "__main__":
    main()
