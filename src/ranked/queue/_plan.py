"""One queue's operations, with no I/O: each step described once as an
:class:`~ranked.backends.procedure.Operation`, which :class:`~ranked.queue.AsyncQueue` and
:class:`~ranked.queue.Queue` bind to their backend once per queue.

An operation's ``encode`` checks the call's arguments (a refused call sends nothing) and
turns them into the script's keys and arguments; ``native_args`` tells the memory
backend's native code (``ranked.backends.native.queue``) which step it is, the queue's
keys and whether items are text, so nothing under ``ranked.backends`` imports the queue.

Blocking steps (``pop``, ``pop_pair``, ``reserve``) take a timeout: a backend that can
wait for a push (memory) waits inside the step; the others answer at once and the queue
polls them on the schedule of :func:`pauses`. ``waits`` says how the caller waits: in a
thread (:data:`WAIT_IN_THREAD`) or in an asyncio task (:data:`WAIT_IN_TASK`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, Generic, Self, TypeVar, overload

from ..backends._scripts import Arg
from ..backends.procedure import Operation
from ..core.limits import MAX_DURATION_S
from ..engine.keyspace import Keyspace
from ..errors import QueueArgumentError
from ._checks import (
    check_count,
    check_now,
    duration_us,
    instant_us,
    item_bytes,
    lease_token,
    priority_of,
)
from ._memory import ack as ack_twin
from ._memory import plain_ready, push_now
from ._memory import push as push_twin
from ._memory import take as take_twin
from ._procedures import (
    ACK,
    CLEAR,
    COUNTS,
    DEAD,
    EXTEND,
    NACK,
    PEEK,
    POP,
    POP_MANY,
    POP_PAIR,
    PUSH,
    PUSH_MANY,
    RESERVE,
    TAKE,
    Taken,
    item_of,
)
from .keys import QueueKeys, leased, split_leased
from .results import Counts, DeadLetter, ItemT, Lease, NackOutcome

__all__ = [
    "POLL_CAP",
    "WAIT_IN_TASK",
    "WAIT_IN_THREAD",
    "OnFirstUse",
    "QueuePlan",
    "check_count",
    "deadline_after",
    "install_methods",
    "lease_us",
    "pauses",
    "plan_of",
    "seconds_left",
]

POLL_FIRST: Final = 0.001
POLL_CAP: Final = 0.05
"""A blocked pop polls after 1 ms, then doubles the pause up to this cap (seconds): it
sees a push at most ~50 ms (plus one round trip) late and costs at most ~20 calls/s idle.
A memory backend waiting for pushes looks again this often for what signals nobody
(delayed items falling due, leases expiring)."""

WAIT_IN_THREAD: Final = "thread"
"""A blocking step's caller waits in its thread (the blocking API)."""
WAIT_IN_TASK: Final = "task"
"""A blocking step's caller waits in an asyncio task (the asyncio API)."""

R = TypeVar("R")
Encoded = tuple[Sequence[bytes], Sequence[Arg], int | None]


def deadline_after(timeout: object) -> float:
    """The monotonic instant ``timeout`` seconds from now (checked first: a bad timeout
    fails before anything is popped)."""
    return time.monotonic() + duration_us(timeout, "timeout") / 1e6


def lease_us(lease: object) -> int:
    """A lease length in seconds as whole microseconds (more than 0, within range)."""
    kind = type(lease)
    if (kind is float or kind is int) and 0 < lease <= MAX_DURATION_S:  # type: ignore[operator]
        return round(lease * 1_000_000)  # type: ignore[operator]
    return duration_us(lease, "lease", zero=False)


def seconds_left(deadline: float) -> float:
    """Seconds from now to the monotonic ``deadline`` (0 once it passed)."""
    return max(deadline - time.monotonic(), 0.0)


def pauses(deadline: float) -> Iterator[float]:
    """The sleeps of a polled blocking call: 1 ms doubling up to :data:`POLL_CAP`, never
    past the monotonic ``deadline`` (the caller polls after each)."""
    pause = POLL_FIRST
    while (left := deadline - time.monotonic()) > 0:
        yield min(pause, left)
        pause = min(pause * 2, POLL_CAP)


