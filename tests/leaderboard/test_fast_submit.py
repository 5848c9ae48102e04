"""The one-call submit on memory:// (``ranked.leaderboard._fast``) against the general path.

Two boards on two backends get the same random submissions; one is forced onto the
general path. Every Submission, every error and every stored set must be identical.
On the pure-Python engine neither board has a writer and the comparison still holds.
"""

from __future__ import annotations

import asyncio
import math
import random
import threading
import time
from types import MappingProxyType
from typing import Any

import pytest

from ranked.backends.generic import SET_MEMBERS
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.engine.zset import IMPLEMENTATION
from ranked.errors import OutOfRangeError
from ranked.leaderboard import AsyncLeaderboard, Leaderboard

C_ENGINE = IMPLEMENTATION == "c"
MEMBERS: list[Any] = ["ann", "bob", "cy", "dee", "ed", "fay", "gus", "hal", "ivy", "jo"]
MEMBERS += ["zoë", "名前", b"raw", b"ann", "\udcff"]  # non-ASCII, bytes (b"ann" == "ann")
OPERATORS: list[Any] = [None, None, "best", "set", "incr", "decr", "max"]


def _score(rng: random.Random) -> Any:
    pick = rng.randrange(20)
    if pick == 0:
        return rng.choice([math.nan, math.inf, -math.inf, "7", True, None, 10**400])
    if pick == 1:
        return rng.choice([-0.0, 0.0, 0, 1e308, -1e308])
    if pick == 2:  # around 2**53, where ints and incr results must stay exact
        return rng.choice([2**53, 2**53 + 1, -(2**53), 2**53 - 1, 2.0**53, 2**60, 2**60 + 1])
    if pick < 8:
        return rng.randrange(-5, 6)  # ints, many ties
    return rng.randrange(-40, 41) / 4


def _pair(**options: Any) -> tuple[Leaderboard, Leaderboard]:
    fast = Leaderboard(MemoryBackend(), "b", **options)
    slow = Leaderboard(MemoryBackend(), "b", **options)
    slow._fast_eligible = False  # the general path only
    return fast, slow


def _outcome(board: Leaderboard, member: Any, score: Any, operator: Any) -> Any:
    try:
        return board.submit(member, score, operator=operator)
    except Exception as error:
        return (type(error), str(error))


def _stored(board: Leaderboard) -> list[tuple[bytes, float, bool]]:
    zset = board.backend.keyspace.zset(board.config.keys.window("all"))  # type: ignore[attr-defined]
    if zset is None:
        return []
    pairs = zset.range_by_index(0, -1)
    return [(member, score, math.copysign(1, score) < 0) for member, score in pairs]


@pytest.mark.parametrize("higher_is_better", [True, False])
@pytest.mark.parametrize("rank_style", ["unique", "competition", "dense"])
@pytest.mark.parametrize("operator", ["best", "set", "incr", "decr"])
def test_fast_and_general_paths_agree(
    higher_is_better: bool, rank_style: str, operator: Any
) -> None:
    fast, slow = _pair(higher_is_better=higher_is_better, rank_style=rank_style, operator=operator)
    rng = random.Random(f"{higher_is_better}{rank_style}{operator}")
    for step in range(600):
        member, score = rng.choice(MEMBERS), _score(rng)
        op = rng.choice(OPERATORS)
        got, want = _outcome(fast, member, score, op), _outcome(slow, member, score, op)
        assert got == want, (step, member, score, op)
        if not isinstance(got, tuple) or not isinstance(got[0], type):
            assert type(got) is type(want) and type(got.primary) is type(want.primary)
            assert type(got.windows) is MappingProxyType
            assert got.windows == {"all": got.primary}
            assert [type(x) for x in got.primary] == [type(x) for x in want.primary]
        assert _stored(fast) == _stored(slow), step
    assert (fast._fast is not None) == C_ENGINE
    if fast._fast is not None:  # the writer itself serves a plain call
        assert fast._fast("ann", 1.0, "set") == slow.submit("ann", 1.0, operator="set")
    assert slow._fast is None


