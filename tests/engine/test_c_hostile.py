"""Python code that runs in the middle of a C call and frees what the call was using.

Every C entry point of the ``_zset`` extension may run Python code: a finaliser run by
a garbage collection when the call allocates a tracked object, a callable it was given
(a lock's ``locked``, a writer's housekeeping, a clock), or the ``__eq__`` / ``__hash__``
of a key object sitting in a dict it looks up. That code may drop the last reference to
a set, a table or a callable the call holds, or empty a set whose nodes it walks. The
rule of the C files: no borrowed reference and no pointer into a set is held across
such a call. Each test here makes one of those callbacks free what the call used; before
the fixes each one crashed, or read freed memory under ``make asan``.

The C types are built directly here (the engine layer), not through the features that
use them, with a plain :class:`Keyspace` whose tables the hostile code changes.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from ranked.engine import _zset
from ranked.engine.keyspace import Keyspace

SortedSet = _zset.SortedSet


def churn() -> None:
    """Reuse freed memory, so a read of a freed object sees other data (or crashes)."""
    junk: list[Any] = [SortedSet({f"junk{i}:{j}": float(j) for j in range(40)}) for i in range(40)]
    junk.append([{b"k%d" % i: i} for i in range(200)])
    del junk


# -- a collection in the middle of a read ------------------------------------------

THRESHOLD = 200  # gen 0 threshold while armed: small ints only, no allocation to count
# Up to 3.11 a collection runs inside the allocation that crosses the threshold, so in
# the middle of a C call; from 3.12 it waits for the interpreter's next check, after the
# call, and these tests can only check that nothing goes wrong.
COLLECTS_IN_ALLOCATION = sys.version_info < (3, 12)


def call_with_collection(action: Callable[[], Any], finaliser: Callable[[], object]) -> Any:
    """``action()`` with the collector armed so that the first tracked object the call
    allocates runs a collection, which finds a garbage cycle whose ``__del__`` calls
    ``finaliser``. ``gc.get_count()`` counts tracked allocations minus frees since the
    last collection; it is padded up to the threshold, so the next allocation collects."""

    class Finalised:
        def __init__(self) -> None:
            self.cycle = self

        def __del__(self) -> None:
            finaliser()

    old = gc.get_threshold()
    gc.collect()
    gc.set_threshold(THRESHOLD)
    try:
        Finalised()  # unreachable at once: a cycle only the collector frees
        pad: list[list[int]] = []
        while gc.get_count()[0] < THRESHOLD - 1:
            pad.append([])
        pad.append([])  # now at the threshold: the next tracked allocation collects
        return action()
    finally:
        gc.set_threshold(*old)


def big_set() -> Any:
    return SortedSet((f"m{i:04}", float(i % 300)) for i in range(1000))


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda zs: zs.range_by_index(0, 99), id="range_by_index"),
        pytest.param(lambda zs: zs.range_by_index(-50, -1, reverse=True), id="range_reverse"),
        pytest.param(lambda zs: zs.random_members(2000), id="random_members_all"),
        pytest.param(lambda zs: zs.random_members(50), id="random_members_some"),
        pytest.param(lambda zs: zs.random_members(-50), id="random_members_draws"),
        pytest.param(lambda zs: zs.range_by_score(100, 200), id="range_by_score"),
        pytest.param(lambda zs: zs.range_by_score(100, 200, reverse=True), id="score_reverse"),
        pytest.param(lambda zs: zs.range_by_lex("m0100", "m0200"), id="range_by_lex"),
        pytest.param(lambda zs: zs.items_after(5.0, "m0005", 20), id="items_after"),
        pytest.param(lambda zs: zs.range_around("m0500", 10, 10), id="range_around"),
    ],
)
def test_a_collection_that_empties_the_set_before_a_range_read(
    read: Callable[[Any], Any],
) -> None:
    """The first tracked allocation of a range read is its result list; a finaliser
    run then empties the set. The read must notice (RuntimeError), not walk positions
    or nodes found before the allocation."""
    zs, full = big_set(), big_set()
    try:
        result = call_with_collection(lambda: read(zs), zs.clear)
    except RuntimeError as error:
        assert "changed during a range read" in str(error)
    else:
        assert not COLLECTS_IN_ALLOCATION, "a collection changed the set and the read went on"
        rows = result[1] if isinstance(result, tuple) else result
        assert rows and all(full.score(member) == score for member, score in rows)
    gc.collect()
    zs._check()
    assert len(zs) == 0


def test_a_collection_that_empties_the_set_in_a_pop() -> None:
    zs = big_set()
    top = zs.range_by_index(0, 9, reverse=True)
    popped = call_with_collection(lambda: zs.pop_max(10), zs.clear)
    assert popped == ([] if COLLECTS_IN_ALLOCATION else top)
    zs = big_set()
    top = zs.range_by_index(0, 2, reverse=True)
    removed: list[Any] = []
    popped = call_with_collection(lambda: zs.pop_max(3), lambda: removed.append(zs.pop_min()))
    assert popped == top  # the finaliser's pop_min ran before or between rows: no harm
    gc.collect()
    assert len(removed) == 1
    zs._check()


# -- the board's fused write ---------------------------------------------------------


class Result(NamedTuple):
    window: str
    score: float
    previous: float | None
    rank: int
    previous_rank: int | None
    changed: bool


class Submission(NamedTuple):
    member: Any
    result: Result
    windows: dict[str, Result]


def board_keyspace() -> tuple[Keyspace, Any]:
    """A keyspace whose b"board" is a C set (whichever engine the keyspace uses)."""
    keyspace = Keyspace()
    board = SortedSet({b"ann": 10.0, b"bob": 20.0}, raw=True)
    values: dict[bytes, Any] = keyspace._values
    values[b"board"] = board
    return keyspace, board


def board_writer(
    keyspace: Keyspace, key: bytes, housekeeping: Callable[[], object], every: int
) -> Any:
    """A BoardWriter of a best-score, higher-first board at ``key``."""
    lock = threading.Lock()
    return _zset.BoardWriter(
        vars(keyspace), key, "all", True, "competition", "best", lock, housekeeping, every,
        Result, Submission,
    )  # fmt: skip


def test_board_submit_keeps_its_writer_while_the_writer_runs() -> None:
    """The writer's housekeeping unsets ``submit.writer``, dropping the last reference
    to the writer that is running."""
    keyspace, board = board_keyspace()
    keyspace._heap.append((2**60, b"elsewhere"))  # so the housekeeping step runs

    def fallback(*args: Any, **kwargs: Any) -> str:
        return "fallback"

    submit = _zset.BoardSubmit(fallback)

    def housekeeping() -> None:
        submit.writer = None
        churn()

    submit.writer = board_writer(keyspace, b"board", housekeeping, 1)
    done = submit("cat", 30.0)
    assert submit.writer is None
    assert isinstance(done, Submission)
    assert done.member == "cat"
    assert done.result.rank == 1
    assert board.score(b"cat") == 30.0
    assert submit("dan", 5.0) == "fallback"


def test_board_writer_key_is_its_own_bytes() -> None:
    """A bytes-subclass key whose ``__hash__`` drops the board (the second time it
    runs: while the writer checks the deadline table): the writer keeps a plain copy of
    the key, so no key code runs during a write."""
    keyspace, _ = board_keyspace()
    del _
    keyspace._deadlines[b"elsewhere"] = 2**60  # a deadline table to look the key up in
    calls: list[int] = []

    class HookedKey(bytes):
        def __hash__(self) -> int:
            calls.append(1)
            if len(calls) == 2:
                keyspace._values.pop(b"board", None)
                churn()
            return bytes.__hash__(self)

        def __eq__(self, other: object) -> bool:
            return bytes.__eq__(self, other)

    writer = board_writer(keyspace, HookedKey(b"board"), lambda: None, 1000)
    calls.clear()
    done = writer(b"cat", 30.0, None)
    assert calls == []
    assert isinstance(done, Submission)
    assert keyspace._values[b"board"].score(b"cat") == 30.0  # type: ignore[union-attr]


class Colliding(bytes):
    """A key object stored in a keyspace table, hashing like ``target``: every lookup
    of ``target`` in that table compares with it, running ``hook`` (when armed)."""

    def __new__(cls, target: bytes, hook: Callable[[], object]) -> Colliding:
        self = super().__new__(cls, b"colliding:" + target)
        self.target = target
        self.hook = hook
        self.armed = True
        return self

    target: bytes
    hook: Callable[[], object]
    armed: bool

    def __hash__(self) -> int:
        return hash(self.target)

    def __eq__(self, other: object) -> bool:
        if self.armed:
            self.armed = False  # no re-entry from the hook's own lookups
            try:
                self.hook()
            finally:
                self.armed = True
        return bytes.__eq__(self, other)


def test_board_writer_survives_a_key_comparison_that_drops_the_board() -> None:
    """A key in the deadline table whose ``__eq__`` drops the board while the writer
    checks the board's deadline: the writer must not write into the freed set."""
    keyspace, _ = board_keyspace()

    def drop() -> None:
        keyspace._values.pop(b"board", None)
        churn()

    keyspace._deadlines[Colliding(b"board", drop)] = 2**60
    writer = board_writer(keyspace, b"board", lambda: None, 1000)
    del _
    assert writer(b"cat", 30.0, None) is None  # the board is gone: the general path decides
    assert b"board" not in keyspace._values


