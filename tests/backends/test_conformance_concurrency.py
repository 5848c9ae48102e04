"""Conformance: many threads (and tasks) on one board lose no update; the async twin agrees."""

from __future__ import annotations

import asyncio
import threading

from ranked.core.ranks import RankStyle

from .conftest import AsyncRunner, Steps, request, submit, target

THREADS = 8
ROUNDS = 150


def test_threads_incrementing_one_board_lose_no_update(backend: Steps) -> None:
    start = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def worker(number: int) -> None:
        try:
            start.wait()
            for _ in range(ROUNDS):
                submit(backend, b"shared", 1, "incr")
                submit(backend, b"own%d" % number, 2, "incr")
        except BaseException as error:  # reported below: a thread cannot fail the test
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert backend.scores(target().key, [b"shared"]) == [float(THREADS * ROUNDS)]
    own = backend.scores(target().key, [b"own%d" % n for n in range(THREADS)])
    assert own == [float(2 * ROUNDS)] * THREADS
    rows = backend.page(target(), 0, 99, True, RankStyle.COMPETITION)
    assert rows[0] == (b"shared", float(THREADS * ROUNDS), 1)
    assert {row[2] for row in rows[1:]} == {2}


def test_threads_see_consistent_outcomes(backend: Steps) -> None:
    """Each increment's outcome has previous + 1 == score: no two saw the same previous."""
    seen: list[tuple[float, float | None]] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(ROUNDS):
            outcome = submit(backend, b"shared", 1, "incr")
            with lock:
                seen.append((outcome.score, outcome.previous_score))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(score == (previous or 0.0) + 1 for score, previous in seen)
    assert sorted(score for score, _ in seen) == [float(n) for n in range(1, 4 * ROUNDS + 1)]


def test_tasks_incrementing_one_board_lose_no_update(async_backend: AsyncRunner) -> None:
    async def scenario(backend: Steps) -> None:
        async def worker(number: int) -> None:
            for _ in range(40):
                await backend.submit(request(b"shared", 1, "incr"))
                await backend.submit(request(b"own%d" % number, 1, "incr"))

        await asyncio.gather(*(worker(n) for n in range(10)))
        assert await backend.scores(target().key, [b"shared"]) == [400.0]
        assert await backend.count(target().key) == 11

    async_backend.run(scenario)


def test_async_twin_gives_the_same_answers(async_backend: AsyncRunner) -> None:
    async def scenario(backend: Steps) -> None:
        board = target()
        outcomes = await backend.submit_batch(
            [request(member, score, "set") for member, score in [(b"a", 100), (b"b", 100)]]
        )
        assert [o[0].rank for o in outcomes] == [1, 1]
        first = await backend.submit(request(b"c", 90, "best", style=RankStyle.DENSE))
        assert (first[0].rank, first[0].previous_rank, first[0].changed) == (2, None, True)
        await backend.submit(request(b"d", 80, "set"))
        assert await backend.ranks(board, [b"a", b"x"], True, RankStyle.UNIQUE) == [
            (100.0, 2),
            None,
        ]
        assert await backend.page(board, 1, 2, True, RankStyle.COMPETITION) == [
            (b"a", 100.0, 1),
            (b"c", 90.0, 3),
        ]
        assert await backend.page_after(board, 90.0, b"c", 5, True, RankStyle.DENSE) == [
            (b"d", 80.0, 3)
        ]
        assert await backend.around(board, b"d", 1, 1, True, RankStyle.UNIQUE) == (
            2,
            [(b"a", 100.0, 2), (b"c", 90.0, 3), (b"d", 80.0, 4)],
        )
        assert await backend.by_score(board, 85, 100, 1, 5, True, RankStyle.DENSE) == [
            (b"a", 100.0, 1),
            (b"c", 90.0, 2),
        ]
        assert await backend.count(board.key, 85, 95) == 1
        assert await backend.percentile(board, b"c", True) == (90.0, 4, 1)
        assert await backend.percentile(board, b"x", True) is None
        assert await backend.scores(board.key, [b"d", b"x"]) == [80.0, None]
        assert await backend.remove([board], [b"d"]) == 1
        await backend.hash_set(b"rk:{arena}:data", {b"a": b"A"}, 60_000)
        assert await backend.hash_get(b"rk:{arena}:data", [b"a"]) == [b"A"]
        assert await backend.hash_delete(b"rk:{arena}:data", [b"a"]) == 1
        assert await backend.set_add(b"rk:{arena}:friends:a", [b"b", b"c"]) == 2
        assert await backend.set_remove(b"rk:{arena}:friends:a", [b"b"]) == 1
        assert await backend.set_members(b"rk:{arena}:friends:a") == {b"c"}
        await backend.expire_at([board.key], backend.now_ms() - 60_000)
        assert await backend.count(board.key) == 0
        assert await backend.delete([b"rk:{arena}:friends:a"]) == 1
        assert isinstance(backend.now_ms(), int)

    async_backend.run(scenario)
