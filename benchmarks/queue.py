"""Priority queue push+pop on memory and Redis, against the bare engine, heapq and redis-py.

Run from the repository root (after ``pip install -e .[bench]``)::

    python benchmarks/queue.py               # n = 1,000,000 queued items
    python benchmarks/queue.py --quick       # smoke run: n = 10,000, few cycles (CI, < 60 s)
    python benchmarks/queue.py --markdown    # also write benchmarks/RESULTS-queue.md
    python benchmarks/queue.py --memory-only # sections 1, 2 and 4 (no redis-server)
    python benchmarks/queue.py --ops         # section 4 only: each memory operation
    python benchmarks/queue.py --compare ../main/src   # sections 2 and 4: this checkout's
                                             # src against another one, A/B (see compare)

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
4. memory, 10,000 items: each operation of ``Queue`` on its own (per call, or per item
   for the batch forms), to compare one version of the queue with another.

``--compare OTHER_SRC`` compares two versions of ranked on a shared, busy machine: one
worker process per version (``PYTHONPATH`` = this checkout's ``src``, then
``OTHER_SRC``) builds sections 2 and 4, and the two take turns running small batches of
each system in random order, so both see the same load; it prints the medians and their
ratio (this / other). Whole runs alternated one after the other drift too much to
compare.
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
import os  # noqa: E402
import queue as stdlib_queue  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

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


def push_then_pop(pairs: list[tuple[Any, float]], queue: Any, pop: str) -> Cycle:
    """Cycles of ``queue.push(item, priority)`` then ``queue.<pop>()`` over ``pairs``."""

    def cycles(count: int) -> None:
        push, pop_head = queue.push, getattr(queue, pop)
        for item, priority in pairs[:count]:
            push(item, priority)
            pop_head()

    return cycles


def batches(pairs: list[tuple[Any, float]], queue: Any) -> Cycle:
    """``queue.push_many`` then ``queue.pop_many`` of :data:`BATCH` pairs at a time."""

    def cycles(count: int) -> None:
        for start in range(0, count, BATCH):
            queue.push_many(pairs[start : start + BATCH])
            queue.pop_many(BATCH)

    return cycles


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

    def engine_one(count: int) -> None:
        add, pop_min = engine.add, engine.pop_min
        for item, priority in pushed[:count]:
            add(seq(next(counter)) + item, priority)
            pop_min()

    def engine_batch(count: int) -> None:
        for start in range(0, count, BATCH):
            engine.add_many(
                [(seq(next(counter)) + item, p) for item, p in pushed[start : start + BATCH]]
            )
            engine.pop_min(BATCH)

    return {
        "ranked Queue": push_then_pop(pushed, queue, "pop"),
        "engine add + pop_min": engine_one,
        "ranked push_many + pop_many (100)": batches(pushed, queue),
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
        "ranked Queue": push_then_pop(pushed, queue, "pop"),
        "ranked push_many + pop_many (100)": batches(pushed, queue),
        "heapq (priority, seq, item)": heapq_one,
        "queue.PriorityQueue (thread safe)": locked_one,
    }


def operation_systems(size: int, cycles: int) -> dict[str, Cycle]:
    """Each memory operation on a queue of its own holding ``size`` items; every cycle
    leaves its queue as it found it (a push and a pop, a reserve and an ack, ...)."""
    from ranked.backends.memory import MemoryBackend
    from ranked.queue import Queue

    preload, pushed = workload(size, cycles)
    words = [(item.decode(), priority) for item, priority in pushed]
    backend = MemoryBackend()
    now = time.time_ns() // 1000

    def loaded(name: str, **options: Any) -> Queue[Any]:
        queue: Queue[Any] = Queue(backend, name, **options)
        queue.push_many(preload)
        return queue

    push_keyword_pop_queue = loaded("keywords")
    batch_queue = loaded("batch")
    at_instant_queue = loaded("instant")
    pop_timeout_queue = loaded("timeout")
    peek_queue = loaded("peek")
    size_of_queue = loaded("size")
    reserve_ack_queue = loaded("reserve")

    push_pop = push_then_pop(pushed, loaded("push-pop"), "pop")
    push_pop_priority = push_then_pop(pushed, loaded("pair"), "pop_with_priority")
    push_pop_text = push_then_pop(words, loaded("text", text=True), "pop")

    def push_keyword_pop(count: int) -> None:
        queue = push_keyword_pop_queue
        push, pop = queue.push, queue.pop
        for item, priority in pushed[:count]:
            push(item, priority=priority)
            pop(timeout=None)

    def at_instant(count: int) -> None:
        queue = at_instant_queue
        push, pop = queue.push, queue.pop
        for item, priority in pushed[:count]:
            push(item, priority, now_us=now)
            pop(now_us=now)

    def pop_timeout(count: int) -> None:
        queue = pop_timeout_queue
        push, pop = queue.push, queue.pop
        for item, priority in pushed[:count]:
            push(item, priority)
            pop(timeout=1)

    def peek(count: int) -> None:
        queue = peek_queue
        head = queue.peek
        for _ in range(count):
            head()

    def size_of(count: int) -> None:
        queue = size_of_queue
        size = queue.size
        for _ in range(count):
            size()

    def reserve_ack(count: int) -> None:
        queue = reserve_ack_queue
        reserve, ack, push = queue.reserve, queue.ack, queue.push
        for _ in range(count):
            lease = reserve(30)
            assert lease is not None
            ack(lease)
            push(lease.item, lease.priority)

    def construct(count: int) -> None:
        for _ in range(count):
            Queue(backend, "made")

    return {
        "push + pop": push_pop,
        "push + pop_with_priority": push_pop_priority,
        "push + pop, text=True": push_pop_text,
        "push(priority=) + pop(timeout=None)": push_keyword_pop,
        "push_many + pop_many (100), per item": batches(pushed, batch_queue),
        "push + pop with now_us": at_instant,
        "push + pop(timeout=1) of a ready item": pop_timeout,
        "peek": peek,
        "size": size_of,
        "reserve + ack + push back": reserve_ack,
        "Queue(backend, name)": construct,
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

    def raw_one(count: int) -> None:
        zadd, zpopmin = client.zadd, client.zpopmin
        for item, priority in pushed[:count]:
            zadd("raw", {item: priority})
            zpopmin("raw")

    def close() -> None:
        backend.close()
        client.close()

    return {
        "ranked Queue": push_then_pop(pushed, queue, "pop"),
        "redis-py ZADD + ZPOPMIN": raw_one,
    }, close


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


def operations(size: int, cycles: int, repeats: int, emit: Callable[[str], None]) -> None:
    """Section 4: each memory operation's median cost."""
    emit(f"### 4. memory, n = {size:,}: each operation")
    emit("")
    results = median_per_cycle(operation_systems(size, cycles * repeats), cycles, repeats)
    emit("| operation | median per call (per item for batches) |")
    emit("|---|---|")
    for name, seconds in results.items():
        emit(f"| {name} | {_fmt_time(seconds)} |")
    emit("")