# -- the rate limiter's decision -----------------------------------------------------


class Decision(NamedTuple):
    allowed: bool
    limit: int
    remaining: int
    reset_after: float
    retry_after: float | None
    policy: object


class WindowCell(dict[bytes, bytes]):
    __slots__ = ("count", "start")

    def __init__(self) -> None:
        super().__init__({b"ranked": b"fixed_window state"})


def fixed_window_decider(keyspace: Keyspace) -> Any:
    """A RateDecider of a fixed window of 10 per second on ``keyspace``, at a fixed
    instant; its Python core must not be needed."""

    def core(*args: object) -> object:
        raise AssertionError("the C core declined")

    def wrongtype() -> BaseException:
        return TypeError("WRONGTYPE")

    return _zset.RateDecider(
        0, 2, (10, 1_000_000, 1000, 10), (1e-5, 1e5, 1e6), "policy", Decision, keyspace,
        threading.Lock(), {}, lambda identity: (b"rl:" + identity.encode(),),
        lambda cost, consume: (cost, consume), lambda: 1000.0, core, WindowCell,
        ("start", "count"), wrongtype,
    )  # fmt: skip


def test_rate_decider_survives_a_key_comparison_that_drops_the_cell() -> None:
    keyspace = Keyspace(clock=lambda: 1000.0)

    def drop() -> None:
        keyspace._values.pop(b"rl:u", None)
        churn()
        colliding.hook = lambda: None  # once

    colliding = Colliding(b"rl:u", drop)
    colliding.armed = False
    keyspace._deadlines[colliding] = 2**60  # first in the table: every lookup meets it
    decide = fixed_window_decider(keyspace)
    assert decide("u", 1, 1).remaining == 9
    colliding.armed = True
    second = decide("u", 1, 1)  # the cell is dropped while its deadline is read
    assert second.allowed
    assert second.remaining == 9  # a new window: the old cell is gone
    assert b"rl:u" in keyspace._values


