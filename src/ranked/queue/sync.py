"""The synchronous priority queue: seed 001's operations plus delayed and reliable modes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Generic, Literal, overload

from ..backends.base import Backend
from ..backends.memory import MemoryBackend
from ._plan import Call, QueuePlan, check_count, check_timeout, pauses, seconds_to_us
from .results import Counts, DeadLetter, Item, Items, ItemT, Lease, NackOutcome

__all__ = ["Queue"]


class Queue(Generic[ItemT]):
    """A priority queue on a sorted set: the lowest priority value leaves first, equal
    priorities in push order (FIFO). Items are opaque bytes (``str`` is stored as UTF-8);
    the same item may be queued many times (a job queue, not a set).

    Every operation is one atomic procedure on the backend (one round trip on Redis),
    reading time from the server unless ``now_us`` (Unix microseconds) is given.

    ``max_attempts``: in reliable mode, an item whose ``max_attempts``-th delivery fails
    (its lease expires, or it is nacked) moves to the dead letters; None retries forever.
    ``max_age``: seconds after its push at which an undelivered item is dropped (checked
    on access). ``text``: return items as ``str`` (UTF-8) instead of ``bytes``.
    """

    __slots__ = ("_backend", "_plan", "_run")

    def __new__(cls, backend: Backend, name: str, **options: Any) -> Queue[Any]:
        """On a memory backend (without ``max_age``), a :class:`MemoryQueue`: the same
        queue with direct paths for its commonest calls."""
        if cls is Queue and type(backend) is MemoryBackend and options.get("max_age") is None:
            from ._lane import MemoryQueue

            return object.__new__(MemoryQueue)
        return object.__new__(cls)

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
        self._backend = backend
        self._run = backend.run
        self._plan: QueuePlan[ItemT] = QueuePlan(
            name, max_attempts=max_attempts, max_age=max_age, text=text
        )

    @property
    def name(self) -> str:
        return self._plan.keys.name

    def _wait(self, call: Call, timeout: float | None) -> Any:
        """Run ``call`` until its answer is truthy (an item came back) or ``timeout``."""
        check_timeout(timeout)
        answer = self._run(*call)
        if answer or not timeout:
            return answer
        for pause in pauses(seconds_to_us(timeout, "timeout") / 1e6):
            time.sleep(pause)
            answer = self._run(*call)
            if answer:
                break
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
        self._run(*self._plan.push(item, priority, delay, at, now_us))

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
        call = self._plan.push_many(items, delay, at, now_us)
        return 0 if call is None else int(self._run(*call))

    def pop(self, timeout: float | None = None, *, now_us: int | None = None) -> ItemT | None:
        """Remove and return the head, or None when empty. ``timeout`` (seconds): wait up
        to that long for an item (Redis: polling, see :data:`POLL_CAP`; memory: woken by a
        push). O(log n). Redis: ZPOPMIN."""
        if timeout is None:
            return self._plan.head_item(self._run(*self._plan.pop_one(now_us)))
        return self._plan.head_item(self._wait(self._plan.pop_one(now_us), timeout))

    def pop_with_priority(
        self, timeout: float | None = None, *, now_us: int | None = None
    ) -> tuple[ItemT, float] | None:
        """As :meth:`pop`, with the item's priority."""
        return self._plan.head_pair(self._wait(self._plan.pop_one(now_us), timeout))

    def pop_many(self, count: int, *, now_us: int | None = None) -> list[ItemT]:
        """Remove and return up to ``count`` items, head first. O(k log n). Redis: ZPOPMIN k."""
        if not check_count(count):
            return []
        return self._plan.items(self._run(*self._plan.take("pop", count, now_us=now_us)))

    def peek(self, *, now_us: int | None = None) -> ItemT | None:
        """The head without removing it, or None. O(log n). Redis: ZRANGE 0 0."""
        return self._plan.first(self._run(*self._plan.take("peek", 1, now_us=now_us)))

    def peek_many(self, count: int, *, now_us: int | None = None) -> list[tuple[ItemT, float]]:
        """The first ``count`` (item, priority) pairs, head first. O(log n + k)."""
        if not check_count(count):
            return []
        return self._plan.pairs(self._run(*self._plan.take("peek", count, now_us=now_us)))

    def size(self, *, now_us: int | None = None) -> int:
        """Visible items (delayed and leased ones not counted). O(1). Redis: ZCARD."""
        return self.counts(now_us=now_us).ready

    def is_empty(self, *, now_us: int | None = None) -> bool:
        """True when no item is visible."""
        return self.size(now_us=now_us) == 0

    def counts(self, *, now_us: int | None = None) -> Counts:
        """Items by state (ready, delayed, leased, dead), after settling. O(1) + settling."""
        return self._plan.counts(self._run(*self._plan.take("counts", 0, now_us=now_us)))

    def clear(self) -> int:
        """Delete every item (ready, delayed, leased, dead) and the queue's keys; returns
        how many ready, delayed or leased items there were. O(n). Redis: DEL."""
        return int(self._run(*self._plan.clear()))

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
        lease_us = seconds_to_us(lease, "lease", zero=False)
        if not check_count(count):
            return []
        taken = self._wait(self._plan.take("reserve", count, lease_us, now_us=now_us), timeout)
        return self._plan.leases(taken, lease_us)

    def ack(self, lease: Lease[ItemT], *, now_us: int | None = None) -> bool:
        """Settle a delivery: True if the lease was still held (the item is gone for
        good), False if it had expired or was settled already (the item is, or will be,
        delivered again). O(log n)."""
        return bool(self._run(*self._plan.ack((lease,), now_us)))

    def ack_many(self, leases: Sequence[Lease[ItemT]], *, now_us: int | None = None) -> int:
        """:meth:`ack` many leases in one step; returns how many were still held."""
        return int(self._run(*self._plan.ack(leases, now_us))) if leases else 0

    def nack(
        self, lease: Lease[ItemT], *, delay: float = 0.0, now_us: int | None = None
    ) -> NackOutcome:
        """Give a delivery back as failed: requeued now, or after ``delay`` seconds; dead
        if it was the last allowed delivery. "not held" if the lease was not held."""
        return self._plan.nack_outcome(int(self._run(*self._plan.nack(lease, delay, now_us))))

    def extend(
        self, lease: Lease[ItemT], lease_seconds: float, *, now_us: int | None = None
    ) -> Lease[ItemT] | None:
        """Hold a delivery ``lease_seconds`` from now; the renewed lease, or None if it
        was no longer held. O(log n)."""
        deadline = self._run(*self._plan.extend(lease, lease_seconds, now_us))
        return self._plan.extended(lease, deadline)

    def dead_letters(
        self, count: int | None = None, *, now_us: int | None = None
    ) -> list[DeadLetter[ItemT]]:
        """Dead letters, oldest death first (``count`` of them, or all)."""
        return self._plan.dead_letters(self._run(*self._plan.dead("list", count, now_us)))

    def retry_dead(self, count: int | None = None, *, now_us: int | None = None) -> int:
        """Put the oldest dead letters back in the queue with a fresh delivery count."""
        return int(self._run(*self._plan.dead("retry", count, now_us)))

    def purge_dead(self) -> int:
        """Delete every dead letter; returns how many."""
        return int(self._run(*self._plan.dead("purge", None, None)))
