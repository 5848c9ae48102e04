"""Journal append throughput: 1, 8 and 64 writers appending one event at a time, as
threads calling ``store.append`` and as asyncio tasks sharing one ``AsyncAppender``.

Run from the repository root::

    python benchmarks/journal_append.py                      # SQLite, always/batch/none
    python benchmarks/journal_append.py --pg postgresql://user@host:5432/db
                                                             # also PostgreSQL (the database
                                                             # gets the journal's tables)
    python benchmarks/journal_append.py --quick              # smoke run (few appends)
    python benchmarks/journal_append.py --via threads        # threads only

Each figure is the median of 3 runs of appends per second: every run appends ``--appends``
events in all (split evenly over the writers), each event with its own idempotency key (so
each append also looks its key up), to a fresh SQLite file in a temporary directory (to
the same PostgreSQL database, keys prefixed by the run). ``batch`` uses the default
``max_delay_ms`` (10). The machine's other load moves the figures: compare runs made side
by side.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script, this folder would come first on sys.path and benchmarks/queue.py would
# shadow the standard library's queue (psycopg imports it): this checkout's src instead.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent / "src"))

from ranked.journal import NewEvent, open_journal  # noqa: E402 - needs the path set above

WRITERS = (1, 8, 64)
MODES = ("always", "batch", "none")
RUNS = 3
_run_ids = itertools.count()


def _events(run: int, writer: int, count: int) -> list[NewEvent]:
    return [
        NewEvent(
            board=f"b{writer}",
            operation="submit",
            member=f"m{i}".encode(),
            value=i.to_bytes(8, "big"),
            at_us=1_700_000_000_000_000 + i,
            key=f"{run}-{writer}-{i}",
        )
        for i in range(count)
    ]


def by_threads(url: str, writers: int, total: int) -> float:
    """Appends per second of ``writers`` threads, each calling ``store.append``."""
    run = next(_run_ids)
    work = [_events(run, w, total // writers) for w in range(writers)]
    with open_journal(url) as store:
        start = threading.Barrier(writers + 1)

        def write(events: list[NewEvent]) -> None:
            start.wait()
            for event in events:
                store.append([event])

        threads = [threading.Thread(target=write, args=(events,)) for events in work]
        for thread in threads:
            thread.start()
        start.wait()
        began = time.perf_counter()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - began
    return sum(map(len, work)) / elapsed


def by_tasks(url: str, writers: int, total: int) -> float:
    """Appends per second of ``writers`` asyncio tasks sharing one ``AsyncAppender``."""
    from ranked.journal.aio import AsyncAppender

    run = next(_run_ids)
    work = [_events(run, w, total // writers) for w in range(writers)]
    with open_journal(url) as store:
        appender = AsyncAppender(store)

        async def write(events: list[NewEvent]) -> None:
            for event in events:
                await appender.append([event])

        async def main() -> float:
            began = time.perf_counter()
            await asyncio.gather(*(write(events) for events in work))
            return time.perf_counter() - began

        elapsed = asyncio.run(main())
    return sum(map(len, work)) / elapsed


def median_rate(
    measure: Callable[[str, int, int], float], url: Callable[[], str], writers: int, total: int
) -> float:
    """The median appends/s of ``RUNS`` runs, each on a journal at a fresh ``url()``."""
    return statistics.median(measure(url(), writers, total) for _ in range(RUNS))


def _fmt(rate: float) -> str:
    return f"{rate / 1000:.1f}k" if rate >= 1000 else f"{rate:.0f}"


def _sqlite(folder: str, mode: str) -> Callable[[], str]:
    files = itertools.count()
    return lambda: f"sqlite://{folder}/{mode}{next(files)}.db?durability={mode}"


def _postgresql(url: str, mode: str) -> Callable[[], str]:
    sep = "&" if "?" in url else "?"
    return lambda: f"{url}{sep}durability={mode}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pg", metavar="URL", help="also PostgreSQL, at this database URL")
    parser.add_argument("--appends", type=int, default=4000, help="appends per run")
    parser.add_argument("--quick", action="store_true", help="smoke run: 256 appends per run")
    parser.add_argument("--via", choices=("threads", "tasks", "both"), default="both")
    args = parser.parse_args()
    total = 256 if args.quick else args.appends
    vias = {"threads": by_threads, "tasks": by_tasks}
    if args.via != "both":
        vias = {args.via: vias[args.via]}
    with tempfile.TemporaryDirectory(prefix="ranked-journal-bench-") as tmp:
        stores = [(f"sqlite {mode}", _sqlite(tmp, mode)) for mode in MODES]
        if args.pg:
            stores += [(f"postgresql {mode}", _postgresql(args.pg, mode)) for mode in MODES]
        columns = [f"{via} x{w}" for via in vias for w in WRITERS]
        print(f"appends/s, median of {RUNS} runs of {total} appends (one event each)\n")
        print("| store, durability | " + " | ".join(columns) + " |")
        print("|---|" + "---|" * len(columns))
        for name, url in stores:
            cells = [
                _fmt(median_rate(measure, url, writers, total))
                for measure in vias.values()
                for writers in WRITERS
            ]
            print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