def install_methods(queue: object, base: type, steps: Mapping[str, object]) -> None:
    """A step the backend hands back may offer ``method``: the same step taking the
    queue method's own arguments (keywords, a timeout the backend waits for itself).
    It becomes that method of ``queue``, with no Python frame before it, unless the
    queue's class overrides the method."""
    kind = type(queue)
    for name, step in steps.items():
        method = getattr(step, "method", None)
        if method is not None and getattr(kind, name) is getattr(base, name):
            vars(queue)[name] = method


def plan_of(
    name: str, *, max_attempts: int | None, max_age: float | None, text: bool, waits: str
) -> QueuePlan[Any]:
    """``QueuePlan(...)``: one plan (it never changes) for every queue object of the same
    name and options, so that making a queue object costs little more than binding it."""
    try:
        return _shared_plan(name, max_attempts, max_age, text, waits, POLL_CAP)
    except TypeError:  # an unhashable option: let the plan refuse it
        return QueuePlan(name, max_attempts=max_attempts, max_age=max_age, text=text, waits=waits)


@functools.lru_cache(maxsize=1024, typed=True)
def _shared_plan(
    name: str,
    max_attempts: int | None,
    max_age: float | None,
    text: bool,
    waits: str,
    poll_cap: float,
) -> QueuePlan[Any]:
    """The plan of these options and of the poll cap in force (tests change it)."""
    return QueuePlan(
        name,
        max_attempts=max_attempts,
        max_age=max_age,
        text=text,
        waits=waits,
        poll_cap=poll_cap,
    )


class OnFirstUse(Generic[R]):
    """An attribute made on first use, ``instance._made(name, *spec, **options)``, and
    kept in the instance's ``__dict__`` (which later reads find first): once per object."""

    def __init__(self, *spec: Any, **options: Any) -> None:
        self._spec = spec
        self._options = options

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> R: ...
    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:  # read on the class
            return self
        made = instance._made(self._name, *self._spec, **self._options)
        vars(instance)[self._name] = made
        return made


