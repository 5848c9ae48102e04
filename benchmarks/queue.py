"""Priority queue push+pop on memory and Redis, against the bare engine, heapq and redis-py.

Run from the repository root (after ``pip install -e .[bench]``)::

    python benchmarks/queue.py               # n = 1,000,000 queued items
    python benchmarks/queue.py --quick       # smoke run: n = 10,000, few cycles (CI, < 60 s)
    python benchmarks/queue.py --markdown    # also write benchmarks/RESULTS-queue.md
    python benchmarks/queue.py --memory-only # sections 1 and 2 only (no redis-server)

Every figure is the median cost of one push+pop cycle (push one item, pop the head) with
``n`` items queued, so the structure keeps its size. Repetitions go round-robin over the
systems compared, so load on a shared machine hits them alike.

1. memory, n items: ``Queue.push`` + ``Queue.pop`` against the engine's own
   ``SortedSet.add`` + ``pop_min`` on the same data (members ``<8-byte seq><item>``, the
   queue's encoding; target <= 1.5x); also 100 at a time (``push_many`` + ``pop_many``
   against ``add_many`` + ``pop_min(100)``).
2. memory, 10,000 items: against a heapq priority queue with the same FIFO-among-equals
   guarantee (``(priority, seq, item)`` tuples; not thread safe) and the standard
   library's thread-safe ``queue.PriorityQueue`` with the same tuples (target: faster).
3. redis, n items: ``Queue`` on ``redis://`` against a plain redis-py ``ZADD`` +
   ``ZPOPMIN`` loop on the same server (no FIFO among equals, no atomic multi-key steps).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script, this folder comes first on sys.path, and this file would then shadow
# the standard library's ``queue`` (which redis-py imports): put the repository root there.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

import argparse  # noqa: E402 - sys.path fixed above
import contextlib  # noqa: E402
import heapq  # noqa: E402
import itertools  # noqa: E402
import queue as stdlib_queue  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

from benchmarks._servers import BenchRedis  # noqa: E402
from benchmarks.engine import _fmt_time, machine_info  # noqa: E402

SEED = 20261121
PRIORITIES = 1000
LOAD_CHUNK = 5000
TARGET_ENGINE = 1.5
BATCH = 100

Cycle = Callable[[int], None]
"""Runs ``count`` push+pop cycles."""


def median_per_cycle(systems: dict[str, Cycle], count: int, repeats: int) -> dict[str, float]:
    """Median seconds per cycle of each system, repetitions round-robin."""
    times: dict[str, list[float]] = {name: [] for name in systems}
    for _ in range(repeats):
        for name, run in systems.items():
            started = time.perf_counter()
            run(count)
            times[name].append((time.perf_counter() - started) / count)
    return {name: statistics.median(values) for name, values in times.items()}


def workload(size: int, cycles: int) -> tuple[list[tuple[bytes, float]], list[tuple[bytes, float]]]:
    """(items to preload, items pushed by the cycles): random integer priorities."""
    rng = random.Random(SEED)
    preload = [(b"job:%d" % index, float(rng.randrange(PRIORITIES))) for index in range(size)]
    pushed = [(b"new:%d" % index, float(rng.randrange(PRIORITIES))) for index in range(cycles)]
    return preload, pushed


# -- memory ------------------------------------------------------------------------------


def memory_systems(size: int, cycles: int) -> dict[str, Cycle]:
    """Queue and bare engine, each loaded with the same ``size`` items."""
    from ranked.backends.memory import MemoryBackend
    from ranked.engine.zset import SortedSet
    from ranked.queue import Queue

    preload, pushed = workload(size, cycles)
    queue = Queue(MemoryBackend(), "bench")
    for start in range(0, size, LOAD_CHUNK):
        queue.push_many(preload[start : start + LOAD_CHUNK])
    engine = SortedSet(raw=True)
    seq = struct.Struct(">Q").pack
    engine.add_many(
        [(seq(index) + item, priority) for index, (item, priority) in enumerate(preload)]
    )
    counter = itertools.count(size)

    def ranked_one(count: int) -> None:
        push, pop = queue.push, queue.pop
        for item, priority in pushed[:count]:
            push(item, priority)
            pop()

    def engine_one(count: int) -> None:
        add, pop_min = engine.add, engine.pop_min
        for item, priority in pushed[:count]:
            add(seq(next(counter)) + item, priority)
            pop_min()

    def ranked_batch(count: int) -> None:
        for start in range(0, count, BATCH):
            queue.push_many(pushed[start : start + BATCH])
            queue.pop_many(BATCH)

    def engine_batch(count: int) -> None:
        for start in range(0, count, BATCH):
            engine.add_many(
                [(seq(next(counter)) + item, p) for item, p in pushed[start : start + BATCH]]
            )
            engine.pop_min(BATCH)

    return {
        "ranked Queue": ranked_one,
        "engine add + pop_min": engine_one,
        "ranked push_many + pop_many (100)": ranked_batch,
        "engine add_many + pop_min(100)": engine_batch,
    }


def heap_systems(size: int, cycles: int) -> dict[str, Cycle]:
    """ranked Queue against heapq and queue.PriorityQueue with (priority, seq, item)."""
    from ranked.backends.memory import MemoryBackend
    from ranked.queue import Queue

    preload, pushed = workload(size, cycles)
    queue = Queue(MemoryBackend(), "bench")
    queue.push_many(preload)
    counter = itertools.count()
    heap = [(priority, next(counter), item) for item, priority in preload]
    heapq.heapify(heap)
    locked: stdlib_queue.PriorityQueue[tuple[float, int, bytes]] = stdlib_queue.PriorityQueue()
    for entry in heap:
        locked.put_nowait(entry)

    def ranked_one(count: int) -> None:
        push, pop = queue.push, queue.pop
        for item, priority in pushed[:count]:
            push(item, priority)
            pop()

    def ranked_batch(count: int) -> None:
        for start in range(0, count, BATCH):
            queue.push_many(pushed[start : start + BATCH])
            queue.pop_many(BATCH)

    def heapq_one(count: int) -> None:
        push, pop = heapq.heappush, heapq.heappop
        for item, priority in pushed[:count]:
            push(heap, (priority, next(counter), item))
            pop(heap)

    def locked_one(count: int) -> None:
        put, get = locked.put_nowait, locked.get_nowait
        for item, priority in pushed[:count]:
            put((priority, next(counter), item))
            get()

    return {
        "ranked Queue": ranked_one,
        "ranked push_many + pop_many (100)": ranked_batch,
        "heapq (priority, seq, item)": heapq_one,
        "queue.PriorityQueue (thread safe)": locked_one,
    }


# -- redis -------------------------------------------------------------------------------


def redis_systems(port: int, size: int, cycles: int) -> tuple[dict[str, Cycle], Callable[[], None]]:
    """ranked Queue on redis:// and a raw ZADD + ZPOPMIN loop, same server, same size."""
    import redis

    from ranked import open_backend
    from ranked.queue import Queue

    preload, pushed = workload(size, cycles)
    backend = open_backend(f"redis://127.0.0.1:{port}")
    queue = Queue(backend, "bench")
    for start in range(0, size, LOAD_CHUNK):
        queue.push_many(preload[start : start + LOAD_CHUNK])
    client = redis.Redis(port=port)
    for start in range(0, size, LOAD_CHUNK):
        client.zadd("raw", dict(preload[start : start + LOAD_CHUNK]))

    def ranked_one(count: int) -> None:
        push, pop = queue.push, queue.pop
        for item, priority in pushed[:count]:
            push(item, priority)
            pop()

    def raw_one(count: int) -> None:
        zadd, zpopmin = client.zadd, client.zpopmin
        for item, priority in pushed[:count]:
            zadd("raw", {item: priority})
            zpopmin("raw")

    def close() -> None:
        backend.close()
        client.close()

    return {"ranked Queue": ranked_one, "redis-py ZADD + ZPOPMIN": raw_one}, close


