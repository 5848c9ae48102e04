"""Seed 001's distributed heap: N queues on N hash tags, merged by the global minimum.

Written once: ``_async/sharded.py`` (:class:`AsyncShardedQueue`) is the source and
``_sync/sharded.py`` (:class:`ShardedQueue`) is generated from it by
``scripts/generate_sync.py``.

Each shard is a whole queue named ``<name>.<i>`` (its own hash tag, so a Redis Cluster
spreads the shards over its nodes). A push goes to one shard (by a shard key, or round
robin). A pop reads every shard's head (one call per shard), picks the least (priority,
push sequence), and pops it with a conditional step that takes the head only if it is
still that item; on a conflict (another consumer got there first) it reads the heads
again. Stale items (older than ``max_age``) are evicted by every shard on access, all
with the same window.

Ordering: strict within a shard (priority, then push order). Across shards, with one
consumer, items leave by priority and, among equal priorities, by their push sequence,
which follows each shard's clock (exact on one server or in memory; within the nodes'
clock skew on a cluster). With several consumers the global order is approximate: two
consumers may pop the two smallest heads in either order. No item is lost or delivered
twice in any case (each pop is an atomic step on one shard).

The sans-I/O steps (``_sharded_plan``) are driven by :meth:`AsyncShardedQueue._drive`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Generic, Literal, overload

from ...backends.base import AsyncBackend
from ...backends.procedure import AsyncBound, Operation
from .._plan import WAIT_IN_TASK, deadline_after, pauses
from .._sharded_plan import Head, ShardedPlan, Steps, triples_of
from ..results import Counts, Item, Items, ItemT

__all__ = ["AsyncShardedQueue"]


class AsyncShardedQueue(Generic[ItemT]):
    """A priority queue over ``shards`` queues (see the module text for its ordering).

    ``max_age``: seconds after which an undelivered item is evicted (the window every
    shard applies on access). ``text``: items come back as ``str``.
    """

    @overload
    def __init__(
        self: AsyncShardedQueue[bytes],
        backend: AsyncBackend,
        name: str,
        shards: int,
        *,
        max_age: float | None = ...,
        text: Literal[False] = False,
    ) -> None: ...
    @overload
    def __init__(
        self: AsyncShardedQueue[str],
        backend: AsyncBackend,
        name: str,
        shards: int,
        *,
        max_age: float | None = ...,
        text: Literal[True],
    ) -> None: ...
    def __init__(
        self,
        backend: AsyncBackend,
        name: str,
        shards: int,
        *,
        max_age: float | None = None,
        text: bool = False,
    ) -> None:
        self._plan: ShardedPlan[ItemT] = ShardedPlan(name, shards, max_age, text, WAIT_IN_TASK)
        self._steps: dict[Operation[Any], AsyncBound[Any]] = {
            operation: backend.bind(operation) for operation in self._plan.operations()
        }

    @property
    def shards(self) -> int:
        return len(self._plan.plans)

    async def _drive(self, steps: Steps) -> Any:
        """Run a plan's steps, sending each answer back, and return its result."""
        try:
            operation, args = next(steps)
            while True:
                operation, args = steps.send(await self._steps[operation](*args))
        except StopIteration as done:
            return done.value

    async def push(
        self,
        item: Item,
        priority: float = 0.0,
        *,
        key: bytes | str | None = None,
        delay: float | None = None,
        at: float | None = None,
        now_us: int | None = None,
    ) -> None:
        """Queue ``item`` on the shard of ``key`` (round robin without one). O(log n)."""
        await self._drive(self._plan.push_steps(((item, priority, key),), delay, at, now_us))

    async def push_many(
        self,
        items: Items,
        *,
        delay: float | None = None,
        at: float | None = None,
        now_us: int | None = None,
    ) -> int:
        """Queue (item, priority) pairs round robin: one call per shard touched."""
        triples = triples_of(items)
        return int(await self._drive(self._plan.push_steps(triples, delay, at, now_us)))

    async def _pop(self, timeout: float | None, now_us: int | None) -> Head | None:
        deadline = None if timeout is None else deadline_after(timeout)
        head: Head | None = await self._drive(self._plan.pop_steps(now_us))
        if head is None and deadline is not None:
            for pause in pauses(deadline):
                await asyncio.sleep(pause)
                head = await self._drive(self._plan.pop_steps(now_us))
                if head is not None:
                    break
        return head

    async def pop(self, timeout: float | None = None, *, now_us: int | None = None) -> ItemT | None:
        """Remove and return the least head of all shards. O(shards) calls + O(log n)."""
        return self._plan.item(await self._pop(timeout, now_us))

    async def pop_with_priority(
        self, timeout: float | None = None, *, now_us: int | None = None
    ) -> tuple[ItemT, float] | None:
        """As :meth:`pop`, with the item's priority."""
        return self._plan.pair(await self._pop(timeout, now_us))

    async def peek(self, *, now_us: int | None = None) -> ItemT | None:
        """The least head of all shards, not removed."""
        return self._plan.first(await self._drive(self._plan.heads(now_us)))

    async def counts(self, *, now_us: int | None = None) -> Counts:
        """Items by state, summed over the shards."""
        counts: Counts = await self._drive(self._plan.counts_steps(now_us))
        return counts

    async def size(self, *, now_us: int | None = None) -> int:
        """Visible items in every shard."""
        return (await self.counts(now_us=now_us)).ready

    async def is_empty(self, *, now_us: int | None = None) -> bool:
        return await self.size(now_us=now_us) == 0

    async def clear(self) -> int:
        """Delete every shard; returns how many items there were."""
        return int(await self._drive(self._plan.clear_steps()))