class QueuePlan(Generic[ItemT]):
    """The operations of queue ``name`` (see :class:`ranked.queue.Queue` for the options;
    ``waits``: :data:`WAIT_IN_THREAD` or :data:`WAIT_IN_TASK`; ``poll_cap``: how often a
    backend's own wait looks again, :data:`POLL_CAP` by default)."""

    __slots__ = (
        "__dict__",  # the colder operations, made on first use (OnFirstUse)
        "_ack_keys",
        "_all",
        "_item",
        "_limit",
        "_max_age",
        "_native",
        "_pop_args",
        "_push_keys",
        "_track",
        "keys",
        "pop",
        "pop_pair",
        "push",
        "text",
    )

    def __init__(
        self,
        name: str,
        *,
        max_attempts: int | None,
        max_age: float | None,
        text: bool,
        waits: str,
        poll_cap: float | None = None,
    ) -> None:
        if max_attempts is not None and (
            isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1
        ):
            raise QueueArgumentError(f"max_attempts must be None or an int >= 1: {max_attempts!r}")
        keys = self.keys = QueueKeys.of(name)
        self.text = text
        self._item = item_of(text)
        self._limit = max_attempts or 0
        self._max_age = 0 if max_age is None else duration_us(max_age, "max_age", zero=False)
        self._track = 1 if self._max_age else 0
        self._push_keys = (keys.ready, keys.delayed, keys.seq, keys.born)
        self._all = keys.all()
        self._ack_keys = (keys.leases, keys.born)
        self._pop_args = ("pop", 1, 0, self._limit, self._max_age, b"")
        self._native = {
            "keys": (keys.ready, keys.seq, keys.delayed, keys.leases, keys.attempts),
            "text": text,
            "track": bool(self._track),
            "waits": waits,
            "poll_cap": POLL_CAP if poll_cap is None else poll_cap,
            "max_timeout": MAX_DURATION_S,
        }
        self.push = self._operation(PUSH, self._push, "push", self._push_direct)
        self.pop = self._operation(POP[text], self._pop, "pop", self._pop_direct)
        self.pop_pair = self._operation(
            POP_PAIR[text], self._pop, "pop_with_priority", self._pop_pair_direct
        )

    def _made(
        self, name: str, procedure: Any, native: bool = False, direct: bool = False
    ) -> Operation[Any]:
        """Operation ``name`` (an :class:`OnFirstUse`): ``procedure`` (or
        ``procedure[text]`` where there is one per item type) with the encoding
        ``_<name>``; ``native``: the memory backend's native code knows it as ``name``;
        ``direct``: ``_<name>_direct`` is the step in call form on a keyspace."""
        if isinstance(procedure, dict):
            procedure = procedure[self.text]
        call_form = getattr(self, f"_{name}_direct") if direct else None
        return self._operation(
            procedure, getattr(self, f"_{name}"), name if native else None, call_form
        )

    def _operation(
        self, procedure: Any, encode: Any, step: str | None = None, direct: Any = None
    ) -> Operation[Any]:
        """``procedure`` with ``encode``; ``step``: its name for the memory backend's
        native code (``native_args``), for the procedures marked native; ``direct``: the
        step in call form (:attr:`Operation.direct`)."""
        native_args = {**self._native, "step": step} if step else {}
        return Operation(procedure, encode, native_args, direct=direct)

    # The colder operations, each made on first use (OnFirstUse, _made).
    push_many: OnFirstUse[Operation[int]] = OnFirstUse(PUSH_MANY, native=True)
    pop_many: OnFirstUse[Operation[list[Any]]] = OnFirstUse(POP_MANY, native=True)
    peek: OnFirstUse[Operation[Any]] = OnFirstUse(PEEK)
    take: OnFirstUse[Operation[Taken]] = OnFirstUse(TAKE)
    counts: OnFirstUse[Operation[Counts]] = OnFirstUse(COUNTS)
    clear: OnFirstUse[Operation[int]] = OnFirstUse(CLEAR)
    reserve: OnFirstUse[Operation[Taken | None]] = OnFirstUse(RESERVE, native=True)
    ack: OnFirstUse[Operation[int]] = OnFirstUse(ACK)
    ack_one: OnFirstUse[Operation[int]] = OnFirstUse(ACK, direct=True)
    nack: OnFirstUse[Operation[NackOutcome]] = OnFirstUse(NACK, native=True)
    extend: OnFirstUse[Operation[int | None]] = OnFirstUse(EXTEND)
    dead: OnFirstUse[Operation[Any]] = OnFirstUse(DEAD, native=True)

    @property
    def max_age_us(self) -> int:
        """``max_age`` in microseconds (0: none)."""
        return self._max_age

    # -- encodings: call arguments -> (keys, script arguments, instant) -----------------

    def _push(
        self, item: object, priority: object, delay: object, at: object, now_us: object
    ) -> Encoded:
        """``push(item, priority, delay, at, now_us)``."""
        if delay is None and at is None:
            args: Sequence[Arg] = (self._track, priority_of(priority), 0, 0, item_bytes(item))
        else:
            stored: float = priority_of(priority)
            args = (self._track, *self._entry(item_bytes(item), stored, delay, at))
        return self._push_keys, args, (None if now_us is None else check_now(now_us))

    def _push_many(
        self, pairs: Sequence[tuple[bytes, float]], delay: object, at: object, now_us: object
    ) -> Encoded:
        """``push_many(pairs checked by pairs_of, delay, at, now_us)``."""
        args: list[Arg] = [self._track]
        for data, priority in pairs:
            args += self._entry(data, priority, delay, at)
        return self._push_keys, args, (None if now_us is None else check_now(now_us))

    def _push_direct(
        self,
        keyspace: Keyspace,
        item: object,
        priority: object,
        delay: object,
        at: object,
        now_us: object,
    ) -> None:
        """``push`` in call form: an item visible now, with no push instant to keep,
        straight to the twin's :func:`push_now`; anything else :meth:`_push`, then the
        twin. The same checks in the same order."""
        if delay is None and at is None and not self._track:
            value = priority_of(priority)
            data = item if type(item) is bytes else item_bytes(item)
            now = None if now_us is None else check_now(now_us)
            stamp = keyspace.now_us() if now is None else now
            push_now(keyspace, stamp, self._push_keys, data, value)
            return
        keys, args, now = self._push(item, priority, delay, at, now_us)
        push_twin(keyspace, keyspace.now_us() if now is None else now, keys, args)

    def when(self, delay: object, at: object) -> tuple[int, int]:
        """(at_us, delay_us) of a push: at most one of them, each within range."""
        if delay is not None and at is not None:
            raise QueueArgumentError("give delay or at, not both")
        delay_us = 0 if delay is None else duration_us(delay, "delay")
        return (0 if at is None else instant_us(at, "at")), delay_us

    def _entry(self, data: bytes, priority: float, delay: object, at: object) -> tuple[Arg, ...]:
        at_us, delay_us = self.when(delay, at)
        return priority, at_us, delay_us, data

    def _pop(self, timeout: object, now_us: object) -> Encoded:
        """``pop(timeout, now_us)`` / ``pop_pair``: one attempt (the timeout is checked
        here and waited for by the caller or the backend)."""
        if timeout is not None:
            duration_us(timeout, "timeout")
        return self._all, self._pop_args, (None if now_us is None else check_now(now_us))

    def _head(self, keyspace: Keyspace, timeout: object, now_us: object) -> Any:
        """The (id, priority) ``pop`` / ``pop_pair`` take, or None: the checks of
        :meth:`_pop`, then the head straight off the ready set when that is the whole
        step (:func:`plain_ready`; no clock read), else the take twin."""
        if timeout is not None:
            duration_us(timeout, "timeout")
        now = None if now_us is None else check_now(now_us)
        if not self._max_age:
            ready = plain_ready(keyspace, self._all)
            if ready is not None:
                return ready.pop_min(1)[0]
        stamp = keyspace.now_us() if now is None else now
        reply = take_twin(keyspace, stamp, self._all, self._pop_args)
        return (reply[2], reply[3]) if len(reply) > 2 else None

    def _pop_direct(self, keyspace: Keyspace, timeout: object, now_us: object) -> Any:
        """``pop`` in call form (see :meth:`_head`): the item, or None."""
        head = self._head(keyspace, timeout, now_us)
        return None if head is None else self._item(head[0][8:])

    def _pop_pair_direct(self, keyspace: Keyspace, timeout: object, now_us: object) -> Any:
        """``pop_pair`` in call form (see :meth:`_head`): (item, priority), or None."""
        head = self._head(keyspace, timeout, now_us)
        return None if head is None else (self._item(head[0][8:]), float(head[1]))

    def _pop_many(self, count: int, now_us: object) -> Encoded:
        """``pop_many(count, now_us)``: settle, then pop up to ``count`` (checked by the
        queue) items."""
        args = ("pop", count, 0, self._limit, self._max_age, b"")
        return self._all, args, (None if now_us is None else check_now(now_us))

    def _peek(self, now_us: object) -> Encoded:
        """``peek(now_us)``: settle, then the head's item (or None)."""
        args = ("peek", 1, 0, self._limit, self._max_age, b"")
        return self._all, args, (None if now_us is None else check_now(now_us))

    def _take(self, mode: str, count: int, expect: bytes, now_us: object) -> Encoded:
        """``take(mode, count, expect, now_us)``: settle, then pop / peek ``count``
        (``expect``: only if that id is the head)."""
        args = (mode, count, 0, self._limit, self._max_age, expect)
        return self._all, args, (None if now_us is None else check_now(now_us))

    def _counts(self, now_us: object) -> Encoded:
        args = ("counts", 0, 0, self._limit, self._max_age, b"")
        return self._all, args, (None if now_us is None else check_now(now_us))

    def _clear(self) -> Encoded:
        return (*self._all, self.keys.seq), (), None

    def _reserve(self, timeout: object, count: int, lease_us: int, now_us: object) -> Encoded:
        """``reserve(timeout, count, lease_us, now_us)``."""
        if timeout is not None:
            duration_us(timeout, "timeout")
        args = ("reserve", count, lease_us, self._limit, self._max_age, b"")
        return self._all, args, (None if now_us is None else check_now(now_us))

    def _ack(self, leases: Iterable[Lease[Any]], now_us: object) -> Encoded:
        try:
            each = iter(leases) if not isinstance(leases, Lease) else None
        except TypeError:
            each = None
        if each is None:
            raise QueueArgumentError(f"expected leases, not {type(leases).__name__}")
        tokens = [lease_token(lease) for lease in each]
        return self._ack_keys, tokens, (None if now_us is None else check_now(now_us))

    def _ack_one(self, lease: Lease[Any], now_us: object) -> Encoded:
        """``ack_one(lease, now_us)``: :meth:`_ack` of one lease."""
        token = lease_token(lease)
        return self._ack_keys, (token,), (None if now_us is None else check_now(now_us))

    def _ack_one_direct(self, keyspace: Keyspace, lease: Lease[Any], now_us: object) -> int:
        """``ack_one`` in call form: :meth:`_ack_one`, then the twin (its reply is the
        result)."""
        token = lease_token(lease)
        now = check_now(now_us)
        keys = self._ack_keys
        acked: int = ack_twin(keyspace, keyspace.now_us() if now is None else now, keys, (token,))
        return acked

    def _nack(self, lease: Lease[Any], delay: object, now_us: object) -> Encoded:
        args = (lease_token(lease), duration_us(delay, "delay"), self._limit, self._max_age)
        return self._all, args, (None if now_us is None else check_now(now_us))

    def _extend(self, lease: Lease[Any], seconds: object, now_us: object) -> Encoded:
        args = (lease_token(lease), duration_us(seconds, "lease", zero=False))
        return (self.keys.leases,), args, (None if now_us is None else check_now(now_us))

    def _dead(self, mode: str, count: int | None, now_us: object) -> Encoded:
        if count is not None and (
            isinstance(count, bool) or not isinstance(count, int) or count < 1
        ):
            raise QueueArgumentError(f"count must be None (all) or an int >= 1, not {count!r}")
        args = (mode, -1 if count is None else count, self._track)
        return (
            (self.keys.ready, self.keys.dead, self.keys.born),
            args,
            (None if now_us is None else check_now(now_us)),
        )

    # -- results -----------------------------------------------------------------------

    def items(self, taken: Taken) -> list[ItemT]:
        item = self._item
        return [item(row[0][8:]) for row in taken.rows]

    def pairs(self, taken: Taken) -> list[tuple[ItemT, float]]:
        item = self._item
        return [(item(row[0][8:]), row[1]) for row in taken.rows]

    def leases(self, taken: Taken | None, lease_us: int) -> list[Lease[ItemT]]:
        if taken is None:
            return []
        deadline = taken.now_us + lease_us
        item = self._item
        return [
            Lease(
                item(item_id[8:]), priority, delivery, deadline, leased(priority, delivery, item_id)
            )
            for item_id, priority, delivery in taken.rows
        ]

    @staticmethod
    def extended(lease: Lease[ItemT], deadline: int | None) -> Lease[ItemT] | None:
        if deadline is None:
            return None
        return Lease(lease.item, lease.priority, lease.delivery, deadline, lease.token)

    def dead_letters(self, rows: list[tuple[bytes, int]]) -> list[DeadLetter[ItemT]]:
        letters = []
        for member, died_at in rows:
            priority, delivery, item_id = split_leased(member)
            letters.append(DeadLetter(self._item(item_id[8:]), priority, delivery, died_at))
        return letters
