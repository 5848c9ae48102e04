"""Result types of leaderboard operations: small, immutable, and typed.

The per-row types (:class:`Entry`, :class:`MemberRank`) are named tuples: a page builds
one per row, and a named tuple builds several times faster than a frozen dataclass.
The per-call containers (:class:`Page`, :class:`Around`, :class:`SubmitResult`) stay
frozen dataclasses.

Ranks are 1-based and follow the rank style asked for (see :mod:`ranked.core.ranks`);
scores are the board's float64 scores (a board with a composite layout decodes them
with its :class:`~ranked.core.scores.TimeTiebreak`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = ["Around", "Entry", "Member", "MemberData", "MemberRank", "Page", "SubmitResult"]

Member = str | bytes
"""A member id: ``str`` (stored as UTF-8) or raw ``bytes``; binary safe."""


@dataclass(frozen=True, slots=True)
class MemberData:
    """What a board knows about a member besides its score: a display name and JSON
    metadata (a read-only mapping of JSON values, parsed for this result alone)."""

    member: Member
    display_name: str | None
    metadata: Mapping[str, Any]


class Entry(NamedTuple):
    """One member on a board: its score, its 1-based rank and, when the read asked for
    it (``with_data=True``), its :class:`MemberData` (``None``: none stored, or not
    asked for)."""

    member: Member
    score: float
    rank: int
    data: MemberData | None = None


@dataclass(frozen=True, slots=True)
class SubmitResult:
    """What one submission did.

    ``previous_score`` / ``previous_rank`` are ``None`` for a member new to the
    board; ``changed`` is whether the stored score changed (a ``best`` submission
    below the current best leaves it unchanged).
    """

    member: Member
    score: float
    previous_score: float | None
    rank: int
    previous_rank: int | None
    changed: bool


@dataclass(frozen=True, slots=True)
class Page:
    """A page of entries, best first, and the cursor of the next page (``None``: no more)."""

    entries: tuple[Entry, ...]
    next_cursor: str | None


class MemberRank(NamedTuple):
    """One member of a ranks-of-a-list request: ``score`` and ``rank`` are ``None`` if absent."""

    member: Member
    score: float | None
    rank: int | None

    @property
    def found(self) -> bool:
        """Whether the member is on the board."""
        return self.rank is not None


@dataclass(frozen=True, slots=True)
class Around:
    """Entries around a member, best first; ``member_index`` is the member's index in them.

    ``member_index`` is ``None`` (and ``entries`` empty) when the member is not on the board.
    """

    entries: tuple[Entry, ...]
    member_index: int | None

    @property
    def member(self) -> Entry | None:
        """The entry of the member the view is centred on, if it is on the board."""
        return None if self.member_index is None else self.entries[self.member_index]
