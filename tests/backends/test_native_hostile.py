"""Python code that runs in the middle of a native procedure's call and frees what it used.

The memory backend's native procedures (``ranked.backends.native._native``) may run
Python code mid-call: a callable they were given (a lock's ``locked``, a writer's
housekeeping, a clock), or the ``__eq__`` / ``__hash__`` of a key object sitting in a dict
they look up. That code may drop the last reference to a set, a table or a callable the
call holds. The rule of the C files: no borrowed reference and no pointer into a set is
held across such a call. Each test here makes one of those callbacks free what the call
used; before the fixes each one crashed, or read freed memory under ``make asan``.

The C types are built directly here, not through the features that use them, with a
plain :class:`Keyspace` whose tables the hostile code changes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import pytest

from ranked.engine.zset import IMPLEMENTATION

if IMPLEMENTATION != "c":  # pragma: no cover - the C types need the C engine
    pytest.skip("the native procedures need the C engine", allow_module_level=True)

from ranked.backends.native import _native
from ranked.engine._zset import SortedSet
from ranked.engine.keyspace import Keyspace


def churn() -> None:
    """Reuse freed memory, so a read of a freed object sees other data (or crashes)."""
    junk: list[Any] = [SortedSet({f"junk{i}:{j}": float(j) for j in range(40)}) for i in range(40)]
    junk.append([{b"k%d" % i: i} for i in range(200)])
    del junk


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
    return _native.BoardWriter(
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

    submit = _native.BoardSubmit(fallback)

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

    return _native.RateDecider(
        0, 2, (10, 1_000_000, 1000, 10), (1e-5, 1e5, 1e6), "policy", Decision, keyspace,
        threading.Lock(), {}, lambda identity: (b"rl:" + identity.encode(),),
        lambda cost, consume: (cost, consume), lambda: 1000.0, core, WindowCell,
        ("start", "count"), wrongtype, lambda reading: reading, 5e9,
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


def queue_lane(keyspace: Keyspace, keys: Any = QUEUE_KEYS, kind: int = 1) -> Any:
    """A lane of ``kind`` (1: pop) whose reference answers "slow <kind>"."""
    names = ("push", "pop", "pop_with_priority", "push_many", "pop_many")
    return _native.QueueLane(
        kind, keyspace, threading.Lock(), Wakeup(), keys, False, slow(names[kind]), 3.0e9
    )


def queue_keyspace() -> Keyspace:
    keyspace = Keyspace()
    ready = SortedSet(raw=True)
    ready.add(b"\x00" * 7 + b"\x01" + b"job", 1.0)
    values: dict[bytes, Any] = keyspace._values
    values[b"q:ready"] = ready
    values[b"q:seq"] = b"1"
    return keyspace


def test_an_uninitialised_queue_lane_refuses_calls() -> None:
    lane = _native.QueueLane.__new__(_native.QueueLane)
    with pytest.raises(TypeError, match="not initialised"):
        lane.push(b"x")
    with pytest.raises(TypeError, match="not initialised"):
        lane.pop()
    with pytest.raises(TypeError, match="not initialised"):
        lane.pop_with_priority()
    with pytest.raises(TypeError, match="not initialised"):
        lane(None, None)
    with pytest.raises(TypeError, match="not initialised"):
        lane.method  # noqa: B018 - the getter refuses too


def test_a_queue_lane_is_initialised_once() -> None:
    keyspace = queue_keyspace()
    lane = queue_lane(keyspace)
    with pytest.raises(TypeError, match="already initialised"):
        lane.__init__(2, Keyspace(), threading.Lock(), Wakeup(), QUEUE_KEYS, True, slow("x"), 1.0)
    assert lane.pop() == b"job"


def test_queue_lane_pop_survives_a_key_comparison_that_drops_the_ready_set() -> None:
    keyspace = queue_keyspace()

    def drop() -> None:
        keyspace._values.pop(b"q:ready", None)
        churn()

    keyspace._deadlines[Colliding(b"q:ready", drop)] = 2**60
    lane = queue_lane(keyspace)
    assert lane.pop() == "slow pop"  # the ready set is gone: the reference answers
    assert b"q:ready" not in keyspace._values


def test_queue_lane_keys_outlive_a_comparison_that_reinitialises_the_lane() -> None:
    """A key compared while the lane looks up its ready set calls ``lane.__init__``
    with other keys: the lane's own key objects must stay alive meanwhile."""
    keyspace = queue_keyspace()
    lanes: list[Any] = []

    def reinitialise() -> None:
        other = tuple(b"other:" + key for key in QUEUE_KEYS)
        lanes[0].__init__(1, keyspace, threading.Lock(), Wakeup(), other, False, slow("x"), 1.0)
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


def test_queue_lane_pop_many_survives_a_key_comparison_that_drops_the_ready_set() -> None:
    keyspace = queue_keyspace()

    def drop() -> None:
        keyspace._values.pop(b"q:ready", None)
        churn()

    keyspace._deadlines[Colliding(b"q:ready", drop)] = 2**60
    lane = queue_lane(keyspace, kind=4)
    assert lane(5, None) == "slow pop_many"  # the ready set is gone: the reference answers
    assert b"q:ready" not in keyspace._values


class HostileLock:
    """A lock whose ``acquire`` first runs ``hook`` (once)."""

    def __init__(self, hook: Callable[[], object]) -> None:
        self._lock = threading.Lock()
        self.hook: Callable[[], object] | None = hook

    def acquire(self) -> bool:
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        return self._lock.acquire()

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()


def test_queue_lane_push_many_keeps_its_items_while_the_lock_is_awaited() -> None:
    """The caller's list is emptied (its items freed) while the lane takes the lock: the
    lane pushes the items it was given, from its own hold on them."""
    keyspace = queue_keyspace()
    pairs = [(b"item-%d" % index * 60, float(index)) for index in range(50)]

    def empty() -> None:
        pairs.clear()
        churn()

    lock: Any = HostileLock(empty)
    lane = _native.QueueLane(3, keyspace, lock, Wakeup(), QUEUE_KEYS, False, slow("push_many"), 1.0)
    assert lane(pairs, None, None, None) == 50
    stored = keyspace._values[b"q:ready"]
    assert isinstance(stored, SortedSet)
    members = [cast(bytes, member)[8:] for member, _ in stored.range_by_index(0, -1)]
    members.remove(b"job")
    assert members == [b"item-%d" % index * 60 for index in range(50)]


def test_queue_lane_push_survives_a_clock_that_drops_the_ready_set() -> None:
    """The push reads a Python clock after its checks; the clock drops the ready set: the
    lane looks the set up after the clock, finds it gone, and hands the push over."""
    keyspace = Keyspace(clock=lambda: dropping())
    values: dict[bytes, Any] = keyspace._values
    ready = SortedSet(raw=True)
    values[b"q:ready"] = ready
    values[b"q:seq"] = b"1"
    del ready

    def dropping() -> float:
        values.pop(b"q:ready", None)
        churn()
        return 1_700_000_000.0

    lane = queue_lane(keyspace, kind=0)
    assert lane(b"x", 1.0, None, None, None) == "slow push"
    assert b"q:ready" not in values
