"""The journal's costs, peers side by side in one run (docs/durability.md, issue targets).

    python benchmarks/journal.py              # everything (about 10 minutes)
    python benchmarks/journal.py --quick      # smoke run
    python benchmarks/journal.py --markdown   # also write benchmarks/RESULTS-journal.md

1. Durable submissions per second (``submit(member, 1, operator="incr")`` on a
   ``memory://`` board, 100,000 members drawn at random) with 1, 8 and 64 concurrent
   writers, as threads and as asyncio tasks: the board with no journal; with SQLite
   ``always``, ``batch`` (10 ms) and ``none``; with PostgreSQL ``always`` (a throwaway server
   this program starts). Peers doing the same writes (ZINCRBY of one member of 100,000):
   redis-server with ``appendonly yes`` and ``appendfsync always`` / ``everysec``, driven
   by the same number of Python threads and of asyncio tasks through redis-py (the client
   cost a Python application pays) and by ``redis-benchmark`` (C, as many connections:
   the server's own ceiling). Each figure is the median of 3 timed runs of ``--seconds`` each.
   The hand-off floor: the same writers with no journal and no work, each waiting for
   one other thread to answer it (answers in batches, as a committer gives them): the
   ceiling of any journal mode that answers a write only after another thread has seen it.
2. Rebuild from the journal alone: a 1,000,000-event all-time ``incr`` board opened on a
   fresh ``memory://`` index with no snapshot (the journal folded in SQL, then bulk-loaded
   by the engine), over 100,000 members and over 1,000,000: events per second.
3. Restart of the 1,000,000-member board from its snapshot; the snapshot's size against
   the engine's bytes for the board's sorted sets.

The machine is shared and noisy: quote medians, compare within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path[0] = str(HERE.parent)  # benchmarks/queue.py must not shadow the stdlib's queue
elif str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from benchmarks._servers import BenchPostgres, BenchRedis  # noqa: E402 - path set above
from benchmarks._wrk import write_results  # noqa: E402
from benchmarks.engine import machine_info  # noqa: E402
from ranked import AsyncLeaderboard, Leaderboard  # noqa: E402
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend  # noqa: E402

MEMBERS = 100_000
WRITERS = (1, 8, 64)


def _members(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [f"player:{rng.randrange(MEMBERS)}" for _ in range(count)]


# -- 1. durable submissions per second ---------------------------------------------------


def _threads(writers: int, seconds: float, call: Callable[[str], object]) -> float:
    """Acknowledged calls per second of ``writers`` threads calling ``call`` in a loop."""
    stop = threading.Event()
    counts = [0] * writers
    names = [_members(w, 4096) for w in range(writers)]

    go = threading.Event()

    def work(w: int) -> None:
        mine, n = names[w], 0
        go.wait()
        while not stop.is_set():
            call(mine[n & 4095])
            n += 1
        counts[w] = n

    threads = [threading.Thread(target=work, args=(w,)) for w in range(writers)]
    for thread in threads:  # started before the clock: a busy thread slows each start
        thread.start()
    start = time.perf_counter()
    go.set()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.perf_counter() - start)


def _median(runs: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(runs))


def _board(journal: str | None, name: str) -> Leaderboard:
    return Leaderboard(MemoryBackend(), name, operator="incr", journal=journal, snapshot_every=None)


def _journal_url(kind: str, tmp: str, pg: str | None, n: int) -> str | None:
    if kind == "none-journal":
        return None
    if kind == "postgresql":
        assert pg is not None
        return f"{pg}?durability=always"
    mode = kind.removeprefix("sqlite-")
    return f"sqlite://{tmp}/j{n}.db?durability={mode}&max_delay_ms=10"


def durable_rates(seconds: float, runs: int, pg: str | None) -> list[tuple[str, int, float, float]]:
    """(configuration, writers, threads/s, tasks/s) for every board configuration."""
    rows = []
    kinds = ["none-journal", "sqlite-always", "sqlite-batch", "sqlite-none"]
    if pg is not None:
        kinds.append("postgresql")
    counter = 0
    with tempfile.TemporaryDirectory(prefix="ranked-bench-journal-") as tmp:
        for kind in kinds:
            for writers in WRITERS:
                counter += 1
                url = _journal_url(kind, tmp, pg, counter)
                board = _board(url, f"b{counter}")

                def submit(member: str, board: Leaderboard = board) -> object:
                    return board.submit(member, 1)

                sync = _median(runs, lambda w=writers, call=submit: _threads(w, seconds, call))  # type: ignore[misc]
                board.close()
                counter += 1
                url = _journal_url(kind, tmp, pg, counter)

                async def tasks(url: str | None = url, n: int = counter, w: int = writers) -> float:
                    async with AsyncLeaderboard(
                        AsyncMemoryBackend(),
                        f"a{n}",
                        operator="incr",
                        journal=url,
                        snapshot_every=None,
                    ) as aboard:
                        return await _async_rate(aboard, w, seconds)

                rate = _median(runs, lambda: asyncio.run(tasks()))
                rows.append((kind, writers, sync, rate))
                print(
                    f"  {kind:14} {writers:3} writers: threads {sync:9,.0f}/s tasks {rate:9,.0f}/s"
                )
    return rows


async def _async_rate(board: AsyncLeaderboard, writers: int, seconds: float) -> float:
    """Acknowledged submissions per second of ``writers`` tasks."""
    return await _tasks_rate(lambda member: board.submit(member, 1), writers, seconds)


async def _tasks_rate(
    call: Callable[[str], Awaitable[object]], writers: int, seconds: float
) -> float:
    """Calls per second of ``writers`` tasks awaiting ``call(member)`` one after the other.
    Each task stops at a deadline of its own: a write on memory:// with no journal
    completes without ever suspending, so a flag set by another task would never be seen."""
    counts = [0] * writers
    names = [_members(w, 4096) for w in range(writers)]
    clock = time.perf_counter
    start = clock()
    deadline = start + seconds

    async def work(w: int) -> None:
        mine, n = names[w], 0
        while clock() < deadline:
            await call(mine[n & 4095])
            n += 1
        counts[w] = n

    await asyncio.gather(*(work(w) for w in range(writers)))
    return sum(counts) / (clock() - start)


def handoff_floor(seconds: float, runs: int, writers: int) -> tuple[float, float]:
    """(threads/s, tasks/s): ``writers`` writers that each wait, call after call, until
    one helper thread answers them, taking every waiting writer at once (no other work)."""
    import queue

    waiting: queue.SimpleQueue[Any] = queue.SimpleQueue()
    stopped = object()

    def answer_all(wake: Callable[[list[Any]], None]) -> None:
        while True:
            batch = [waiting.get()]
            while not waiting.empty():
                batch.append(waiting.get())
            if stopped in batch:
                wake([b for b in batch if b is not stopped])
                return
            wake(batch)

    def release(batch: list[Any]) -> None:
        for lock in batch:
            lock.release()

    def blocking_call(_member: str) -> None:
        lock = threading.Lock()
        lock.acquire()
        waiting.put(lock)
        lock.acquire()  # released by the helper

    def threads_rate() -> float:
        helper = threading.Thread(target=answer_all, args=(release,))
        helper.start()
        try:
            return _threads(writers, seconds, blocking_call)
        finally:
            waiting.put(stopped)
            helper.join()

    async def tasks_rate() -> float:
        loop = asyncio.get_running_loop()

        def resolve(batch: list[Any]) -> None:
            loop.call_soon_threadsafe(_resolve_all, batch)

        helper = threading.Thread(target=answer_all, args=(resolve,))
        helper.start()

        def call(_member: str) -> asyncio.Future[None]:
            future = loop.create_future()
            waiting.put(future)
            return future

        try:
            return await _tasks_rate(call, writers, seconds)
        finally:
            waiting.put(stopped)
            await asyncio.to_thread(helper.join)

    return _median(runs, threads_rate), _median(runs, lambda: asyncio.run(tasks_rate()))


def _resolve_all(batch: list[asyncio.Future[None]]) -> None:
    for future in batch:
        if not future.done():
            future.set_result(None)


def redis_rates(seconds: float, runs: int) -> list[tuple[str, int, float, float, float]]:
    """(peer, writers, redis-py threads/s, redis-benchmark/s, redis-py asyncio tasks/s) for
    AOF always / everysec."""
    import redis

    rows = []
    for fsync in ("always", "everysec"):
        with BenchRedis(("--appendonly", "yes", "--appendfsync", fsync)) as server:
            for writers in WRITERS:
                pool = redis.ConnectionPool(host="127.0.0.1", port=server.port, max_connections=80)
                client = redis.Redis(connection_pool=pool)

                def incr(member: str, client: Any = client) -> object:
                    return client.zincrby("board", 1, member)

                py = _median(runs, lambda w=writers, call=incr: _threads(w, seconds, call))  # type: ignore[misc]
                pool.disconnect()
                port = server.port
                c = _median(runs, lambda w=writers, p=port: _redis_benchmark(p, w, seconds))  # type: ignore[misc]
                aio = _median(
                    runs,
                    lambda w=writers, p=port: asyncio.run(_redis_tasks(p, w, seconds)),  # type: ignore[misc]
                )
                rows.append((f"redis-aof-{fsync}", writers, py, c, aio))
                print(
                    f"  redis AOF {fsync:8} {writers:3}: redis-py threads {py:9,.0f}/s"
                    f" tasks {aio:9,.0f}/s C {c:9,.0f}/s"
                )
    return rows


async def _redis_tasks(port: int, writers: int, seconds: float) -> float:
    """ZINCRBYs per second of ``writers`` asyncio tasks through redis-py's asyncio client
    (a pool of as many connections)."""
    import redis.asyncio

    client = redis.asyncio.Redis(host="127.0.0.1", port=port, max_connections=writers)
    try:
        return await _tasks_rate(
            lambda member: client.zincrby("board", 1, member), writers, seconds
        )
    finally:
        await client.aclose()


def _redis_benchmark(port: int, clients: int, seconds: float) -> float:
    binary = shutil.which("redis-benchmark")
    if binary is None:
        return float("nan")
    requests = max(20_000, int(60_000 * seconds))
    done = subprocess.run(
        [
            binary,
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-c",
            str(clients),
            "-n",
            str(requests),
            "-r",
            str(MEMBERS),
            "-q",
            "ZINCRBY",
            "board",
            "1",
            "player:__rand_int__",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.findall(r"([\d.]+) requests per second", done.stdout)
    return float(found[-1]) if found else float("nan")


# -- 2 and 3: rebuild, restart, snapshot size ---------------------------------------------


def _journaled_board(url: str, name: str, events: int, members: int) -> Leaderboard:
    """A memory:// incr board of ``events`` events over ``members`` members (batches of
    10,000), journaled at ``url``."""
    rng = random.Random(7)
    board = Leaderboard(MemoryBackend(), name, operator="incr", journal=url, snapshot_every=None)
    batch = 10_000
    for base in range(0, events, batch):
        board.submit_many(
            [(f"player:{i % members}", rng.randrange(1, 1000)) for i in range(base, base + batch)]
        )
    return board


def _reopen(url: str, name: str) -> tuple[Leaderboard, float]:
    start = time.perf_counter()
    board = Leaderboard(MemoryBackend(), name, operator="incr", journal=url, snapshot_every=None)
    return board, time.perf_counter() - start


def rebuild_and_restart(events: int) -> dict[str, float]:
    """Rebuild rates from the journal alone (bulk load: the journal folded in SQL, then
    loaded by the engine) of ``events`` events over ``events / 10`` members and over
    ``events`` members, and restart times of the ``events``-member board from its
    snapshot; its snapshot's size against the engine's bytes."""
    found: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ranked-bench-rebuild-") as tmp:
        url = f"sqlite://{tmp}/journal.db?durability=none"
        for name, members in (("tenth", events // 10), ("big", events)):
            board = _journaled_board(url, name, events, members)
            top = board.top(10)
            if name == "big":
                board.close()  # writes the snapshot
            else:
                board._journal.snapshots = None  # type: ignore[union-attr]
                board.close()
            snaps = list(Path(f"{tmp}/journal.db.snapshots").glob(f"{name}.*.snap"))
            for snap in snaps:
                if name == "big":
                    found["snapshot_bytes"] = snap.stat().st_size
                    again, found["restart_snapshot_s"] = _reopen(url, name)
                    assert again.top(10) == top
                    keyspace = again.backend.keyspace  # type: ignore[attr-defined]
                    found["engine_bytes"] = sum(
                        value.memory_usage()
                        for key in keyspace.iter_keys()
                        if hasattr(value := keyspace.get(key), "memory_usage")
                    )
                    again._journal.snapshots = None  # type: ignore[union-attr]
                    again.close()
                snap.unlink()
            rebuilt, elapsed = _reopen(url, name)  # no snapshot: the journal alone
            assert rebuilt.top(10) == top
            rebuilt._journal.snapshots = None  # type: ignore[union-attr]
            rebuilt.close()
            found[f"rebuild_{name}_s"] = elapsed
            found[f"rebuild_{name}_events_per_s"] = events / elapsed
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--no-pg", action="store_true")
    args = parser.parse_args()
    seconds, runs, events = (0.3, 1, 20_000) if args.quick else (args.seconds, 3, 1_000_000)
    print(machine_info(None))
    print("1. durable submissions per second (memory:// board, incr)")
    if args.no_pg or shutil.which("postgres") is None:
        boards = durable_rates(seconds, runs, None)
    else:
        with BenchPostgres() as pg:
            boards = durable_rates(seconds, runs, pg.url)
    floor = handoff_floor(seconds, runs, WRITERS[-1])
    threads_floor, tasks_floor = floor
    print(f"  hand-off floor: threads {threads_floor:,.0f}/s tasks {tasks_floor:,.0f}/s")
    peers = redis_rates(seconds, runs)
    print(f"2-3. rebuild and restart ({events:,} events / members)")
    sizes = rebuild_and_restart(events)
    for name, value in sizes.items():
        print(f"  {name}: {value:,.3f}")
    if args.markdown:
        _write_markdown(boards, peers, floor, sizes, seconds, runs, events)


def _write_markdown(
    boards: list[tuple[str, int, float, float]],
    peers: list[tuple[str, int, float, float, float]],
    floor: tuple[float, float],
    sizes: dict[str, float],
    seconds: float,
    runs: int,
    events: int,
) -> None:
    always = {w: c for kind, w, _p, c, _a in peers if kind == "redis-aof-always"}
    always_py = {w: p for kind, w, p, _c, _a in peers if kind == "redis-aof-always"}
    always_aio = {w: a for kind, w, _p, _c, a in peers if kind == "redis-aof-always"}
    lines = [
        "# Journal benchmark (benchmarks/journal.py)",
        "",
        machine_info(None),
        f"- SQLite {sqlite3.sqlite_version}. Medians of {runs} runs of {seconds} s.",
        "",
        "## Durable submissions per second (memory:// board, `submit(m, 1, operator='incr')`)",
        "",
        "Against Redis `appendfsync always` doing the same writes in the same run: driven by"
        " redis-benchmark (C), and by redis-py with as many threads, or asyncio tasks.",
        "",
        "| configuration | writers | threads /s | asyncio tasks /s"
        " | threads vs AOF always (C) | tasks vs AOF always (C)"
        " | threads vs redis-py threads | tasks vs redis-py tasks |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, writers, sync, tasks in boards:
        lines.append(
            f"| {kind} | {writers} | {sync:,.0f} | {tasks:,.0f} |"
            f" {sync / always[writers]:.2f}x | {tasks / always[writers]:.2f}x |"
            f" {sync / always_py[writers]:.2f}x | {tasks / always_aio[writers]:.2f}x |"
        )
    plain = {w: c for kind, w, c, _t in boards if kind == "none-journal"}
    plain_tasks = {w: t for kind, w, _c, t in boards if kind == "none-journal"}
    lines += [
        "",
        "Cost of a journal in `none` mode (board without a journal / with one, per writer"
        " count): "
        + ", ".join(
            f"{w} writers: threads {plain[w] / c:.0f}x, tasks {plain_tasks[w] / t:.0f}x"
            for kind, w, c, t in boards
            if kind == "sqlite-none"
        )
        + ".",
        "",
        f"Hand-off floor ({WRITERS[-1]} writers, no journal, no work: each waits until one"
        f" other thread, running Python, answers it, in batches): threads {floor[0]:,.0f}/s,"
        f" tasks {floor[1]:,.0f}/s, that is {plain[WRITERS[-1]] / floor[0]:.1f}x and"
        f" {plain_tasks[WRITERS[-1]] / floor[1]:.1f}x the cost of a board without a journal:"
        " about the least a mode costs that answers a write only after another thread has it"
        " (a native answering thread, as the lane's, does a little better for threads).",
        "",
        "Peers, the same writes (ZINCRBY of one of 100,000 members):",
        "",
        "| peer | clients | redis-py threads /s | redis-py asyncio tasks /s"
        " | redis-benchmark (C) /s |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, writers, py, c, aio in peers:
        lines.append(f"| {kind} | {writers} | {py:,.0f} | {aio:,.0f} | {c:,.0f} |")
    lines += [
        "",
        f"## Rebuild and restart ({events:,} events of an all-time incr board)",
        "",
        "Rebuild from the journal alone into a fresh memory:// index (opening the board with"
        " no snapshot: the journal folded in SQL, then bulk-loaded):",
        "",
        f"- {events // 10:,} members (10 events each): {sizes['rebuild_tenth_events_per_s']:,.0f}"
        f" events/s ({sizes['rebuild_tenth_s']:.2f} s)",
        f"- {events:,} members (1 event each): {sizes['rebuild_big_events_per_s']:,.0f}"
        f" events/s ({sizes['rebuild_big_s']:.2f} s)",
        f"- restart of the {events:,}-member board from its snapshot:"
        f" {sizes['restart_snapshot_s']:.3f} s",
        f"- snapshot size: {sizes['snapshot_bytes']:,.0f} bytes; engine bytes of the board's"
        f" sorted sets: {sizes['engine_bytes']:,.0f}"
        f" ({sizes['snapshot_bytes'] / sizes['engine_bytes']:.2f}x)",
        "",
    ]
    write_results(Path(__file__).with_name("RESULTS-journal.md"), "\n".join(lines))


if __name__ == "__main__":
    main()
