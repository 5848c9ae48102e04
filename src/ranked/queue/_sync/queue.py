# Generated from ranked/queue/_async/queue.py by scripts/generate_sync.py: do not edit.
"""The priority queue, written once: ``_async/queue.py`` (:class:`AsyncQueue`) is the source
and ``_sync/queue.py`` (:class:`Queue`) is generated from it by ``scripts/generate_sync.py``.

Each operation is bound to the backend once per queue (:class:`~._plan.QueuePlan`
describes them) and every method calls what the backend handed back; nothing here knows
which backend it is.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Generic, Literal, overload

from ...backends.base import Backend
from ...backends.procedure import Bound
from .._checks import check_count, pairs_of
from .._plan import (
    WAIT_IN_THREAD,
    OnFirstUse,
    QueuePlan,
    deadline_after,
    install_methods,
    lease_us,
    pauses,
    plan_of,
    seconds_left,
)
from .._procedures import Taken
from ..results import Counts, DeadLetter, Item, Items, ItemT, Lease, NackOutcome

__all__ = ["Queue"]


class Queue(Generic[ItemT]):
    """A priority queue on a sorted set: the lowest priority value leaves first, equal
    priorities in push order (FIFO). Items are opaque bytes (``str`` is stored as UTF-8);
    the same item may be queued many times (a job queue, not a set).

    Every operation is one atomic step on the backend (one round trip on Redis), reading
    time from the server unless ``now_us`` (Unix microseconds) is given.

    ``max_attempts``: in reliable mode, an item whose ``max_attempts``-th delivery fails
    (its lease expires, or it is nacked) moves to the dead letters; None retries forever.
    ``max_age``: seconds after its push at which an undelivered item is dropped (checked
    on access). ``text``: return items as ``str`` (UTF-8) instead of ``bytes``.
    """

    __slots__ = (
        "__dict__",  # whole methods from the backend (install_methods); the colder steps
        "_backend",
        "_plan",
        "_pop",
        "_pop_pair",
        "_push",
    )

    @overload
    def __init__(
        self: Queue[bytes],
        backend: Backend,
        name: str,
        *,
        max_attempts: int | None = ...,
        max_age: float | None = ...,
        text: Literal[False] = False,
    ) -> None: ...
    @overload
    def __init__(
        self: Queue[str],
        backend: Backend,
        name: str,
        *,
        max_attempts: int | None = ...,
        max_age: float | None = ...,
        text: Literal[True],
    ) -> None: ...
    def __init__(
        self,
        backend: Backend,
        name: str,
        *,
        max_attempts: int | None = None,
        max_age: float | None = None,
        text: bool = False,
    ) -> None:
        plan: QueuePlan[ItemT] = plan_of(
            name, max_attempts=max_attempts, max_age=max_age, text=text, waits=WAIT_IN_THREAD
        )
        self._plan: QueuePlan[ItemT] = plan
        self._backend = backend
        # The commonest steps are bound now (a backend may hand them back as whole
        # methods); the others on first use (OnFirstUse), once per queue either way.
        self._push: Bound[None] = backend.bind(plan.push)
        self._pop: Bound[Any] = backend.bind(plan.pop)
        self._pop_pair: Bound[Any] = backend.bind(plan.pop_pair)
        steps = {"push": self._push, "pop": self._pop, "pop_with_priority": self._pop_pair}
        install_methods(self, Queue, steps)

    # The colder steps, each bound on first use (OnFirstUse, _made).
    _push_many: OnFirstUse[Bound[int]] = OnFirstUse()
    _pop_many: OnFirstUse[Bound[list[ItemT]]] = OnFirstUse()
    _peek: OnFirstUse[Bound[Any]] = OnFirstUse()
    _take: OnFirstUse[Bound[Taken]] = OnFirstUse()
    _counts: OnFirstUse[Bound[Counts]] = OnFirstUse()
    _clear: OnFirstUse[Bound[int]] = OnFirstUse()
    _reserve: OnFirstUse[Bound[Taken | None]] = OnFirstUse()
    _ack: OnFirstUse[Bound[int]] = OnFirstUse()
    _ack_one: OnFirstUse[Bound[int]] = OnFirstUse()
    _nack: OnFirstUse[Bound[NackOutcome]] = OnFirstUse()
    _extend: OnFirstUse[Bound[int | None]] = OnFirstUse()
    _dead: OnFirstUse[Bound[Any]] = OnFirstUse()

    def _made(self, name: str) -> Bound[Any]:
        """Step ``name`` (an :class:`OnFirstUse`): the plan's operation of that name
        without its underscore, bound to the backend."""
        return self._backend.bind(getattr(self._plan, name[1:]))

    @property
    def name(self) -> str:
        return self._plan.keys.name

    def _waiting(self, step: Bound[Any], timeout: object, *args: Any) -> Any:
        """``step(timeout, *args)`` until it answers (not None) or ``timeout`` seconds
        pass. A backend that can wait for a push (memory) waits inside the step; the
        others answer at once and are polled after each of :func:`pauses`."""
        deadline = deadline_after(timeout)
        answer = step(timeout, *args)
        for pause in pauses(deadline):
            if answer is not None:
                break
            time.sleep(pause)
            answer = step(seconds_left(deadline), *args)
        return answer

    # -- seed 001's operations ---------------------------------------------------------

    def push(
        self,
        item: Item,
        priority: float = 0.0,
        *,
        delay: float | None = None,
        at: float | None = None,
        now_us: int | None = None,
    ) -> None:
        """Queue ``item``; visible now, after ``delay`` seconds, or from Unix time ``at``.

        O(log n). Redis: INCR-like sequence + ZADD in one script.
        """
        self._push(item, priority, delay, at, now_us)

    def push_many(
        self,
        items: Items,
        *,
        delay: float | None = None,
        at: float | None = None,
        now_us: int | None = None,
    ) -> int:
        """Queue many (item, priority) pairs in order, atomically; returns how many.
        O(k log n), one round trip."""
        pairs = pairs_of(items)
        self._plan.when(delay, at)
        return self._push_many(pairs, delay, at, now_us) if pairs else 0

    def pop(self, timeout: float | None = None, *, now_us: int | None = None) -> ItemT | None:
        """Remove and return the head, or None when empty. ``timeout`` (seconds): wait up
        to that long for an item (Redis: polling, see :data:`POLL_CAP`; memory: woken by a
        push). O(log n). Redis: ZPOPMIN."""
        if timeout is None:
            item: ItemT | None = self._pop(None, now_us)
        else:
            item = self._waiting(self._pop, timeout, now_us)
        return item

    def pop_with_priority(
        self, timeout: float | None = None, *, now_us: int | None = None
    ) -> tuple[ItemT, float] | None:
        """As :meth:`pop`, with the item's priority."""
        if timeout is None:
            pair: tuple[ItemT, float] | None = self._pop_pair(None, now_us)
        else:
            pair = self._waiting(self._pop_pair, timeout, now_us)
        return pair

    def pop_many(self, count: int, *, now_us: int | None = None) -> list[ItemT]:
        """Remove and return up to ``count`` items, head first. O(k log n). Redis: ZPOPMIN k."""
        if not check_count(count):
            return []
        return self._pop_many(count, now_us)

    def peek(self, *, now_us: int | None = None) -> ItemT | None:
        """The head without removing it, or None. O(log n). Redis: ZRANGE 0 0."""
        item: ItemT | None = self._peek(now_us)
        return item

    def peek_many(self, count: int, *, now_us: int | None = None) -> list[tuple[ItemT, float]]:
        """The first ``count`` (item, priority) pairs, head first. O(log n + k)."""
        if not check_count(count):
            return []
        return self._plan.pairs(self._take("peek", count, b"", now_us))

    def size(self, *, now_us: int | None = None) -> int:
        """Visible items (delayed and leased ones not counted). O(1). Redis: ZCARD."""
        return (self.counts(now_us=now_us)).ready

    def is_empty(self, *, now_us: int | None = None) -> bool:
        """True when no item is visible."""
        return self.size(now_us=now_us) == 0

    def counts(self, *, now_us: int | None = None) -> Counts:
        """Items by state (ready, delayed, leased, dead), after settling. O(1) + settling."""
        return self._counts(now_us)

    def clear(self) -> int:
        """Delete every item (ready, delayed, leased, dead) and the queue's keys; returns
        how many ready, delayed or leased items there were. O(n). Redis: DEL."""
        return self._clear()

    # -- reliable mode -----------------------------------------------------------------

    def reserve(
        self, lease: float = 30.0, *, timeout: float | None = None, now_us: int | None = None
    ) -> Lease[ItemT] | None:
        """Take the head for ``lease`` seconds: it stays in the queue's leases until
        :meth:`ack`; if the lease expires first, the next call requeues it (at its
        priority and place) or, after ``max_attempts`` deliveries, moves it to the dead
        letters. ``timeout`` waits for an item as :meth:`pop`. O(log n)."""
        leases = self.reserve_many(1, lease, timeout=timeout, now_us=now_us)
        return leases[0] if leases else None

    def reserve_many(
        self,
        count: int,
        lease: float = 30.0,
        *,
        timeout: float | None = None,
        now_us: int | None = None,
    ) -> list[Lease[ItemT]]:
        """Reserve up to ``count`` items with one lease deadline. O(k log n)."""
        micros = lease_us(lease)
        if not check_count(count):
            return []
        if timeout is None:
            taken: Taken | None = self._reserve(None, count, micros, now_us)
        else:
            taken = self._waiting(self._reserve, timeout, count, micros, now_us)
        return self._plan.leases(taken, micros)

    def ack(self, lease: Lease[ItemT], *, now_us: int | None = None) -> bool:
        """Settle a delivery: True if the lease was still held (the item is gone for
        good), False if it had expired or was settled already (the item is, or will be,
        delivered again). O(log n)."""
        return bool(self._ack_one(lease, now_us))

    def ack_many(self, leases: Sequence[Lease[ItemT]], *, now_us: int | None = None) -> int:
        """:meth:`ack` many leases in one step; returns how many were still held."""
        return self._ack(leases, now_us) if leases else 0

    def nack(
        self, lease: Lease[ItemT], *, delay: float = 0.0, now_us: int | None = None
    ) -> NackOutcome:
        """Give a delivery back as failed: requeued now, or after ``delay`` seconds; dead
        if it was the last allowed delivery. "not held" if the lease was not held."""
        return self._nack(lease, delay, now_us)

    def extend(
        self, lease: Lease[ItemT], lease_seconds: float, *, now_us: int | None = None
    ) -> Lease[ItemT] | None:
        """Hold a delivery ``lease_seconds`` from now; the renewed lease, or None if it
        was no longer held. O(log n)."""
        return self._plan.extended(lease, self._extend(lease, lease_seconds, now_us))

    def dead_letters(
        self, count: int | None = None, *, now_us: int | None = None
    ) -> list[DeadLetter[ItemT]]:
        """Dead letters, oldest death first (``count`` of them, or all)."""
        return self._plan.dead_letters(self._dead("list", count, now_us))

    def retry_dead(self, count: int | None = None, *, now_us: int | None = None) -> int:
        """Put the oldest dead letters back in the queue with a fresh delivery count."""
        retried: int = self._dead("retry", count, now_us)
        return retried

    def purge_dead(self) -> int:
        """Delete every dead letter; returns how many."""
        purged: int = self._dead("purge", None, None)
        return purged