# -- report ------------------------------------------------------------------------------


def rate(seconds: float) -> str:
    per_second = 1 / seconds
    if per_second >= 1e6:
        return f"{per_second / 1e6:.2f}M/s"
    return f"{per_second / 1e3:.1f}k/s"


def table(results: dict[str, float], baseline: str, target: float | None) -> list[str]:
    lines = ["| system | push+pop (median) | cycles/s | / " + baseline + " |", "|---|---|---|---|"]
    for name, seconds in results.items():
        ratio = seconds / results[baseline]
        verdict = ""
        if target is not None and name.startswith("ranked"):
            verdict = " ok" if ratio <= target else " MISSED"
        lines.append(f"| {name} | {_fmt_time(seconds)} | {rate(seconds)} | {ratio:.2f}x{verdict} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="n = 10,000 and few cycles")
    parser.add_argument("--size", type=int, default=None, help="queued items (default 1,000,000)")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/RESULTS-queue.md")
    parser.add_argument(
        "--memory-only", action="store_true", help="sections 1 and 2 only: no Redis, no markdown"
    )
    args = parser.parse_args()
    if args.memory_only and args.markdown:
        parser.error("--markdown needs the full run (drop --memory-only)")
    size = args.size or (10_000 if args.quick else 1_000_000)
    repeats = args.repeats or (3 if args.quick else 5)
    memory_cycles = 2_000 if args.quick else 20_000
    redis_cycles = 200 if args.quick else 2_000
    heap_size = 10_000

    out: list[str] = []

    def emit(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    with contextlib.nullcontext(None) if args.memory_only else BenchRedis() as server:
        version = server.version() if server else "not run"
        emit(f"### 1. memory, n = {size:,}: the queue layer over the engine")
        emit()
        cycles = memory_cycles * repeats
        systems = memory_systems(size, cycles)
        results = median_per_cycle(systems, memory_cycles, repeats)
        lines = table(
            {k: results[k] for k in ("engine add + pop_min", "ranked Queue")},
            "engine add + pop_min",
            TARGET_ENGINE,
        )
        lines += table(
            {
                k: results[k]
                for k in ("engine add_many + pop_min(100)", "ranked push_many + pop_many (100)")
            },
            "engine add_many + pop_min(100)",
            TARGET_ENGINE,
        )[2:]
        for line in lines:
            emit(line)
        emit()
        emit(f"### 2. memory, n = {heap_size:,}: against heapq, FIFO among equals")
        emit()
        results = median_per_cycle(heap_systems(heap_size, cycles), memory_cycles, repeats)
        for line in table(results, "heapq (priority, seq, item)", 1.0):
            emit(line)
        emit()
        locked = results["queue.PriorityQueue (thread safe)"]
        for name in ("ranked Queue", "ranked push_many + pop_many (100)"):
            ratio = results[name] / locked
            verdict = "faster" if ratio < 1 else "slower"
            emit(f"- {name} / queue.PriorityQueue (the thread-safe peer): {ratio:.2f}x, {verdict}")
        emit()
        if server is None:
            return
        emit(f"### 3. redis, n = {size:,}: against a plain redis-py ZADD + ZPOPMIN loop")
        emit()
        systems, close = redis_systems(server.port, size, redis_cycles * repeats)
        try:
            results = median_per_cycle(systems, redis_cycles, repeats)
        finally:
            close()
        for line in table(results, "redis-py ZADD + ZPOPMIN", None):
            emit(line)
        machine = machine_info(version)
    print()
    print(machine)
    if args.markdown:
        header = [
            "# Queue benchmark results",
            "",
            "Written by `python benchmarks/queue.py --markdown`; do not edit by hand.",
            "",
            machine,
            "",
            "One cycle = push one item + pop the head, with the queue holding n items (random "
            f"integer priorities in [0, {PRIORITIES}), fixed seed). Medians of {repeats} "
            f"round-robin repetitions over {memory_cycles:,} cycles (memory) and "
            f"{redis_cycles:,} cycles (Redis).",
            "",
        ]
        (HERE / "RESULTS-queue.md").write_text("\n".join(header + out) + "\n")


if __name__ == "__main__":
    main()
