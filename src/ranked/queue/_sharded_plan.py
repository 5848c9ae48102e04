"""The sharded queue's logic with no I/O: shard choice and the merge, as generators of
steps (each yields ``(operation, arguments)`` and receives what the bound operation
answered), driven by :class:`~ranked.queue.ShardedQueue` and
:class:`~ranked.queue.AsyncShardedQueue`."""

from __future__ import annotations

import itertools
from collections.abc import Generator, Iterable, Iterator, Mapping
from typing import Any, Final, Generic

from ..backends.procedure import Operation
from ..core.keys import crc16
from ..errors import QueueArgumentError
from ._checks import check_now, item_bytes, pairs_of
from ._plan import QueuePlan
from ._procedures import Taken, item_of
from .results import Counts, ItemT

__all__ = ["MAX_ROUNDS", "Head", "ShardedPlan", "Step", "Steps", "triples_of"]

Step = tuple[Operation[Any], tuple[Any, ...]]
Steps = Generator[Step, Any, Any]
MAX_ROUNDS: Final = 8
"""Merge rounds before a contended pop takes the first shard head it can get."""

Head = tuple[int, tuple[bytes, float, int]]


def triples_of(items: object) -> list[tuple[object, object, object]]:
    """(item, priority, no shard key) triples of a mapping or of (item, priority) pairs."""
    pairs: Iterable[object] = items.items() if isinstance(items, Mapping) else items  # type: ignore[assignment]
    triples: list[tuple[object, object, object]] = []
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise QueueArgumentError(f"expected (item, priority) pairs, got {pair!r}")
        triples.append((pair[0], pair[1], None))
    return triples


class ShardedPlan(Generic[ItemT]):
    """The shards' plans and the merge, with no I/O."""

    def __init__(self, name: str, shards: int, max_age: float | None, text: bool, waits: str):
        if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= 1024:
            raise QueueArgumentError(f"shards must be an int in [1, 1024], not {shards!r}")
        self.name = name
        self.plans: list[QueuePlan[ItemT]] = [
            QueuePlan(f"{name}.{index}", max_attempts=None, max_age=max_age, text=text, waits=waits)
            for index in range(shards)
        ]
        self._item = item_of(text)
        self._turn = itertools.count()

    def operations(self) -> Iterator[Operation[Any]]:
        """Every operation a step may yield (to bind them once)."""
        for plan in self.plans:
            yield from (plan.push_many, plan.take, plan.counts, plan.clear)

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
        now_us: object,
    ) -> Steps:
        """Push (item, priority, shard key) triples: all checked first, one step per shard."""
        groups: dict[int, list[tuple[object, object]]] = {}
        for item, priority, key in items:
            groups.setdefault(self.shard_of(key), []).append((item, priority))
        checked = [(index, pairs_of(pairs)) for index, pairs in groups.items()]
        self.plans[0].when(delay, at)
        check_now(now_us)
        pushed = 0
        for index, pairs in checked:
            pushed += yield self.plans[index].push_many, (pairs, delay, at, now_us)
        return pushed

    def heads(self, now_us: object) -> Generator[Step, Any, list[tuple[float, bytes, int, bytes]]]:
        """Every shard's head as (priority, sequence bytes, shard, id), least first."""
        heads = []
        for index, plan in enumerate(self.plans):
            taken: Taken = yield plan.take, ("peek", 1, b"", now_us)
            if taken.rows:
                item_id, priority, _ = taken.rows[0]
                heads.append((priority, item_id[:8], index, item_id))
        heads.sort()
        return heads

    def pop_steps(self, now_us: object) -> Generator[Step, Any, Head | None]:
        """Pop the global minimum: read the heads, pop the least if it is still the head."""
        for _ in range(MAX_ROUNDS):
            heads = yield from self.heads(now_us)
            if not heads:
                return None
            _, _, index, item_id = heads[0]
            taken: Taken = yield self.plans[index].take, ("pop", 1, item_id, now_us)
            if not taken.conflict and taken.rows:
                return index, taken.rows[0]
        for index, plan in enumerate(self.plans):  # heavy contention: any head will do
            taken = yield plan.take, ("pop", 1, b"", now_us)
            if taken.rows:
                return index, taken.rows[0]
        return None

    def counts_steps(self, now_us: object) -> Steps:
        totals = [0, 0, 0, 0]
        for plan in self.plans:
            counts: Counts = yield plan.counts, (now_us,)
            totals = [total + value for total, value in zip(totals, counts, strict=True)]
        return Counts(*totals)

    def clear_steps(self) -> Steps:
        cleared = 0
        for plan in self.plans:
            cleared += yield plan.clear, ()
        return cleared

    def item(self, head: Head | None) -> ItemT | None:
        item: ItemT | None = None if head is None else self._item(head[1][0][8:])
        return item

    def pair(self, head: Head | None) -> tuple[ItemT, float] | None:
        return None if head is None else (self._item(head[1][0][8:]), head[1][1])

    def first(self, heads: list[tuple[float, bytes, int, bytes]]) -> ItemT | None:
        item: ItemT | None = self._item(heads[0][3][8:]) if heads else None
        return item
