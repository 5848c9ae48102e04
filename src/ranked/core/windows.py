"""Time windows: daily, ISO-8601 weekly, monthly, all-time, and named seasons.

One sorted set per window (see :class:`~ranked.core.keys.BoardKeys.window`); a
submission at instant ``t`` writes to every window of the board that contains ``t``
(:meth:`WindowPlan.windows_at`). Window ids::

    d2026-11-21     daily, by local date
    w2026-W47       weekly, ISO 8601: weeks start on Monday; the week-year may differ
                    from the calendar year (2021-01-03 is in 2020-W53)
    m2026-11        monthly
    all             all-time (no bounds, no TTL)
    s:<name>        a season with exact [start, end) instants

Calendar windows follow the local calendar of the plan's timezone (default UTC):
a day is local midnight to local midnight, 23 or 25 hours across a DST change.
All bounds are returned as aware UTC datetimes: Python compares and subtracts two
datetimes sharing a ``tzinfo`` by wall time, which is wrong across a DST fold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from enum import StrEnum
from typing import Final

from ..errors import InvalidNameError, WindowError
from ._names import check_name
from ._time import Instant, micros, to_utc

__all__ = ["Season", "Window", "WindowKind", "WindowPlan"]

ALL_TIME_ID: Final = "all"
SEASON_PREFIX: Final = "s:"

_DAILY_ID: Final = re.compile(r"d(\d{4})-(\d{2})-(\d{2})")
_WEEKLY_ID: Final = re.compile(r"w(\d{4})-W(\d{2})")
_MONTHLY_ID: Final = re.compile(r"m(\d{4})-(\d{2})")


class WindowKind(StrEnum):
    """The kinds of window a board can keep."""

    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    ALL_TIME = "all"
    SEASON = "season"

    @classmethod
    def parse(cls, value: str | WindowKind) -> WindowKind:
        """The kind named ``value``; raises :class:`~ranked.errors.WindowError` otherwise."""
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(kind.value for kind in cls)
            raise WindowError(f"unknown window kind {value!r}; expected one of: {names}") from None


@dataclass(frozen=True, slots=True)
class Window:
    """One window: its id, kind and ``[start, end)`` bounds in UTC (``None`` for all-time)."""

    id: str
    kind: WindowKind
    start: datetime | None
    end: datetime | None

    def contains(self, at: Instant) -> bool:
        """Whether instant ``at`` is inside ``[start, end)``."""
        when = to_utc(at, WindowError)
        if self.start is None or self.end is None:
            return True
        return self.start <= when < self.end

    def is_closed(self, now: Instant) -> bool:
        """Whether the window has ended at ``now`` (all-time never does)."""
        return self.end is not None and to_utc(now, WindowError) >= self.end

    def ttl_ms(self, now: Instant, retention: timedelta) -> int | None:
        """Milliseconds a key of this window should live from ``now``: ``end + retention - now``.

        Rounded up (a key never expires early); ``0`` once past the retention (the
        key is due for deletion); ``None`` for all-time, which never expires.
        """
        if self.end is None:
            return None
        remaining_us = micros(self.end + retention - to_utc(now, WindowError))
        return max(0, -(-remaining_us // 1000))


@dataclass(frozen=True, slots=True)
class Season:
    """A named competition period with exact, aware ``[start, end)`` instants."""

    name: str
    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        try:
            check_name(self.name, "season name")
        except InvalidNameError as error:
            raise WindowError(str(error)) from None
        start = to_utc(self.start, WindowError)
        end = to_utc(self.end, WindowError)
        if end <= start:
            raise WindowError(f"season {self.name!r} must end after it starts")
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    @property
    def window(self) -> Window:
        """The season as a :class:`Window` with id ``s:<name>``."""
        return Window(SEASON_PREFIX + self.name, WindowKind.SEASON, self.start, self.end)


@dataclass(frozen=True, slots=True)
class WindowPlan:
    """Which windows a board keeps, in which timezone, and how long closed ones stay.

    ``kinds`` are the calendar kinds (daily, weekly, monthly, all-time);
    ``seasons`` are named periods. A key of a window lives until ``end + retention``.
    """

    kinds: tuple[WindowKind, ...] = (WindowKind.ALL_TIME,)
    seasons: tuple[Season, ...] = ()
    timezone: tzinfo = UTC
    retention: timedelta = timedelta(days=7)

    def __post_init__(self) -> None:
        kinds = tuple(WindowKind.parse(kind) for kind in self.kinds)
        if WindowKind.SEASON in kinds:
            raise WindowError("seasons go in `seasons`, not in `kinds`")
        if len(set(kinds)) != len(kinds):
            raise WindowError(f"window kinds repeat: {[kind.value for kind in kinds]}")
        object.__setattr__(self, "kinds", kinds)
        names = [season.name for season in self.seasons]
        if len(set(names)) != len(names):
            raise WindowError(f"season names repeat: {names}")
        if not isinstance(self.timezone, tzinfo):
            raise WindowError(f"timezone must be a tzinfo (e.g. ZoneInfo), not {self.timezone!r}")
        if not isinstance(self.retention, timedelta) or self.retention < timedelta(0):
            raise WindowError(f"retention must be a non-negative timedelta, not {self.retention!r}")

    # -- one window ------------------------------------------------------------------

    def _midnight(self, day: date) -> datetime:
        """The instant ``day`` begins for good: the later reading of its midnight. A
        midnight skipped by DST (fold=0 reads it with the offset before the change) is
        the transition instant; a midnight repeated by DST (fold=1 reads its second
        occurrence) is the second one, as the hour between still counts on the day before.
        """
        first = datetime(day.year, day.month, day.day, tzinfo=self.timezone)
        return max(first.astimezone(UTC), first.replace(fold=1).astimezone(UTC))

    def _calendar_window(
        self, window_id: str, kind: WindowKind, first: date, after: date
    ) -> Window:
        return Window(window_id, kind, self._midnight(first), self._midnight(after))

    def _daily(self, day: date) -> Window:
        return self._calendar_window(
            f"d{day.isoformat()}", WindowKind.DAILY, day, day + timedelta(days=1)
        )

    def _weekly(self, year: int, week: int) -> Window:
        monday = date.fromisocalendar(year, week, 1)
        return self._calendar_window(
            f"w{year:04d}-W{week:02d}", WindowKind.WEEKLY, monday, monday + timedelta(days=7)
        )

    def _monthly(self, year: int, month: int) -> Window:
        after = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
        return self._calendar_window(
            f"m{year:04d}-{month:02d}", WindowKind.MONTHLY, date(year, month, 1), after
        )

    def window(self, kind: WindowKind | str, at: Instant) -> Window:
        """The calendar window of ``kind`` containing instant ``at`` (in the plan's timezone).

        Seasons are not calendar windows: see :meth:`season` and :meth:`windows_at`.
        """
        resolved = WindowKind.parse(kind)
        if resolved is WindowKind.ALL_TIME:
            return Window(ALL_TIME_ID, resolved, None, None)
        if resolved is WindowKind.SEASON:
            raise WindowError("a season window is looked up by name: use season(name)")
        instant = to_utc(at, WindowError)
        local = instant.astimezone(self.timezone).date()
        try:
            window = self._calendar(resolved, local)
            if window.start is not None and instant < window.start:
                # the hour a DST fold repeats after midnight: still the day before
                window = self._calendar(resolved, local - timedelta(days=1))
        except OverflowError:
            raise WindowError(f"the {resolved.value} window of {local} ends after 9999") from None
        return window

    def _calendar(self, kind: WindowKind, local: date) -> Window:
        """The daily, weekly or monthly window named by the local date ``local``."""
        if kind is WindowKind.DAILY:
            return self._daily(local)
        if kind is WindowKind.WEEKLY:
            iso = local.isocalendar()
            return self._weekly(iso.year, iso.week)
        return self._monthly(local.year, local.month)

    def season(self, name: str) -> Window:
        """The window of the season called ``name``; raises WindowError if there is none."""
        for season in self.seasons:
            if season.name == name:
                return season.window
        raise WindowError(f"no season named {name!r}")

    def window_for_id(self, window_id: str) -> Window:
        """The window a window id names (its bounds in this plan's timezone).

        Raises :class:`~ranked.errors.WindowError` for an id that does not parse,
        names an impossible date, or an unknown season.
        """
        if window_id == ALL_TIME_ID:
            return Window(ALL_TIME_ID, WindowKind.ALL_TIME, None, None)
        if window_id.startswith(SEASON_PREFIX):
            return self.season(window_id[len(SEASON_PREFIX) :])
        try:
            if match := _DAILY_ID.fullmatch(window_id):
                return self._daily(date(*(int(part) for part in match.groups())))
            if match := _WEEKLY_ID.fullmatch(window_id):
                return self._weekly(int(match[1]), int(match[2]))
            if match := _MONTHLY_ID.fullmatch(window_id):
                year, month = int(match[1]), int(match[2])
                date(year, month, 1)  # validates the month
                return self._monthly(year, month)
        except (ValueError, OverflowError) as error:
            raise WindowError(f"window id {window_id!r} names no real period: {error}") from None
        raise WindowError(f"window id {window_id!r} does not parse")

    # -- a submission ----------------------------------------------------------------

    def windows_at(self, at: Instant) -> list[Window]:
        """Every window a submission at ``at`` writes to: each kind's, then each open season's."""
        when = to_utc(at, WindowError)
        found = [self.window(kind, when) for kind in self.kinds]
        found.extend(season.window for season in self.seasons if season.start <= when < season.end)
        return found

    def ttl_ms(self, window: Window, now: Instant) -> int | None:
        """:meth:`Window.ttl_ms` with this plan's retention."""
        return window.ttl_ms(now, self.retention)
