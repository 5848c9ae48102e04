"""Memory backend only: many threads mixing writes, batches and reads on one board."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ranked.backends.memory import MemoryBackend
from ranked.core.ranks import RankStyle, ranks
from ranked.engine.zset import SortedSet

from .conftest import Steps, request, target

WRITERS = 16
ROUNDS = 500


def run_threads(workers: list[Callable[[], None]]) -> None:
    """Start every worker at once; re-raise the first error any of them hit."""
    start = threading.Barrier(len(workers))
    errors: list[BaseException] = []

    def wrap(work: Callable[[], None]) -> None:
        try:
            start.wait()
            work()
        except BaseException as error:  # a thread cannot fail the test by itself
            errors.append(error)

    threads = [threading.Thread(target=wrap, args=(work,)) for work in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def test_sixteen_writers_lose_no_increment() -> None:
    memory = Steps(MemoryBackend())

    def writer() -> None:
        for _ in range(ROUNDS):
            memory.submit(request(b"shared", 1, "incr"))

    run_threads([writer] * WRITERS)
    assert memory.scores(target().key, [b"shared"]) == [float(WRITERS * ROUNDS)]


def test_writers_batches_and_readers_together() -> None:
    memory = Steps(MemoryBackend())
    daily, total = target(window="d:1", ttl_ms=60_000), target()
    board = (daily, total)

    def writer(number: int) -> Callable[[], None]:
        def work() -> None:
            for round_ in range(ROUNDS):
                memory.submit(request(b"w%d" % number, 1, "incr", targets=board))
                if round_ % 50 == 0:
                    memory.submit_batch(
                        [request(b"b%d" % number, 1, "incr", targets=board) for _ in range(5)]
                    )

        return work

    def reader() -> None:
        for _ in range(ROUNDS):
            rows = memory.page(total, 0, 50, True, RankStyle.DENSE)
            assert [row[2] for row in rows] == ranks([row[1] for row in rows], "dense")
            found = memory.around(total, b"w0", 2, 2, True, RankStyle.COMPETITION)
            if found is not None:
                index, window = found
                assert window[index][0] == b"w0"

    run_threads([writer(n) for n in range(8)] + [reader] * 4)
    for key in (daily, total):
        scores = memory.scores(key, [b"w%d" % n for n in range(8)] + [b"b%d" % n for n in range(8)])
        assert scores == [float(ROUNDS)] * 8 + [float(5 * (ROUNDS // 50))] * 8
    zset = memory.keyspace.zset(total.key)
    assert isinstance(zset, SortedSet)
    zset._check()
