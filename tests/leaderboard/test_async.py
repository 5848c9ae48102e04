"""AsyncLeaderboard (same logic, awaited) and concurrency: no lost update (every backend).

pytest-asyncio is not used: each test runs its coroutine with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from ranked.core.models import Entry
from ranked.errors import OutOfRangeError
from ranked.leaderboard import AsyncLeaderboard, Leaderboard, asubmit_to_boards_nonatomic

from .conftest import Env

THREADS = 8
PER_THREAD = 100


def test_threads_incrementing_one_board_lose_nothing(env: Env) -> None:
    board = Leaderboard(env.backend, "hot", operator="incr")
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            for step in range(PER_THREAD):
                board.submit("shared", 1)
                if step % 10 == 0:
                    board.submit_many([(f"t{index}", 1), ("shared", 0)])
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert board.score("shared") == THREADS * PER_THREAD
    assert board.count() == THREADS + 1
    assert all(board.score(f"t{i}") == PER_THREAD // 10 for i in range(THREADS))


def test_async_tasks_incrementing_one_board_lose_nothing(env: Env) -> None:
    async def main() -> float | None:
        backend = env.open_async()
        board = AsyncLeaderboard(backend, "hot", operator="incr")

        async def worker() -> None:
            for _ in range(50):
                await board.submit("shared", 2)

        await asyncio.gather(*(worker() for _ in range(10)))
        score = await board.score("shared")
        await backend.close()
        return score

    assert asyncio.run(main()) == 1000.0
    assert Leaderboard(env.backend, "hot").score("shared") == 1000.0


def test_async_board_answers_like_the_sync_board(env: Env) -> None:
    sync = Leaderboard(env.backend, "twin", operator="set", rank_style="dense")
    sync.submit_many([("a", 3), ("b", 3), ("c", 2), ("d", 1)])
    sync.add_friends("a", ["c"])
    sync.set_member_data("a", "A", {"x": 1})

    async def main() -> None:
        backend = env.open_async()
        async with AsyncLeaderboard(backend, "twin", operator="set", rank_style="dense") as board:
            assert await board.top(4) == sync.top(4)
            page = await board.page(size=2)
            assert page == sync.page(size=2)
            assert await board.page(page.next_cursor) == sync.page(page.next_cursor)
            assert await board.page_at(1, 2) == sync.page_at(1, 2)
            assert await board.around("c", 1, 1) == sync.around("c", 1, 1)
            assert await board.ranks_of(["d", "x", "a"]) == sync.ranks_of(["d", "x", "a"])
            assert await board.rank("c") == 2 and await board.entry("c") == sync.entry("c")
            assert await board.count() == 4 and await board.count_between(2, 3) == 3
            assert await board.between(1, 2) == sync.between(1, 2)
            assert await board.percentile("c") == sync.percentile("c") == 25.0
            assert await board.friends_board("a") == sync.friends_board("a")
            assert await board.friends("a") == {"c"}
            assert (await board.member_data(["a"]))["a"].display_name == "A"
            result = await board.submit("e", 5)
            assert (result.rank, result.previous_rank) == (1, None)
            batch = await board.submit_many([("f", 0), ("e", 6)])
            assert [r.rank for r in batch] == [5, 1]
            await board.set_metadata({"k": "v"})
            assert await board.metadata() == {"k": "v"}
            other = AsyncLeaderboard(backend, "twin2")
            fan = await asubmit_to_boards_nonatomic([board, other], "g", 4)
            assert [r.score for r in fan] == [4.0, 4.0]
            assert await board.add_friends("a", ["d"]) == 1
            assert await board.remove_friends("a", ["d"]) == 1
            assert await board.remove("g") is True
            assert await board.score("g") is None
            assert await other.clear() >= 1
        await backend.close()

    asyncio.run(main())
    assert sync.score("e") == 6.0


def test_boards_opened_from_urls_own_their_backend(env: Env) -> None:
    async def main() -> tuple[float | None, float | None]:
        async with AsyncLeaderboard(env.url, "url") as board:
            await board.submit("a", 7)
            return await board.score("a"), await board.score("b")

    with Leaderboard(env.url, "url") as sync:
        sync.submit("b", 8)
        assert sync.score("b") == 8.0
        first, second = asyncio.run(main())
        assert first == 7.0
        # Every URL reaches the same data: the server, or the process's memory:// store.
        assert second == 8.0


def test_async_reads_with_data_and_merged_metadata(env: Env) -> None:
    async def main() -> None:
        backend = env.open_async()
        board = AsyncLeaderboard(backend, "adata", operator="set")
        await board.submit_many([("a", 3), ("b", 2), ("c", 1)])
        await board.set_member_data("b", "Bee", {"x": 1})
        await board.add_friends("a", ["b"])
        top = await board.top(3, with_data=True)
        assert [e.data.display_name if e.data else None for e in top] == [None, "Bee", None]
        page = await board.page(size=1, with_data=True)
        assert page.next_cursor is not None
        second = await board.page(page.next_cursor, with_data=True)
        assert second.entries[0].data is not None
        assert (await board.page_at(1, 1, with_data=True)).entries[0].data is not None
        assert (await board.around("c", 1, 0, with_data=True)).entries[0].data is not None
        assert [e.member for e in await board.between(2, 2, with_data=True) if e.data] == ["b"]
        friends = await board.friends_board("a", with_data=True)
        assert (friends.rank, [e.data is not None for e in friends]) == (1, [False, True])
        assert await board.merge_metadata({"k": 1}) == {"k": 1}
        assert await board.merge_metadata({"j": 2}) == {"k": 1, "j": 2}
        lonely = await board.friends_board("c")
        assert (list(lonely), lonely.rank) == ([Entry("c", 1.0, 1)], 1)
        await backend.close()

    asyncio.run(main())


def test_async_fan_out_checks_every_board_before_writing(env: Env) -> None:
    async def main() -> None:
        backend = env.open_async()
        plain = AsyncLeaderboard(backend, "plain")
        timed = AsyncLeaderboard(backend, "timed", tie_break="time")
        await plain.submit("seed", 1)
        before = env.snapshot()
        with pytest.raises(OutOfRangeError):
            await asubmit_to_boards_nonatomic([plain, timed], "a", 5_000_000)
        assert env.snapshot() == before  # before: the plain board took the score
        done = await asubmit_to_boards_nonatomic([plain, timed], "a", 7)
        assert [r.score for r in done] == [7.0, 7]
        await backend.close()

    asyncio.run(main())
