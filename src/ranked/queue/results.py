"""What queue operations return: leases, dead letters, counts, nack outcomes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, Literal, NamedTuple, TypeVar

__all__ = ["Counts", "DeadLetter", "Item", "Items", "Lease", "NackOutcome"]

ItemT = TypeVar("ItemT", bytes, str)

Item = bytes | bytearray | memoryview | str
"""What may be pushed: bytes-like payloads as they are, ``str`` as UTF-8."""
Items = Mapping[bytes, float] | Mapping[str, float] | Iterable[tuple[Item, float]]
"""Many (item, priority) pairs: a mapping or an iterable of pairs."""

NackOutcome = Literal["requeued", "delayed", "dead", "dropped", "not held"]
"""What :meth:`Queue.nack` did: back in ``ready``; parked until its delay passes; moved to
the dead letters (its last allowed delivery failed); dropped (older than ``max_age``); or
nothing, because the lease was no longer held (expired, acknowledged, or never ours)."""


@dataclass(frozen=True, slots=True)
class Lease(Generic[ItemT]):
    """One delivery of an item in reliable mode: hold it until ``deadline_us``.

    ``delivery`` counts deliveries of this item (1 on the first reserve). ``token`` names
    this delivery only (priority, delivery number and id): acknowledging it after the
    lease expired, or after the item was delivered again, is refused.
    """

    item: ItemT
    priority: float
    delivery: int
    deadline_us: int
    token: bytes

    @property
    def deadline(self) -> float:
        """The deadline in Unix seconds (the server's clock)."""
        return self.deadline_us / 1e6


@dataclass(frozen=True, slots=True)
class DeadLetter(Generic[ItemT]):
    """An item whose last allowed delivery failed (``max_attempts`` reached)."""

    item: ItemT
    priority: float
    deliveries: int
    died_at_us: int


class Counts(NamedTuple):
    """Items by state: visible, delayed (not yet visible), leased, dead."""

    ready: int
    delayed: int
    leased: int
    dead: int