def test_negative_zero_is_never_stored() -> None:
    fast, slow = _pair(operator="set")
    for board in (fast, slow):
        board.submit("seed", 1)
        board.submit("a", -0.0)
        board.submit("b", 0.0, operator="decr")
        board.submit("c", 1.0)
        board.submit("c", 1.0, operator="decr")
    assert _stored(fast) == _stored(slow)
    assert not any(negative for _, _, negative in _stored(fast))


def test_an_unchanged_score_keeps_its_rank() -> None:
    fast, _ = _pair()
    for member, score in [("a", 5), ("b", 9), ("c", 5)]:
        fast.submit(member, score)
    same = fast.submit("a", 3)
    assert (same.changed, same.rank, same.previous_rank) == (False, 2, 2)
    assert (same.score, same.previous_score) == (5.0, 5.0)


def test_clear_and_deadlines_leave_the_fast_path() -> None:
    fast, slow = _pair()
    for board in (fast, slow):
        board.submit("a", 1)
        board.submit("b", 2)
        board.clear()
        board.submit("c", 3)  # registers the window again
        assert board.backend.bind(SET_MEMBERS)(board._plan.core.registry_key) == {b"all"}
        board.expire_at(time.time() + 3600)
        board.submit("d", 4)
    assert fast._fast is None  # a deadline: the general path stamps it
    key = fast.config.keys.window("all")
    assert fast.backend.keyspace.deadline(key) is not None  # type: ignore[attr-defined]
    assert _stored(fast) == _stored(slow)


def test_a_held_lock_makes_the_writer_wait() -> None:
    board = Leaderboard(MemoryBackend(), "b", operator="incr")
    board.submit("a", 1)
    backend = board.backend
    assert isinstance(backend, MemoryBackend)
    done: list[float] = []
    with backend.lock:
        worker = threading.Thread(target=lambda: done.append(board.submit("a", 1).score))
        worker.start()
        worker.join(0.2)
        assert not done  # blocked on the lock, nothing written
        stored = backend.keyspace.zset(board.config.keys.window("all"))
        assert stored is not None and stored.score(b"a") == 1.0
    worker.join()
    assert done == [2.0]


def test_threads_lose_no_update() -> None:
    board = Leaderboard(MemoryBackend(), "b", operator="incr")
    board.submit("a", 0)

    def work() -> None:
        for _ in range(2000):
            board.submit("a", 1)
            board.submit_many([("b", 1)])  # the general path, under the lock

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert board.score("a") == 8000.0 and board.score("b") == 8000.0


def test_the_writer_runs_the_backends_housekeeping() -> None:
    now = [1000.0]
    backend = MemoryBackend(clock=lambda: now[0])
    board = Leaderboard(backend, "b")
    board.submit("a", 1)
    keyspace = backend.keyspace
    keyspace.execute("SET", "temp", "x", "PX", 10)
    now[0] += 1
    for score in range(100):
        board.submit("a", score)
    assert b"temp" not in vars(keyspace)["_values"]  # deleted by active expiry, not lazily


@pytest.mark.skipif(not C_ENGINE, reason="the C writer's rank core only exists in the C engine")
def test_board_rank_matches_sorted_set_rank() -> None:
    from ranked.backends.native._native import board_rank
    from ranked.engine._zset import SortedSet as CSortedSet

    rng = random.Random(7)
    for _ in range(30):
        zset = CSortedSet(raw=True)
        for n in range(rng.randrange(1, 60)):
            zset.add(f"m{n}".encode(), float(rng.randrange(-4, 5)))
        for member, _score in zset.range_by_index(0, -1):
            assert isinstance(member, bytes)
            for style in ("unique", "competition", "dense"):
                for reverse in (False, True):
                    want = zset.rank(member, style=style, reverse=reverse)
                    assert board_rank(zset, member, style, reverse) == want
        assert board_rank(zset, b"absent", "dense", True) is None


