"""The asyncio priority queue: :class:`ranked.queue.Queue`'s operations, awaited.

The logic lives in :mod:`._plan`; this shell only awaits ``backend.run`` and sleeps with
``asyncio.sleep`` between the polls of a blocking pop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Generic, Literal, overload

from ..backends.base import AsyncBackend
from ._lane import lane_of
from ._plan import Call, QueuePlan, check_count, check_timeout, pauses, seconds_to_us
from .results import Counts, DeadLetter, Item, Items, ItemT, Lease, NackOutcome

__all__ = ["AsyncQueue"]


class AsyncQueue(Generic[ItemT]):
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

    __slots__ = ("_backend", "_lane", "_plan", "_run")

    @overload
    def __init__(
        self: AsyncQueue[bytes],
        backend: AsyncBackend,
        name: str,
        *,
        max_attempts: int | None = ...,
        max_age: float | None = ...,
        text: Literal[False] = False,
    ) -> None: ...
    @overload
    def __init__(
        self: AsyncQueue[str],
        backend: AsyncBackend,
        name: str,
        *,
        max_attempts: int | None = ...,
        max_age: float | None = ...,
        text: Literal[True],
    ) -> None: ...
    def __init__(
        self,
        backend: AsyncBackend,
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
        # On memory, the synchronous queue's direct paths (nothing there waits for I/O).
        self._lane = lane_of(backend, name, max_attempts=max_attempts, max_age=max_age, text=text)

    @property
    def name(self) -> str:
        return self._plan.keys.name

    async def _wait(self, call: Call, timeout: float | None) -> Any:
        """Run ``call`` until its answer is truthy (an item came back) or ``timeout``."""
        check_timeout(timeout)
        if self._lane is not None:
            return await self._lane.wait_async(call, timeout)
        answer = await self._run(*call)
        if answer or not timeout:
            return answer
        for pause in pauses(seconds_to_us(timeout, "timeout") / 1e6):
            await asyncio.sleep(pause)
            answer = await self._run(*call)
            if answer:
                break
        return answer

    # -- seed 001's operations ---------------------------------------------------------

    async def push(
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
        if self._lane is not None:
            return self._lane.push(item, priority, delay=delay, at=at, now_us=now_us)
        await self._run(*self._plan.push(item, priority, delay, at, now_us))

    async def push_many(
        self,
        items: Items,
        *,
        delay: float | None = None,
        at: float | None = None,
        now_us: int | None = None,
    ) -> int:
        """Queue many (item, priority) pairs in order, atomically; returns how many.
        O(k log n), one round trip."""
        if self._lane is not None:
            return self._lane.push_many(items, delay=delay, at=at, now_us=now_us)
        call = self._plan.push_many(items, delay, at, now_us)
        return 0 if call is None else int(await self._run(*call))

    async def pop(self, timeout: float | None = None, *, now_us: int | None = None) -> ItemT | None:
        """Remove and return the head, or None when empty. ``timeout`` (seconds): wait up
        to that long for an item (Redis: polling, see :data:`POLL_CAP`; memory: woken by a
        push). O(log n). Redis: ZPOPMIN."""
        if self._lane is not None:
            check_timeout(timeout)
            item = self._lane.pop(None, now_us=now_us)
            if item is not None or not timeout:
                return item
        if timeout is None:
            return self._plan.head_item(await self._run(*self._plan.pop_one(now_us)))
        return self._plan.head_item(await self._wait(self._plan.pop_one(now_us), timeout))

    async def pop_with_priority(
        self, timeout: float | None = None, *, now_us: int | None = None
    ) -> tuple[ItemT, float] | None:
        """As :meth:`pop`, with the item's priority."""
        if self._lane is not None:
            check_timeout(timeout)
            pair = self._lane.pop_with_priority(None, now_us=now_us)
            if pair is not None or not timeout:
                return pair
        return self._plan.head_pair(await self._wait(self._plan.pop_one(now_us), timeout))

    async def pop_many(self, count: int, *, now_us: int | None = None) -> list[ItemT]:
        """Remove and return up to ``count`` items, head first. O(k log n). Redis: ZPOPMIN k."""
        if self._lane is not None:
            return self._lane.pop_many(count, now_us=now_us)
        if not check_count(count):
            return []
        return self._plan.items(await self._run(*self._plan.take("pop", count, now_us=now_us)))

    async def peek(self, *, now_us: int | None = None) -> ItemT | None:
        """The head without removing it, or None. O(log n). Redis: ZRANGE 0 0."""
        return self._plan.first(await self._run(*self._plan.take("peek", 1, now_us=now_us)))

    async def peek_many(
        self, count: int, *, now_us: int | None = None
    ) -> list[tuple[ItemT, float]]:
        """The first ``count`` (item, priority) pairs, head first. O(log n + k)."""
        if not check_count(count):
            return []
        return self._plan.pairs(await self._run(*self._plan.take("peek", count, now_us=now_us)))

    async def size(self, *, now_us: int | None = None) -> int:
        """Visible items (delayed and leased ones not counted). O(1). Redis: ZCARD."""
        return (await self.counts(now_us=now_us)).ready

    async def is_empty(self, *, now_us: int | None = None) -> bool:
        """True when no item is visible."""
        return await self.size(now_us=now_us) == 0

    async def counts(self, *, now_us: int | None = None) -> Counts:
        """Items by state (ready, delayed, leased, dead), after settling. O(1) + settling."""
        return self._plan.counts(await self._run(*self._plan.take("counts", 0, now_us=now_us)))

    async def clear(self) -> int:
        """Delete every item (ready, delayed, leased, dead) and the queue's keys; returns
        how many ready, delayed or leased items there were. O(n). Redis: DEL."""
        return int(await self._run(*self._plan.clear()))

    # -- reliable mode -----------------------------------------------------------------

    async def reserve(
        self, lease: float = 30.0, *, timeout: float | None = None, now_us: int | None = None
    ) -> Lease[ItemT] | None:
        """Take the head for ``lease`` seconds: it stays in the queue's leases until
        :meth:`ack`; if the lease expires first, the next call requeues it (at its
        priority and place) or, after ``max_attempts`` deliveries, moves it to the dead
        letters. ``timeout`` waits for an item as :meth:`pop`. O(log n)."""
        leases = await self.reserve_many(1, lease, timeout=timeout, now_us=now_us)
        return leases[0] if leases else None

    async def reserve_many(
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
        taken = await self._wait(
            self._plan.take("reserve", count, lease_us, now_us=now_us), timeout
        )
        return self._plan.leases(taken, lease_us)

    async def ack(self, lease: Lease[ItemT], *, now_us: int | None = None) -> bool:
        """Settle a delivery: True if the lease was still held (the item is gone for
        good), False if it had expired or was settled already (the item is, or will be,
        delivered again). O(log n)."""
        return bool(await self._run(*self._plan.ack((lease,), now_us)))

    async def ack_many(self, leases: Sequence[Lease[ItemT]], *, now_us: int | None = None) -> int:
        """:meth:`ack` many leases in one step; returns how many were still held."""
        return int(await self._run(*self._plan.ack(leases, now_us))) if leases else 0

    async def nack(
        self, lease: Lease[ItemT], *, delay: float = 0.0, now_us: int | None = None
    ) -> NackOutcome:
        """Give a delivery back as failed: requeued now, or after ``delay`` seconds; dead
        if it was the last allowed delivery. "not held" if the lease was not held."""
        if self._lane is not None:
            return self._lane.nack(lease, delay=delay, now_us=now_us)
        return self._plan.nack_outcome(int(await self._run(*self._plan.nack(lease, delay, now_us))))

    async def extend(
        self, lease: Lease[ItemT], lease_seconds: float, *, now_us: int | None = None
    ) -> Lease[ItemT] | None:
        """Hold a delivery ``lease_seconds`` from now; the renewed lease, or None if it
        was no longer held. O(log n)."""
        deadline = await self._run(*self._plan.extend(lease, lease_seconds, now_us))
        return self._plan.extended(lease, deadline)

    async def dead_letters(
        self, count: int | None = None, *, now_us: int | None = None
    ) -> list[DeadLetter[ItemT]]:
        """Dead letters, oldest death first (``count`` of them, or all)."""
        return self._plan.dead_letters(await self._run(*self._plan.dead("list", count, now_us)))

    async def retry_dead(self, count: int | None = None, *, now_us: int | None = None) -> int:
        """Put the oldest dead letters back in the queue with a fresh delivery count."""
        if self._lane is not None:
            return self._lane.retry_dead(count, now_us=now_us)
        return int(await self._run(*self._plan.dead("retry", count, now_us)))

    async def purge_dead(self) -> int:
        """Delete every dead letter; returns how many."""
        return int(await self._run(*self._plan.dead("purge", None, None)))
