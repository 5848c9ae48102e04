"""The journal store's protocol: what every journal (SQLite now, PostgreSQL later) offers.

A journal is an append-only sequence of :class:`~ranked.journal.events.Event` records, the
source of truth a board is rebuilt from. ``seq`` is assigned by the store, strictly
increasing from 1 in commit order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal, Protocol

from .events import Event, NewEvent

__all__ = ["Durability", "JournalStore"]

Durability = Literal["always", "batch", "none"]
"""When an append is durable; see :mod:`ranked.journal.sqlite` and docs/durability.md."""


class JournalStore(Protocol):
    """An append-only, durable event store."""

    def append(self, events: Sequence[NewEvent]) -> list[Event]:
        """Append ``events`` atomically (all or none) and return their records in order.

        An event whose (board, key) was appended before is not appended again: its record
        is the first append's (same ``seq``), so a retried write gets the first answer.
        Returns once the events are as durable as the store's durability mode promises.
        """
        ...

    def read(
        self, after_seq: int = 0, board: str | None = None, limit: int | None = None
    ) -> Iterator[Event]:
        """The committed events with ``seq > after_seq`` (of ``board`` only, if given), in
        seq order, at most ``limit`` of them."""
        ...

    def last_seq(self) -> int:
        """The greatest committed ``seq``, 0 for an empty journal."""
        ...

    def flush(self) -> None:
        """Commit (and, unless durability is ``none``, fsync) everything appended so far."""
        ...

    def close(self) -> None:
        """Flush, then release the file. Appending after close raises ``RuntimeError``."""
        ...