@pytest.mark.skipif(not C_ENGINE, reason="the shortcut is C: the pure engine has none")
def test_the_submit_shortcut_stands_for_the_method() -> None:
    import gc
    import inspect
    import weakref

    board = Leaderboard(MemoryBackend(), "b")
    shortcut: Any = board.submit
    assert type(shortcut).__name__ == "BoardSubmit" and shortcut.writer is None
    bound = Leaderboard.submit.__get__(board)
    assert inspect.signature(shortcut) == inspect.signature(bound)
    assert shortcut.__doc__ == Leaderboard.submit.__doc__
    board.submit("a", 1)  # registers the window: the writer exists from now on
    assert shortcut.writer is not None and board._fast is shortcut.writer
    # Whatever the method would reject, it rejects the same way (through the fallback).
    for args, kwargs in [
        (("a", 1, "set"), {}),
        (("a",), {}),
        (("a", 1), {"colour": "red"}),
    ]:
        with pytest.raises(TypeError) as direct:
            bound(*args, **kwargs)
        with pytest.raises(TypeError) as short:
            shortcut(*args, **kwargs)
        assert str(short.value) == str(direct.value)
    assert board.submit(member="a", score=3).score == 3.0  # keywords: the method
    # at= and tie= go to the method; operator= and explicit Nones stay on the writer.
    assert board.submit("b", 5, operator="set", at=None, tie=None).rank == 1
    assert board.submit("c", 9, at=time.time()).rank == 1
    board.clear()
    assert shortcut.writer is None  # until a submission registers the window again
    assert board.submit("d", 2).rank == 1 and shortcut.writer is not None
    # The board -> shortcut -> bound method -> board cycle is collected.
    gone = weakref.ref(board)
    del board, shortcut, bound
    gc.collect()
    assert gone() is None


def test_a_subclass_overriding_submit_keeps_its_own() -> None:
    class Audited(Leaderboard):
        def submit(self, *args: Any, **kwargs: Any) -> Any:
            self.seen = getattr(self, "seen", 0) + 1
            return super().submit(*args, **kwargs)

    board = Audited(MemoryBackend(), "b")
    board.submit("a", 1)
    board.submit("a", 2)
    assert board.seen == 2 and "submit" not in vars(board)


async def _aoutcome(board: AsyncLeaderboard, member: Any, score: Any, operator: Any) -> Any:
    try:
        return await board.submit(member, score, operator=operator)
    except Exception as error:
        return (type(error), str(error))


@pytest.mark.parametrize("rank_style", ["unique", "competition", "dense"])
@pytest.mark.parametrize("operator", ["best", "set", "incr", "decr"])
def test_async_board_takes_the_same_one_call_submit(rank_style: str, operator: Any) -> None:
    # The async board on memory:// writes through the sync writer; its answers, errors
    # and stored sets match a sync board forced onto the general path.
    async def main() -> None:
        board = AsyncLeaderboard(
            AsyncMemoryBackend(), "b", rank_style=rank_style, operator=operator
        )
        _, slow = _pair(rank_style=rank_style, operator=operator)
        rng = random.Random(f"async{rank_style}{operator}")
        for step in range(400):
            member, score, op = rng.choice(MEMBERS), _score(rng), rng.choice(OPERATORS)
            got = await _aoutcome(board, member, score, op)
            assert got == _outcome(slow, member, score, op), (step, member, score, op)
        assert (board._fast is not None) == C_ENGINE
        sync_view = Leaderboard(board.backend.sync, "b")  # type: ignore[attr-defined]
        assert _stored(sync_view) == _stored(slow)

    asyncio.run(main())


def test_async_clear_and_deadlines_leave_the_fast_path() -> None:
    async def main() -> None:
        board = AsyncLeaderboard(AsyncMemoryBackend(), "b")
        await board.submit("a", 1)
        assert (board._fast is not None) == C_ENGINE
        await board.clear()
        assert board._fast is None
        assert (await board.submit("c", 3)).rank == 1  # registers the window again
        assert (board._fast is not None) == C_ENGINE
        await board.expire_at(time.time() + 3600)
        await board.submit("d", 4)
        assert board._fast is None  # a deadline: the general path stamps it
        key = board.config.keys.window("all")
        assert board.backend.keyspace.deadline(key) is not None  # type: ignore[attr-defined]
        assert [e.member for e in await board.top(5)] == ["d", "c"]

    asyncio.run(main())


