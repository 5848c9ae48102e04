"""IncrBatcher: increments coalesced per member and flushed as one write give the scores
one-by-one increments give (every backend, with and without a journal); a refused
increment is refused to its caller alone; a member's other writes stay in order; callers
are answered once the flush is durable; close writes what is pending.

pytest-asyncio is not used: each test runs its coroutine with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ranked.errors import BoardConfigError, OutOfRangeError
from ranked.leaderboard import AsyncLeaderboard, Flushed, IncrBatcher, Submission

from .conftest import Env

_names = itertools.count()


def _run(env: Env, body: Callable[[AsyncLeaderboard], Awaitable[Any]], **options: Any) -> Any:
    async def main() -> Any:
        backend = env.open_async()
        board = AsyncLeaderboard(backend, f"batch{next(_names)}", operator="incr", **options)
        try:
            return await body(board)
        finally:
            await board.close()
            await backend.close()

    return asyncio.run(main())


def test_many_callers_on_few_members_get_exact_sums_in_few_writes(env: Env) -> None:
    flushes: list[Flushed] = []

    async def body(board: AsyncLeaderboard) -> None:
        batcher = IncrBatcher(board, 20, on_flush=flushes.append)

        async def client(index: int) -> None:
            for step in range(20):
                await batcher.add(f"m{(index + step) % 5}", index % 3 + 1)

        await asyncio.gather(*(client(i) for i in range(50)))
        await batcher.close()
        expected = dict.fromkeys((f"m{i}" for i in range(5)), 0)
        for index in range(50):
            for step in range(20):
                expected[f"m{(index + step) % 5}"] += index % 3 + 1
        assert {m: await board.score(m) for m in expected} == expected

    _run(env, body)
    assert sum(f.increments for f in flushes) == 1000
    assert sum(f.writes for f in flushes) == len(flushes) <= 25  # one write a flush
    assert sum(f.entries for f in flushes) <= 5 * len(flushes)  # one entry a member


def test_each_caller_gets_its_members_standing_after_the_flush(env: Env) -> None:
    async def body(board: AsyncLeaderboard) -> None:
        await board.submit("b", 5)
        batcher = IncrBatcher(board, 10)
        first, second, other = await asyncio.gather(
            batcher.add("a", 1), batcher.add("a", 2), batcher.add("b", 1)
        )
        assert first == second
        assert (first.member, first.primary.score, first.primary.previous_score) == ("a", 3, None)
        assert (other.primary.score, other.primary.previous_score, other.primary.rank) == (6, 5, 1)
        decremented = await batcher.submit("b", 4, operator="decr")
        assert decremented.primary.score == 2.0

    _run(env, body)


def test_a_refused_increment_is_refused_to_its_caller_alone(env: Env) -> None:
    flushes: list[Flushed] = []

    async def body(board: AsyncLeaderboard) -> None:
        await board.submit("big", 2**53 - 1)
        batcher = IncrBatcher(board, 10, on_flush=flushes.append)
        answers = await asyncio.gather(
            batcher.add("a", 1),
            batcher.add("big", 1),
            batcher.add("big", 1),  # 2**53 + 1 is not a float64: refused
            batcher.add("c", 2),
            batcher.submit(123, 1),  # type: ignore[arg-type]  # not a member: written alone
            return_exceptions=True,
        )
        scores = [a.primary.score if isinstance(a, Submission) else a for a in answers[:2]]
        assert scores == [1.0, 2.0**53]
        assert isinstance(answers[2], OutOfRangeError)
        assert isinstance(answers[3], Submission) and answers[3].primary.score == 2.0
        assert isinstance(answers[4], TypeError)
        assert await board.score("big") == 2.0**53
        assert await board.score("a") == 1.0 and await board.score("c") == 2.0

    _run(env, body)
    assert flushes[0].increments == 4 and flushes[0].entries == 3


def test_a_refused_flush_changes_nothing_before_it_goes_one_by_one(env: Env) -> None:
    async def body(board: AsyncLeaderboard) -> None:
        await board.submit("big", 2**53)
        batcher = IncrBatcher(board, 10)
        refused, taken = await asyncio.gather(
            batcher.add("big", 1), batcher.add("x", 1), return_exceptions=True
        )
        assert isinstance(refused, OutOfRangeError)
        assert isinstance(taken, Submission) and taken.primary.score == 1.0  # once, not twice
        assert await board.score("x") == 1.0

    _run(env, body)


def test_other_writes_of_a_member_keep_arrival_order(env: Env) -> None:
    async def body(board: AsyncLeaderboard) -> None:
        batcher = IncrBatcher(board, 30)
        before = asyncio.ensure_future(batcher.add("a", 5))
        await asyncio.sleep(0)
        best = asyncio.ensure_future(batcher.submit("a", 4, operator="best"))
        await asyncio.sleep(0)
        after = asyncio.ensure_future(batcher.add("a", 1))
        await asyncio.sleep(0)
        replaced = asyncio.ensure_future(batcher.submit("a", 100, operator="set"))
        await asyncio.sleep(0)
        last = asyncio.ensure_future(batcher.add("a", 2))
        other = asyncio.ensure_future(batcher.add("b", 1))
        done = await asyncio.gather(before, best, after, replaced, last, other)
        # 5, best(4) keeps 5, +1 = 6, set 100, +2 = 102: the order they came in
        assert [d.primary.score for d in done] == [5.0, 5.0, 6.0, 100.0, 102.0, 1.0]
        assert await board.score("a") == 102.0

    _run(env, body)


def test_keyed_and_fractional_writes(env: Env) -> None:
    async def body(board: AsyncLeaderboard) -> None:
        batcher = IncrBatcher(board, 10)
        assert not batcher.batchable(1, None, "key-1")
        assert not batcher.batchable(1, "best", None)
        assert not batcher.batchable(float("nan"), None, None)
        assert batcher.batchable(1, None, None) and batcher.batchable(0.5, "decr", None)
        answers = await asyncio.gather(*(batcher.add("f", 0.1) for _ in range(3)))
        assert not batcher.sums  # a fraction: each increment its own entry from now on
        expected = 0.0
        for _ in range(3):
            expected += 0.1
        assert answers[-1].primary.score == expected == await board.score("f")

    _run(env, body)


def test_a_huge_whole_increment_is_alone_and_keeps_sums_on(env: Env) -> None:
    async def body(board: AsyncLeaderboard) -> None:
        batcher = IncrBatcher(board, 10)
        answers = await asyncio.gather(
            batcher.add("h", 1),
            batcher.add("h", 2**60),  # 1 + 2**60 is no float64: refused, alone
            batcher.add("h", 2.0**60),  # the same, as a float
            batcher.add("h", 1),
            return_exceptions=True,
        )
        assert batcher.sums  # no fraction seen
        assert isinstance(answers[1], OutOfRangeError) and isinstance(answers[2], OutOfRangeError)
        assert isinstance(answers[3], Submission) and answers[3].primary.score == 2.0
        assert await board.score("h") == 2.0

    _run(env, body)


def test_close_writes_what_is_pending(env: Env) -> None:
    async def body(board: AsyncLeaderboard) -> None:
        batcher = IncrBatcher(board, 10_000)
        pending = [asyncio.ensure_future(batcher.add(f"m{i}", i)) for i in range(100)]
        await asyncio.sleep(0)
        assert batcher.pending == 100 and await board.count() == 0
        await batcher.close()
        assert await board.count() == 100
        assert [(await p).primary.score for p in pending] == list(range(100))
        assert not batcher.batchable(1, None, None)
        assert (await batcher.submit("late", 3)).primary.score == 3.0  # written at once

    _run(env, body)


def test_interval_is_checked(env: Env) -> None:
    async def body(board: AsyncLeaderboard) -> None:
        for wrong in (0, 10_001, 1.5, True):
            with pytest.raises(BoardConfigError):
                IncrBatcher(board, wrong)  # type: ignore[arg-type]

    _run(env, body)


def test_callers_are_answered_once_the_flush_is_journaled(tmp_path: Path) -> None:
    async def main() -> None:
        board = AsyncLeaderboard(
            "memory://", "durable", operator="incr", journal=f"sqlite:///{tmp_path}/j.db"
        )
        await board.restore()
        batcher = IncrBatcher(board, 20)
        answers = await asyncio.gather(*(batcher.add(f"m{i % 7}", 1) for i in range(70)))
        journaled = [h for i in range(7) for h in board.history(f"m{i}")]
        assert len(journaled) == 7 and {h.score for h in journaled} == {10.0}  # one each
        assert {a.primary.score for a in answers} == {10.0}
        store = board._journal.store  # type: ignore[union-attr]
        assert store.stats.events >= 7
        await batcher.close()
        await board.close()

    asyncio.run(main())


# -- batched == one by one (hypothesis) -------------------------------------------------

_DELTA = st.one_of(
    st.integers(-(2**40), 2**40),
    st.integers(-3, 3),
    st.sampled_from([0.1, -0.25, 1e-3, 2.5]),
)
_WRITES = st.lists(
    st.tuples(st.integers(0, 3), st.sampled_from(["incr", "decr"]), _DELTA), max_size=40
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=st.lists(st.integers(-(2**45), 2**45), min_size=4, max_size=4), writes=_WRITES)
def test_batched_scores_equal_one_by_one_scores(start: list[int], writes: list[Any]) -> None:
    async def main() -> tuple[dict[str, float | None], dict[str, float | None]]:
        name = next(_names)
        one = AsyncLeaderboard("memory://", f"one{name}", operator="incr")
        many = AsyncLeaderboard("memory://", f"many{name}", operator="incr")
        members = [f"p{i}" for i in range(4)]
        for board in (one, many):
            await board.submit_many(list(zip(members, start, strict=True)), operator="set")
        for member, op, delta in writes:
            await one.submit(members[member], delta, operator=op)
        batcher = IncrBatcher(many, 5)
        await asyncio.gather(
            *(batcher.submit(members[m], delta, operator=op) for m, op, delta in writes)
        )
        await batcher.close()
        found = (
            {m: await one.score(m) for m in members},
            {m: await many.score(m) for m in members},
        )
        await one.clear()
        await many.clear()
        return found

    unbatched, batched = asyncio.run(main())
    assert batched == unbatched
