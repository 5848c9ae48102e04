"""A read-only view of one board's events up to an instant: what a board is restored
from to show how it stood then (``Leaderboard.as_of``), or to rebuild one of its windows
(``Leaderboard.rebuild_window``: the events up to a sequence number that can touch it).

The view keeps the events of the board whose instant (``at_us``) is at or before the
given one (and, when given, whose ``board_seq`` is at most ``up_to_seq`` and that
``select`` keeps), in journal order, numbered again 1, 2, 3, ... (so a board restores from
them like from a journal of its own). Appending raises :class:`~ranked.errors.JournalError`:
the view is read-only. Reading it reads the whole board's events once: O(events).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..errors import JournalError
from .events import Event, NewEvent
from .stats import CommitStats
from .store import JournalStore

__all__ = ["AsOf"]


class AsOf:
    """``store``'s events of ``board`` counting at or before ``at_us`` (numbered at most
    ``up_to_seq``, kept by ``select``), read-only."""

    def __init__(
        self,
        store: JournalStore,
        board: str,
        at_us: int,
        *,
        up_to_seq: int | None = None,
        select: Callable[[Event], bool] | None = None,
    ) -> None:
        self.store = store
        self.board = board
        self.at_us = at_us
        self.up_to_seq = up_to_seq
        self.select = select
        self.durability = "always"

    @property
    def stats(self) -> CommitStats:
        """The underlying store's counters (a view commits nothing)."""
        return self.store.stats

    def native_lane(self) -> None:
        """A view has no lane: it takes no appends."""
        return None

    def committer_busy(self) -> bool:
        """A view commits nothing."""
        return False

    def lane_possible(self) -> bool:
        return False

    def lane_counts(self) -> tuple[int, int]:
        return 0, 0

    def _events(self) -> Iterator[Event]:
        number = 0
        last, select = self.up_to_seq, self.select
        for event in self.store.board_events(self.board):
            if last is not None and event.board_seq > last:
                break
            if event.at_us <= self.at_us and (select is None or select(event)):
                number += 1
                yield dataclasses.replace(event, board_seq=number)

    def board_events(self, board: str, after: int = 0) -> Iterator[Event]:
        if board != self.board:
            return iter(())
        return (event for event in self._events() if event.board_seq > after)

    def aggregate_scores(self, board: str, high_first: bool) -> None:
        """A view folds nothing in SQL: it is replayed."""

    def event_by_key(self, board: str, key: str) -> Event | None:
        return next((e for e in self._events() if e.key == key and board == self.board), None)

    def keys_with_prefix(self, board: str, prefix: str) -> list[str]:
        if board != self.board:
            return []
        return sorted({e.key for e in self._events() if e.key and e.key.startswith(prefix)})

    def removed_after(self, board: str, after: int) -> set[bytes]:
        return {
            e.member
            for e in self._events()
            if board == self.board and e.seq > after and e.operation == "remove" and e.member
        }

    def last_board_event(self, board: str, operation: str) -> Event | None:
        found = [e for e in self._events() if e.member is None and e.operation == operation]
        return found[-1] if found else None

    def boards(self) -> list[str]:
        return [self.board]

    def last_clear(self, board: str, before: int) -> int:
        found = [
            e.board_seq
            for e in self._events()
            if e.operation == "clear" and e.member is None and e.board_seq < before
        ]
        return max(found, default=0)

    def last_board_seq(self, board: str) -> int:
        return sum(1 for _ in self._events()) if board == self.board else 0

    def member_events(self, board: str, member: bytes, limit: int | None = None) -> list[Event]:
        found = [e for e in self._events() if board == self.board and e.member == member]
        return found if limit is None else found[:limit]

    def append(self, events: Sequence[NewEvent], then: Any = None) -> Any:
        raise JournalError(f"board {self.board!r} as of an instant is a read-only view")

    def enqueue(self, appends: Any, on_settled: Any, *, detached: bool = False) -> list[Any]:
        raise JournalError(f"board {self.board!r} as of an instant is a read-only view")

    def read(
        self, after_seq: int = 0, board: str | None = None, limit: int | None = None
    ) -> Iterator[Event]:
        found = (e for e in self._events() if e.seq > after_seq and board in (None, self.board))
        return found if limit is None else (e for _, e in zip(range(limit), found, strict=False))

    def last_seq(self) -> int:
        return max((e.seq for e in self._events()), default=0)

    def flush(self) -> None:
        """Nothing to commit."""

    def close(self) -> None:
        """The underlying journal stays open (its owner closes it)."""