def test_async_board_on_other_backends_or_configs_has_no_writer() -> None:
    async def main() -> None:
        windowed = AsyncLeaderboard(AsyncMemoryBackend(), "w", windows=("all", "daily"))
        trimmed = AsyncLeaderboard(AsyncMemoryBackend(), "t", keep=10)
        for board in (windowed, trimmed):
            await board.submit("a", 1)
            assert board._fast is None and not board._fast_eligible

    asyncio.run(main())


def test_the_writer_hands_inexact_scores_to_the_general_path() -> None:
    fast, slow = _pair(operator="incr")
    for board in (fast, slow):
        board.submit("seed", 1.0)
        board.submit("seed", 1.0)  # the writer is in use from here (C engine)
        board.submit("a", 2**53 - 1)
    assert (fast._fast is not None) == C_ENGINE
    refused: list[tuple[float, Any]] = [
        (2, None),
        (2**53 + 1, "set"),
        (0.5, "incr"),
        (-(2**54), "decr"),
    ]
    for score, operator in refused:
        for board in (fast, slow):
            before = _stored(board)
            with pytest.raises(OutOfRangeError):
                board.submit("a", score, operator=operator)
            assert _stored(board) == before
    assert fast.submit("a", 1) == slow.submit("a", 1)  # 2**53: exact
    assert fast.score("a") == 2.0**53


def test_a_dropped_result_cannot_leak_into_the_next() -> None:
    fast, slow = _pair()
    for board in (fast, slow):
        board.submit("seed", 1.0)
        first = board.submit("a", 1.0)
        with pytest.raises(TypeError):  # before: a plain dict, shared with the next result
            first.windows["stale"] = first.primary  # type: ignore[index]
        with pytest.raises(AttributeError):
            first.primary.score = 0.0  # type: ignore[misc]
        del first
        second = board.submit("b", 2.0)
        assert dict(second.windows) == {"all": second.primary}
        kept = board.submit("c", 3.0)
        later = board.submit("d", 4.0)  # kept is still held: a new result
        assert kept.windows is not later.windows and kept.member == "c"
        assert dict(kept.windows) == {"all": kept.primary} and kept.primary.score == 3.0
    assert (fast._fast is not None) == C_ENGINE


@pytest.mark.parametrize("operator", ["best", "incr"])
def test_journaled_boards_agree_on_both_paths(tmp_path: Any, operator: Any) -> None:
    """A journaled board applies its events through the sequenced one-call submit; one
    forced onto the general ``submit_seq`` step answers and stores the same, and each
    restarts to the same board from its journal."""
    boards = [
        Leaderboard(MemoryBackend(), "b", operator=operator, journal=f"sqlite:///{tmp_path}/{n}.db")
        for n in ("fast", "slow")
    ]
    fast, slow = boards
    assert slow._journal is not None
    slow._journal._eligible = False  # the general path only
    rng = random.Random(operator)
    for step in range(300):
        member, score = rng.choice(MEMBERS), _score(rng)
        op = rng.choice(OPERATORS)
        got, want = _outcome(fast, member, score, op), _outcome(slow, member, score, op)
        assert got == want, (step, member, score, op)
    assert _stored(fast) == _stored(slow)
    assert fast._journal is not None
    assert (fast._journal._writer is not None) == C_ENGINE
    assert slow._journal._writer is None
    stored = _stored(fast)
    for n, board in zip(("fast", "slow"), boards, strict=True):
        board.close()
        again = Leaderboard(
            MemoryBackend(), "b", operator=operator, journal=f"sqlite:///{tmp_path}/{n}.db"
        )
        assert _stored(again) == stored
        again.close()