def test_rate_decider_survives_key_comparisons_that_replace_the_tables() -> None:
    """Each comparison replaces every keyspace table with a copy, freeing the one the
    decision is reading or writing (as FLUSHALL replaces them)."""
    keyspace = Keyspace(clock=lambda: 1000.0)

    def replace() -> None:
        keyspace._values = dict(keyspace._values)
        keyspace._deadlines = dict(keyspace._deadlines)
        keyspace._heap = list(keyspace._heap)
        keyspace._listpack = set(keyspace._listpack)
        keyspace._late = set(keyspace._late)
        churn()

    keyspace._deadlines[Colliding(b"rl:u", replace)] = 2**60
    decide = fixed_window_decider(keyspace)
    for _ in range(12):
        assert isinstance(decide("u", 1, 1), Decision)


# -- the queue lane ------------------------------------------------------------------


class Wakeup:
    waiting = False

    def notify(self) -> None:
        raise AssertionError("nobody waits")


QUEUE_KEYS = (b"q:ready", b"q:seq", b"q:delayed", b"q:leases", b"q:attempts")


def slow(name: str) -> Callable[..., str]:
    return lambda *args, **kwargs: f"slow {name}"


def queue_lane(keyspace: Keyspace, keys: Any = QUEUE_KEYS) -> Any:
    return _zset.QueueLane(
        keyspace, threading.Lock(), Wakeup(), keys, False,
        (slow("push"), slow("pop"), slow("pop_with_priority")),
    )  # fmt: skip


