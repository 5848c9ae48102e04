"""A board's notification policy: when rank changes are looked for and which are worth
telling (docs/live.md, "Notifications"). Pure data, no I/O.

Three settings, each one of seed 003's plans, and combinable in one policy:

- ``interval``: a snapshot diff at this period. Each member's rank at the previous
  snapshot is compared with its rank now; a member is told at most once per interval,
  however many times it was written in between.
- ``kinds`` and ``thresholds``: which changes are worth telling. ``entered_top``
  (the member's rank went from above ``N`` or absent to ``N`` or better, for each
  threshold ``N``; default 10 and 3), ``first_taken``, ``first_lost``, and the plain
  ``rank_up`` / ``rank_down`` of every rank change.
- ``within``: only in the last ``within`` before the watched window (a season, a day,
  a week, a month) ends, or before ``ends_at``; nothing before that.

:data:`FINAL_DAY` is seed 003's combined plan: nothing normally; in the last 24 h, a
30-minute snapshot diff, telling only top-10 entries and first place taken or lost.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Final

from ..core._time import micros, to_utc
from ..errors import NotifyConfigError

__all__ = [
    "DEFAULT_THRESHOLDS",
    "FINAL_DAY",
    "MEANINGFUL",
    "PRESETS",
    "ChangeKind",
    "NotifyPolicy",
]

DEFAULT_THRESHOLDS: Final = (10, 3)
"""Seed 003's "entered the top 10" and "entered the top 3"."""

MAX_TOP: Final = 10_000
"""The largest threshold (and ``top``) a policy may ask for: the diff reads that many
entries every interval."""


class ChangeKind(StrEnum):
    """The changes a policy can tell. A member gets one notification per diff: the most
    significant of those it made (first place, then the smallest top entered, then
    ``rank_up`` / ``rank_down``)."""

    FIRST_TAKEN = "first_taken"
    """Rank 1 now, another rank (or absent) at the previous snapshot."""
    FIRST_LOST = "first_lost"
    """Rank 1 at the previous snapshot, another rank (or absent) now."""
    ENTERED_TOP = "entered_top"
    """Rank ``N`` or better now, worse than ``N`` (or absent) before, for a threshold ``N``."""
    RANK_UP = "rank_up"
    """A better rank than at the previous snapshot (the member was on the board then)."""
    RANK_DOWN = "rank_down"
    """A worse rank than at the previous snapshot (still on the board now)."""

    @classmethod
    def parse(cls, value: str | ChangeKind) -> ChangeKind:
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(kind.value for kind in cls)
            raise NotifyConfigError(
                f"unknown kind of change {value!r}; expected: {names}"
            ) from None


MEANINGFUL: Final = frozenset(
    {ChangeKind.ENTERED_TOP, ChangeKind.FIRST_TAKEN, ChangeKind.FIRST_LOST}
)
"""Seed 003's "meaningful changes only"."""


@dataclass(frozen=True, slots=True)
class NotifyPolicy:
    """When a board's rank changes are looked for, and which are told.

    ``interval``: the snapshot diff's period (a positive ``timedelta``; diffs run on a
    grid of the interval counted from the Unix epoch, so every process agrees on the
    slots). ``kinds``: the changes told (default: the meaningful ones). ``thresholds``:
    the tops whose entry is told. ``within``: only in the last ``within`` before the
    window ends (None: always). ``window``: the window watched (a window argument of the
    board's reads, such as ``"s:spring"``; None: the board's current primary window).
    ``ends_at``: the end ``within`` counts back from on a window that never ends
    (all-time). ``top``: how many of the top each diff reads (default: the largest
    threshold, at least 1); members below it are diffed only when written since the
    previous snapshot. Invalid settings raise :class:`~ranked.errors.NotifyConfigError`.
    """

    interval: timedelta = timedelta(minutes=5)
    kinds: frozenset[ChangeKind] = MEANINGFUL
    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS
    within: timedelta | None = None
    window: str | None = None
    ends_at: datetime | None = None
    top: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.interval, timedelta) or self.interval <= timedelta(0):
            raise NotifyConfigError(f"interval must be a positive timedelta, not {self.interval!r}")
        if micros(self.interval) < 1000:
            raise NotifyConfigError("interval must be at least 1 ms")
        kinds = frozenset(ChangeKind.parse(kind) for kind in self.kinds)
        if not kinds:
            raise NotifyConfigError("a policy tells at least one kind of change")
        object.__setattr__(self, "kinds", kinds)
        thresholds = tuple(sorted(set(self.thresholds)))
        for threshold in thresholds:
            if isinstance(threshold, bool) or not isinstance(threshold, int):
                raise NotifyConfigError(f"a threshold is a whole rank, not {threshold!r}")
            if not 1 <= threshold <= MAX_TOP:
                raise NotifyConfigError(f"a threshold is in [1, {MAX_TOP}], not {threshold}")
        if ChangeKind.ENTERED_TOP in kinds and not thresholds:
            raise NotifyConfigError("entered_top needs at least one threshold")
        object.__setattr__(self, "thresholds", thresholds)
        if self.within is not None and (
            not isinstance(self.within, timedelta) or self.within <= timedelta(0)
        ):
            raise NotifyConfigError(f"within must be a positive timedelta, not {self.within!r}")
        if self.ends_at is not None:
            object.__setattr__(self, "ends_at", to_utc(self.ends_at, NotifyConfigError))
        if self.top is not None and (
            isinstance(self.top, bool)
            or not isinstance(self.top, int)
            or not 1 <= self.top <= MAX_TOP
        ):
            raise NotifyConfigError(f"top is a whole number in [1, {MAX_TOP}], not {self.top!r}")

    @property
    def read_top(self) -> int:
        """How many of the top each diff reads: ``top``, else the largest threshold
        (entered_top) or 1 (first place), at least 1."""
        if self.top is not None:
            return self.top
        wanted = max(self.thresholds) if ChangeKind.ENTERED_TOP in self.kinds else 1
        return max(wanted, 1)

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> NotifyPolicy:
        """The named preset of :data:`PRESETS`, with ``overrides`` (any field)."""
        found = PRESETS.get(name)
        if found is None:
            raise NotifyConfigError(f"no notification preset {name!r}; expected: {sorted(PRESETS)}")
        fields = {name: getattr(found, name) for name in found.__slots__}
        fields.update(overrides)
        return cls(**fields)

    @staticmethod
    def kinds_of(names: Iterable[str]) -> frozenset[ChangeKind]:
        return frozenset(ChangeKind.parse(name) for name in names)


FINAL_DAY: Final = NotifyPolicy(
    interval=timedelta(minutes=30),
    kinds=MEANINGFUL,
    thresholds=(10,),
    within=timedelta(hours=24),
)
"""Seed 003's combined plan: nothing normally; in the last 24 hours before the window
ends, a snapshot diff every 30 minutes, telling only top-10 entries and first place
taken or lost."""

PRESETS: Final = {
    "final-day": FINAL_DAY,
    "meaningful": NotifyPolicy(),
    "every-change": NotifyPolicy(
        kinds=frozenset(
            {
                ChangeKind.RANK_UP,
                ChangeKind.RANK_DOWN,
                ChangeKind.FIRST_TAKEN,
                ChangeKind.FIRST_LOST,
                ChangeKind.ENTERED_TOP,
            }
        )
    ),
}
"""Named policies: ``final-day`` (:data:`FINAL_DAY`), ``meaningful`` (a 5-minute diff,
top 10 and top 3 entries and first place, always), ``every-change`` (a 5-minute diff,
every rank change of a member read)."""
