"""The rank watcher on a real board of each backend, under a fake clock: the snapshot diff
at an interval (once per interval, not per write), the meaningful changes, the last hours
before the season ends, seed 003's combined plan, the ids, and what a diff reads."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any, TypeVar

import pytest

from ranked import NotifyConfigError
from ranked.backends.factory import open_async_backend
from ranked.core.windows import Season, WindowPlan
from ranked.leaderboard import AsyncLeaderboard, Leaderboard
from ranked.notify import (
    FINAL_DAY,
    PRESETS,
    AsyncRankWatcher,
    ChangeKind,
    Notification,
    NotifyPolicy,
    RankWatcher,
)

from .conftest import END, START, FakeClock, Store

T = TypeVar("T")
CUP = "s:cup"


def _run(make: Callable[[AsyncLeaderboard, FakeClock], Awaitable[T]], store: Store) -> T:
    async def main() -> T:
        clock = FakeClock(START + timedelta(days=1))
        backend = open_async_backend(store.url)
        board = AsyncLeaderboard(
            backend,
            "cup",
            windows=WindowPlan(seasons=(Season("cup", START, END),)),
            clock=clock.ms,
        )
        try:
            return await make(board, clock)
        finally:
            await board.close()
            await backend.close()

    return asyncio.run(main())


async def _fill(board: AsyncLeaderboard, scores: dict[str, float]) -> None:
    for member, score in scores.items():
        await board.submit(member, score, operator="set")


def _told(found: Sequence[Notification]) -> set[tuple[str, str, int | None, int | None]]:
    return {(n.member, n.kind.value, n.old_rank, n.new_rank) for n in found}


def _watch(watcher: AsyncRankWatcher) -> Callable[..., Awaitable[Any]]:
    """A submit that tells the watcher, as the service does."""

    async def submit(member: str, score: float) -> None:
        watcher.observe(await watcher.board.submit(member, score, operator="set"))

    return submit


def test_a_diff_runs_once_per_interval_not_per_write(store: Store) -> None:
    policy = NotifyPolicy(
        interval=timedelta(minutes=10), kinds=PRESETS["every-change"].kinds, window=CUP
    )

    async def main(board: AsyncLeaderboard, clock: FakeClock) -> None:
        await _fill(board, {f"p{i:02d}": 100 - i for i in range(20)})  # p00 first ... p19
        watcher = AsyncRankWatcher(board, policy, clock=clock)
        submit = _watch(watcher)
        assert await watcher.check() == []  # the baseline
        assert watcher.baselines == 1
        for step in range(1, 10):  # p19 climbs every minute, one rank at a time
            clock.advance(timedelta(minutes=1))
            await submit("p19", 100 - 19 + step + 0.5)
            assert await watcher.check() == []  # same slot: nothing yet
        clock.advance(timedelta(minutes=1))  # the next slot
        found = await watcher.check()
        assert ("p19", "rank_up", 20, 11) in _told(found)
        assert [n.member for n in found].count("p19") == 1  # once per interval
        assert watcher.diffs == 1
        assert await watcher.check() == []  # the slot ran: calling again does nothing

    _run(main, store)


def test_meaningful_changes_only(store: Store) -> None:
    policy = NotifyPolicy(interval=timedelta(minutes=5), window=CUP)  # top 10, top 3, first

    async def main(board: AsyncLeaderboard, clock: FakeClock) -> None:
        await _fill(board, {f"p{i:02d}": 100 - i for i in range(30)})
        watcher = AsyncRankWatcher(board, policy, clock=clock)
        submit = _watch(watcher)
        await watcher.check()
        await submit("p25", 99.5)  # 26th -> 3rd: top 3 (and top 10)
        await submit("p12", 90.5)  # 13th -> 11th: nothing
        await submit("p05", 94.2)  # 6th -> 6th: nothing
        await submit("p20", 200)  # 22nd by now -> 1st: first taken, p00 loses it
        clock.advance(timedelta(minutes=5))
        found = await watcher.check()
        assert _told(found) == {
            ("p25", "entered_top", 26, 3),
            # below the top read, the rank before is the one before its first write
            ("p20", "first_taken", 22, 1),
            ("p00", "first_lost", 1, 2),
        }
        top3 = next(n for n in found if n.member == "p25")
        assert top3.threshold == 3 and top3.score == 99.5 and top3.window == CUP
        assert top3.board == "cup" and top3.at == clock.now  # the slot, on the grid
        await submit("p29", 90.7)  # 30th -> 13th: not enough
        clock.advance(timedelta(minutes=5))
        assert await watcher.check() == []
        await submit("p29", 96.5)  # 13th (read by the previous diff) -> 7th: the top 10
        clock.advance(timedelta(minutes=5))
        assert _told(await watcher.check()) == {("p29", "entered_top", 13, 7)}

    _run(main, store)


def test_only_in_the_last_hours_before_the_season_ends(store: Store) -> None:
    policy = NotifyPolicy(interval=timedelta(hours=1), window=CUP, within=timedelta(hours=6))

    async def main(board: AsyncLeaderboard, clock: FakeClock) -> list[Notification]:
        await _fill(board, {"ann": 10, "bob": 5})
        watcher = AsyncRankWatcher(board, policy, clock=clock)
        assert watcher.next_check() == int((END - timedelta(hours=6)).timestamp() * 1_000_000)
        submit = _watch(watcher)
        told: list[Notification] = []
        clock.now = END - timedelta(hours=10)
        for hour in range(10):  # bob takes and loses first place every hour
            await submit("bob", 25 + 20 * hour if hour % 2 == 0 else 0)
            await submit("ann", 10 + 20 * hour + 10)
            clock.advance(timedelta(hours=1))
            told += await watcher.check()
            if hour < 3:
                assert watcher.baselines == 0 and told == []
        return told

    told = _run(main, store)
    assert told  # changes in the last 6 hours are told
    assert all(END - timedelta(hours=5) <= n.at <= END for n in told)


def test_a_window_that_never_ends_needs_an_end(store: Store) -> None:
    async def main(board: AsyncLeaderboard, clock: FakeClock) -> None:
        with pytest.raises(NotifyConfigError, match="never ends"):
            AsyncRankWatcher(board, NotifyPolicy(within=timedelta(hours=1)), clock=clock)
        watcher = AsyncRankWatcher(
            board,
            NotifyPolicy(within=timedelta(hours=1), ends_at=clock.now + timedelta(hours=2)),
            clock=clock,
        )
        await board.submit("ann", 1)
        assert await watcher.check() == [] and watcher.baselines == 0  # not yet
        clock.advance(timedelta(hours=1, minutes=30))
        assert await watcher.check() == [] and watcher.baselines == 1

    _run(main, store)


def test_the_final_day_plan(store: Store) -> None:
    """Nothing before the last 24 hours; then one diff every 30 minutes; only top-10
    entries and first place taken or lost, however often scores move."""
    policy = NotifyPolicy.preset("final-day", window=CUP)

    async def main(board: AsyncLeaderboard, clock: FakeClock) -> list[Notification]:
        await _fill(board, {f"p{i:02d}": 1000 - 10 * i for i in range(40)})
        watcher = AsyncRankWatcher(board, policy, clock=clock)
        submit = _watch(watcher)
        told: list[Notification] = []
        clock.now = END - timedelta(hours=48)
        step = 0
        while clock.now < END:  # someone gains XP every 10 minutes
            member = f"p{(step * 7) % 40:02d}"
            await submit(member, 1000 + step * 3 - ((step * 7) % 40) * 10)
            found = await watcher.check()
            if clock.now < END - timedelta(hours=24):
                assert found == [] and watcher.baselines == 0 and watcher.diffs == 0
            told += found
            clock.advance(timedelta(minutes=10))
            step += 1
        clock.now = END
        told += await watcher.check()  # the slot at the end: the last diff
        assert watcher.baselines == 1
        assert watcher.diffs == 48  # 24 h of 30-minute diffs
        return told

    told = _run(main, store)
    assert told
    for notification in told:
        assert notification.kind in FINAL_DAY.kinds
        if notification.kind is ChangeKind.ENTERED_TOP:
            assert notification.threshold == 10
            assert notification.new_rank is not None and notification.new_rank <= 10
        assert notification.at.minute in (0, 30) and notification.at.second == 0
    assert len({n.id for n in told}) == len(told)
    slots = [n.at for n in told]
    for slot in set(slots):  # a member is told at most once per diff
        members = [n.member for n in told if n.at == slot]
        assert len(members) == len(set(members))


def test_a_diff_reads_the_top_and_the_members_written_not_the_board(store: Store) -> None:
    policy = NotifyPolicy(interval=timedelta(minutes=1), window=CUP, thresholds=(10,))

    async def main(board: AsyncLeaderboard, clock: FakeClock) -> None:
        await board.submit_many([(f"p{i:04d}", 5000 - i) for i in range(1500)], operator="set")
        asked: list[int] = []
        tops: list[int] = []
        watcher = AsyncRankWatcher(board, policy, clock=clock)
        reads_of, top_of = board.ranks_of, board.top

        async def ranks_of(members: Sequence[Any], **kwargs: Any) -> Any:
            asked.append(len(members))
            return await reads_of(members, **kwargs)

        async def top(n: int = 10, **kwargs: Any) -> Any:
            tops.append(n)
            return await top_of(n, **kwargs)

        board.ranks_of = ranks_of  # type: ignore[method-assign]
        board.top = top  # type: ignore[method-assign]
        submit = _watch(watcher)
        await watcher.check()
        for member in ("p1400", "p1401", "p0700"):
            await submit(member, 4995.5 if member == "p1400" else 10)
        clock.advance(timedelta(minutes=1))
        found = await watcher.check()
        assert _told(found) == {("p1400", "entered_top", 1401, 6)}
        assert tops == [10, 10]
        assert sum(asked) <= 3 + 10  # the members written and the previous top, no more

    _run(main, store)


def test_ids_are_the_same_for_the_same_diff_in_another_watcher(store: Store) -> None:
    policy = NotifyPolicy(interval=timedelta(minutes=5), window=CUP)

    async def main(board: AsyncLeaderboard, clock: FakeClock) -> None:
        await _fill(board, {f"p{i:02d}": 100 - i for i in range(15)})
        one = AsyncRankWatcher(board, policy, clock=clock)
        two = AsyncRankWatcher(board, policy, clock=clock)
        await one.check()
        await two.check()
        one.observe(await board.submit("p14", 99.5, operator="set"))
        clock.advance(timedelta(minutes=5))
        first, second = await one.check(), await two.check()
        assert [n.id for n in first] == [n.id for n in second] and len(first) == 1
        assert first[0].old_rank == 15 and second[0].old_rank is None  # two was not told

    _run(main, store)


def test_the_blocking_watcher(store: Store) -> None:
    clock = FakeClock(START + timedelta(days=1))
    with Leaderboard(
        store.url,
        "blocking",
        windows=WindowPlan(seasons=(Season("cup", START, END),)),
        clock=clock.ms,
    ) as board:
        board.submit_many([("ann", 3), ("bob", 2), ("cid", 1)])
        watcher = RankWatcher(board, NotifyPolicy(window=CUP), clock=clock)
        assert watcher.check() == []
        watcher.observe(board.submit("cid", 9))
        clock.advance(timedelta(minutes=5))
        assert _told(watcher.check()) == {("cid", "first_taken", 3, 1), ("ann", "first_lost", 1, 2)}


def test_a_write_made_while_a_diff_reads_counts_for_the_next_one(store: Store) -> None:
    policy = NotifyPolicy(
        interval=timedelta(minutes=1), window=CUP, kinds=PRESETS["every-change"].kinds
    )

    async def main(board: AsyncLeaderboard, clock: FakeClock) -> None:
        await board.submit_many([(f"p{i:04d}", 5000 - i) for i in range(100)], operator="set")
        watcher = AsyncRankWatcher(board, policy, clock=clock)
        await watcher.check()
        watcher.observe(await board.submit("p0050", 4900, operator="set"))  # 51st -> 100th
        real_ranks_of = board.ranks_of

        async def ranks_of(members: Sequence[Any], **kwargs: Any) -> Any:
            board.ranks_of = real_ranks_of  # type: ignore[method-assign]
            watcher.observe(
                await board.submit("p0090", 4980.5, operator="set")
            )  # 90th by now -> 21st
            return await real_ranks_of(members, **kwargs)

        board.ranks_of = ranks_of  # type: ignore[method-assign]
        clock.advance(timedelta(minutes=1))
        assert _told(await watcher.check()) == {("p0050", "rank_down", 51, 100)}
        clock.advance(timedelta(minutes=1))  # the write made during the reads is not lost
        assert _told(await watcher.check()) == {("p0090", "rank_up", 90, 21)}

    _run(main, store)