def queue_keyspace() -> Keyspace:
    keyspace = Keyspace()
    ready = SortedSet(raw=True)
    ready.add(b"\x00" * 7 + b"\x01" + b"job", 1.0)
    values: dict[bytes, Any] = keyspace._values
    values[b"q:ready"] = ready
    values[b"q:seq"] = b"1"
    return keyspace


def test_an_uninitialised_queue_lane_refuses_calls() -> None:
    lane = _zset.QueueLane.__new__(_zset.QueueLane)
    with pytest.raises(TypeError, match="not initialised"):
        lane.push(b"x")
    with pytest.raises(TypeError, match="not initialised"):
        lane.pop()
    with pytest.raises(TypeError, match="not initialised"):
        lane.pop_with_priority()


def test_a_queue_lane_is_initialised_once() -> None:
    keyspace = queue_keyspace()
    lane = queue_lane(keyspace)
    with pytest.raises(TypeError, match="already initialised"):
        lane.__init__(Keyspace(), threading.Lock(), Wakeup(), QUEUE_KEYS, True, (slow("x"),) * 3)
    assert lane.pop() == b"job"


def test_queue_lane_pop_survives_a_key_comparison_that_drops_the_ready_set() -> None:
    keyspace = queue_keyspace()

    def drop() -> None:
        keyspace._values.pop(b"q:ready", None)
        churn()

    keyspace._deadlines[Colliding(b"q:ready", drop)] = 2**60
    lane = queue_lane(keyspace)
    assert lane.pop() == "slow pop"  # the ready set is gone: the Python path answers
    assert b"q:ready" not in keyspace._values


def test_queue_lane_keys_outlive_a_comparison_that_reinitialises_the_lane() -> None:
    """A key compared while the lane looks up its ready set calls ``lane.__init__``
    with other keys: the lane's own key objects must stay alive meanwhile."""
    keyspace = queue_keyspace()
    lanes: list[Any] = []

    def reinitialise() -> None:
        other = tuple(b"other:" + key for key in QUEUE_KEYS)
        lanes[0].__init__(keyspace, threading.Lock(), Wakeup(), other, False, (slow("x"),) * 3)
        churn()

    ready = keyspace._values.pop(b"q:ready")
    colliding = Colliding(b"q:ready", reinitialise)
    colliding.armed = False
    keyspace._values[colliding] = b"unrelated"  # first in the table: every lookup meets it
    keyspace._values[b"q:ready"] = ready
    keys = tuple(bytes(bytearray(key)) for key in QUEUE_KEYS)  # the lane's own objects
    lanes.append(queue_lane(keyspace, keys))
    del keys
    colliding.armed = True
    with pytest.raises(TypeError, match="already initialised"):
        lanes[0].pop()
