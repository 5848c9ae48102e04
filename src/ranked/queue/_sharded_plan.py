"""The sharded queue's logic with no I/O: shard choice and the merge, as generators of
backend calls (each yields a ``backend.run`` call and receives its answer), driven by
:class:`~ranked.queue.ShardedQueue` and :class:`~ranked.queue.AsyncShardedQueue`."""

from __future__ import annotations

import itertools
from collections.abc import Generator, Iterable
from typing import Any, Final, Generic

from ..core.keys import crc16
from ..errors import QueueArgumentError
from ._plan import Call, QueuePlan, item_bytes
from ._procedures import Taken
from .results import Counts, ItemT

__all__ = ["MAX_ROUNDS", "Head", "ShardedPlan", "Steps"]

Steps = Generator[Call, Any, Any]
MAX_ROUNDS: Final = 8
"""Merge rounds before a contended pop takes the first shard head it can get."""

Head = tuple[int, tuple[bytes, float, int]]


class ShardedPlan(Generic[ItemT]):
    """The shards' plans and the merge, with no I/O."""

    def __init__(self, name: str, shards: int, max_age: float | None, text: bool) -> None:
        if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= 1024:
            raise QueueArgumentError(f"shards must be an int in [1, 1024], not {shards!r}")
        self.name = name
        self.plans: list[QueuePlan[ItemT]] = [
            QueuePlan(f"{name}.{index}", max_attempts=None, max_age=max_age, text=text)
            for index in range(shards)
        ]
        self._turn = itertools.count()

    def shard_of(self, key: object) -> int:
        """The shard of a shard key (CRC16 of its bytes), or the next one round robin."""
        if key is None:
            return next(self._turn) % len(self.plans)
        return crc16(item_bytes(key)) % len(self.plans)

    def push_steps(
        self,
        items: Iterable[tuple[object, object, object]],
        delay: object,
        at: object,
        now_us: int | None,
    ) -> Steps:
        """Push (item, priority, shard key) triples: validated first, one call per shard."""
        groups: dict[int, list[tuple[object, object]]] = {}
        for item, priority, key in items:
            groups.setdefault(self.shard_of(key), []).append((item, priority))
        calls = [
            self.plans[index].push_many(pairs, delay, at, now_us) for index, pairs in groups.items()
        ]
        pushed = 0
        for call in calls:
            if call is not None:
                pushed += int((yield call))
        return pushed

    def heads(
        self, now_us: int | None
    ) -> Generator[Call, Any, list[tuple[float, bytes, int, bytes]]]:
        """Every shard's head as (priority, sequence bytes, shard, id), least first."""
        heads = []
        for index, plan in enumerate(self.plans):
            taken: Taken = yield plan.take("peek", 1, now_us=now_us)
            if taken.rows:
                item_id, priority, _ = taken.rows[0]
                heads.append((priority, item_id[:8], index, item_id))
        heads.sort()
        return heads

    def pop_steps(self, now_us: int | None) -> Generator[Call, Any, Head | None]:
        """Pop the global minimum: read the heads, pop the least if it is still the head."""
        for _ in range(MAX_ROUNDS):
            heads = yield from self.heads(now_us)
            if not heads:
                return None
            _, _, index, item_id = heads[0]
            plan = self.plans[index]
            taken: Taken = yield plan.take("pop", 1, expect=item_id, now_us=now_us)
            if not taken.conflict and taken.rows:
                return index, taken.rows[0]
        for index, plan in enumerate(self.plans):  # heavy contention: any head will do
            taken = yield plan.take("pop", 1, now_us=now_us)
            if taken.rows:
                return index, taken.rows[0]
        return None

    def counts_steps(self, now_us: int | None) -> Steps:
        totals = [0, 0, 0, 0]
        for plan in self.plans:
            counts = plan.counts((yield plan.take("counts", 0, now_us=now_us)))
            totals = [total + value for total, value in zip(totals, counts, strict=True)]
        return Counts(*totals)

    def clear_steps(self) -> Steps:
        cleared = 0
        for plan in self.plans:
            cleared += int((yield plan.clear()))
        return cleared

    def item(self, head: Head | None) -> ItemT | None:
        return None if head is None else self.plans[0].item(head[1][0][8:])

    def pair(self, head: Head | None) -> tuple[ItemT, float] | None:
        return None if head is None else (self.plans[0].item(head[1][0][8:]), head[1][1])
