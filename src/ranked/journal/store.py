"""The journal store's protocol: what every journal (SQLite, PostgreSQL) offers.

A journal is an append-only sequence of :class:`~ranked.journal.events.Event` records, the
source of truth a board is rebuilt from. ``seq`` is assigned by the store, strictly
increasing from 1 in commit order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, overload

from .events import Event, NewEvent
from .stats import CommitStats

if TYPE_CHECKING:
    from .lane import NativeLane

__all__ = ["Durability", "JournalStore"]

Durability = Literal["always", "batch", "none"]
"""When an append is durable; see :mod:`ranked.journal.sqlite` and docs/durability.md."""

R = TypeVar("R")


class JournalStore(Protocol):
    """An append-only, durable event store."""

    @overload
    def append(self, events: Sequence[NewEvent], then: None = None) -> list[Event]: ...

    @overload
    def append(
        self, events: Sequence[NewEvent], then: Callable[[list[Event], list[bool]], R]
    ) -> R: ...

    def append(
        self,
        events: Sequence[NewEvent],
        then: Callable[[list[Event], list[bool]], R] | None = None,
    ) -> list[Event] | R:
        """Append ``events`` atomically (all or none) and return their records in order.

        An event whose (board, key) was appended before is not appended again: its record
        is the first append's (same ``seq``), so a retried write gets the first answer.
        Returns once the events are as durable as the store's durability mode promises.

        ``then(records, fresh)``, if given, is called on the store's committer thread as
        soon as the records are that durable (``always`` / ``none``: after the commit;
        ``batch``: when the append is written into the open transaction), once, in seq
        order: the ``then`` of one append returns before the next one's starts.
        ``fresh[i]`` is False where ``records[i]`` is an earlier append's record (an
        idempotency-key duplicate). ``append`` then returns what ``then`` returned, or
        raises what it raised (that exception reaches this caller only). ``then`` is not
        called for an append that failed. It must not append to this store and wait (that
        raises :class:`~ranked.errors.JournalError`); it should be short: it holds up every
        later append.
        """
        ...

    def enqueue(
        self,
        appends: Sequence[
            tuple[Sequence[NewEvent], Callable[[list[Event], list[bool]], Any] | None]
        ],
        on_settled: Callable[[], None],
        *,
        detached: bool = False,
    ) -> list[Any]:
        """Hand several appends to the committer at once without waiting (the asyncio
        front's batching; ``detached``: nobody waits for them): each atomic on its own;
        ``on_settled()`` runs once, on the committer thread, when every one is settled;
        each ticket then holds its ``result`` or ``error``."""
        ...

    def read(
        self, after_seq: int = 0, board: str | None = None, limit: int | None = None
    ) -> Iterator[Event]:
        """The committed events with ``seq > after_seq`` (of ``board`` only, if given), in
        seq order, at most ``limit`` of them."""
        ...

    def board_events(self, board: str, after: int = 0) -> Iterator[Event]:
        """The committed events of ``board`` with ``board_seq > after``, in order."""
        ...

    def member_events(self, board: str, member: bytes, limit: int | None = None) -> list[Event]:
        """The committed events of ``member`` on ``board``, in seq order, at most ``limit``."""
        ...

    def aggregate_scores(
        self, board: str, high_first: bool
    ) -> tuple[int, list[tuple[bytes, float]]] | None:
        """The board's scores folded by the store (see ``JournalBase.aggregate_scores``),
        one pair per member in no particular order, with the last ``board_seq`` folded;
        None: replay instead."""
        ...

    def event_by_key(self, board: str, key: str) -> Event | None:
        """The committed event of ``board`` with idempotency key ``key``, if any."""
        ...

    def keys_with_prefix(self, board: str, prefix: str) -> list[str]:
        """The idempotency keys of ``board``'s events that start with ``prefix``, sorted."""
        ...

    def removed_after(self, board: str, after: int) -> set[bytes]:
        """The members of ``board`` removed by events after ``seq`` ``after``."""
        ...

    def last_board_event(self, board: str, operation: str) -> Event | None:
        """``board``'s newest board-wide event (no member) of ``operation``, if any."""
        ...

    def boards(self) -> list[str]:
        """The names of the boards with events, sorted."""
        ...

    def last_clear(self, board: str, before: int) -> int:
        """The ``board_seq`` of ``board``'s last ``clear`` event before ``before`` (0: none)."""
        ...

    def last_board_seq(self, board: str) -> int:
        """The greatest committed ``board_seq`` of ``board``, 0 when it has none."""
        ...

    def last_seq(self) -> int:
        """The greatest committed ``seq``, 0 for an empty journal."""
        ...

    def flush(self) -> None:
        """Commit (and, unless durability is ``none``, fsync) everything appended so far."""
        ...

    def native_lane(self) -> NativeLane | None:
        """The store's native lane, None when it has none (see :mod:`ranked.journal.lane`)."""
        ...

    def lane_possible(self) -> bool:
        """Whether :meth:`native_lane` can give a lane (without starting one)."""
        ...

    def lane_counts(self) -> tuple[int, int]:
        """(events, commits) the native lane wrote; (0, 0) without one."""
        ...

    def committer_busy(self) -> bool:
        """Whether appends handed to the committer are not answered yet."""
        ...

    @property
    def stats(self) -> CommitStats:
        """The committer's counters (commits, events, commit latency, round sizes)."""
        ...

    def close(self) -> None:
        """Flush, then release the file. Appending after close raises
        :class:`~ranked.errors.JournalError`."""
        ...
