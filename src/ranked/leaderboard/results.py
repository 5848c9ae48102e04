"""Result types specific to boards: a submission across windows, and member data.

Reads return the shared types of :mod:`ranked.core.models` (Entry, Page, Around,
MemberRank). A submission needs more than :class:`ranked.core.models.SubmitResult`
says: it writes to several windows at once, and a member trimmed by ``keep`` has no
rank, so it gets :class:`Submission`, whose ``rank`` may be ``None``.

Every result is immutable: named tuples and frozen dataclasses, whose mappings are
read-only views (:class:`types.MappingProxyType`) of dicts built for that result alone,
so nothing a caller does to one result can reach another.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import NamedTuple, overload

from ..core.models import Entry, Member, MemberData

__all__ = ["FriendsBoard", "HistoryEntry", "MemberData", "Submission", "WindowResult"]


class WindowResult(NamedTuple):
    """What one submission did to one window (an immutable named tuple: cheap to build
    on every submission).

    Scores are the board's plain scores (a time tie-break board decodes its packed
    values); ``rank`` is ``None`` when ``keep`` trimmed the member right away.
    """

    window: str
    score: float
    previous_score: float | None
    rank: int | None
    previous_rank: int | None
    changed: bool


class Submission(NamedTuple):
    """What one submission did: the board's primary window first, every window by id
    (an immutable named tuple).

    The primary window is the one reads use by default (the board's first window kind,
    at the submission's instant). ``score``, ``rank``... are those of the primary
    window; ``windows`` maps every window id written to its :class:`WindowResult`
    (a read-only mapping of this result's own).
    """

    member: Member
    primary: WindowResult
    windows: Mapping[str, WindowResult] = MappingProxyType({})

    @property
    def window(self) -> str:
        """The primary window's id."""
        return self.primary.window

    @property
    def score(self) -> float:
        """The member's score in the primary window after the submission."""
        return self.primary.score

    @property
    def previous_score(self) -> float | None:
        """The score before (``None``: the member was new to the window)."""
        return self.primary.previous_score

    @property
    def rank(self) -> int | None:
        """The rank after, in the board's rank style (``None``: trimmed by ``keep``)."""
        return self.primary.rank

    @property
    def previous_rank(self) -> int | None:
        """The rank before (``None``: the member was new to the window)."""
        return self.primary.previous_rank

    @property
    def changed(self) -> bool:
        """Whether the stored score changed (a worse ``best`` submission changes nothing)."""
        return self.primary.changed


@dataclass(frozen=True, slots=True)
class FriendsBoard(Sequence[Entry]):
    """A member and its friends ranked among themselves, best first: a sequence of
    :class:`~ranked.core.models.Entry` (iterate it, index it, ``len`` it) that also says
    where the member itself stands.

    ``rank`` is the member's own rank among its friends, in the style asked for, ``None``
    when the member is not on the board. ``member_index`` is the index of its entry in
    ``entries``, ``None`` when it is not there (not on the board, or past
    ``max_page_size``, which bounds ``entries``).
    """

    entries: tuple[Entry, ...]
    member_index: int | None
    rank: int | None

    @property
    def member(self) -> Entry | None:
        """The member's own entry, if it is among ``entries``."""
        return None if self.member_index is None else self.entries[self.member_index]

    @overload
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Entry, ...]: ...

    def __getitem__(self, index: int | slice) -> Entry | tuple[Entry, ...]:
        return self.entries[index]

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)


class HistoryEntry(NamedTuple):
    """One journaled write of a member (:meth:`Leaderboard.history`): what it was, when it
    counted, and, for moderation, who did it and why."""

    seq: int
    """The event's number in the journal."""
    at: datetime
    """The instant the write counted at (UTC)."""
    operation: str
    """``best`` / ``set`` / ``incr`` / ``decr`` (a submission), ``lex``, ``remove``,
    ``member_data``, ``friends_add``, ``friends_remove``."""
    score: float | None
    """The score submitted (None for other operations)."""
    key: str | None
    actor: str | None
    reason: str | None