def serve(cycles: int) -> None:
    """A ``--compare`` worker: builds sections 2 and 4 with the ranked on ``sys.path``,
    prints their names (tab-separated), then for each "name<TAB>count" line on stdin runs
    that many cycles and prints the seconds per cycle."""
    systems = {f"2 | {k}": v for k, v in heap_systems(10_000, cycles).items()}
    systems |= {f"4 | {k}": v for k, v in operation_systems(10_000, cycles).items()}
    print("\t".join(systems), flush=True)
    for line in sys.stdin:
        name, count = line.rstrip("\n").rsplit("\t", 1)
        started = time.perf_counter()
        systems[name](int(count))
        print((time.perf_counter() - started) / int(count), flush=True)


def compare(other_src: str, rounds: int, batch: int) -> None:
    """This checkout's ``src`` against ``other_src``, sections 2 and 4 (see the module)."""
    trees = {"this": str(HERE.parent / "src"), "other": str(Path(other_src).resolve())}
    workers = {
        name: subprocess.Popen(
            [sys.executable, __file__, "--serve", str(rounds * batch + 10)],
            env={**os.environ, "PYTHONPATH": src},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name, src in trees.items()
    }
    pipes = {name: (worker.stdin, worker.stdout) for name, worker in workers.items()}
    headers = []
    for _, receive in pipes.values():
        assert receive is not None
        headers.append(receive.readline().rstrip("\n").split("\t"))
    names = headers[0]
    if any(header != names for header in headers):
        raise SystemExit("the two versions build different systems")
    times: dict[str, dict[str, list[float]]] = {tree: {n: [] for n in names} for tree in trees}
    order = random.Random(SEED)
    for _ in range(rounds):
        for name in names:
            count = 100 if name.endswith("Queue(backend, name)") else batch
            for tree in order.sample(list(trees), len(trees)):
                send, receive = pipes[tree]
                assert send is not None and receive is not None
                send.write(f"{name}\t{count}\n")
                send.flush()
                times[tree][name].append(float(receive.readline()))
    for worker in workers.values():
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    print(
        f"{rounds} rounds of {batch:,} cycles, alternating: this = {trees['this']}, "
        f"other = {trees['other']}"
    )
    print()
    print("| system | other (median) | this (median) | this / other |")
    print("|---|---|---|---|")
    for name in names:
        other = statistics.median(times["other"][name])
        this = statistics.median(times["this"][name])
        print(f"| {name} | {_fmt_time(other)} | {_fmt_time(this)} | {this / other:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="n = 10,000 and few cycles")
    parser.add_argument("--size", type=int, default=None, help="queued items (default 1,000,000)")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/RESULTS-queue.md")
    parser.add_argument(
        "--memory-only", action="store_true", help="sections 1, 2 and 4: no Redis, no markdown"
    )
    parser.add_argument("--ops", action="store_true", help="section 4 only: each operation")
    parser.add_argument("--compare", metavar="OTHER_SRC", help="A/B against another src")
    parser.add_argument("--rounds", type=int, default=61, help="--compare rounds")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    if args.compare:
        compare(args.compare, args.rounds, 1_000)
        return
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

    if args.ops:
        operations(heap_size, memory_cycles, repeats, print)
        return
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
            operations(heap_size, memory_cycles, repeats, emit)
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
        emit()
        operations(heap_size, memory_cycles, repeats, emit)
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
