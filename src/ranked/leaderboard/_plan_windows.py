"""A board's windows: which it keeps, where each lives, which a write falls in.

:class:`Windows` resolves a read's ``window`` argument to a window id and its target
(the keys of one window), picks the windows a submission at some instant writes (with
their TTLs: retention past the window's end, and the board's deadline), and remembers the
windows the board has put in its registry (the set of window ids ``clear`` and
``expire_at`` reach). Every answer is cached while its inputs hold: windows only change
at their boundaries. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..core._time import micros
from ..core.windows import Season, Window, WindowKind
from ..errors import WindowError
from ._plan_core import PlanCore, ceil_ms, from_ms
from ._requests import Target

__all__ = ["Windows", "WriteWindows"]

_KIND_NAMES: Final = frozenset(kind.value for kind in WindowKind if kind is not WindowKind.SEASON)
_SEASON_ALIAS: Final = "season:"


@dataclass(slots=True)
class WriteWindows:
    """Where a submission at some instant writes: cached while its inputs hold.

    Valid for instants in ``[low, high)`` (the same windows are open), the same board
    deadline, and, when any target has a TTL (``now`` is not None), the same backend
    millisecond the TTLs were counted from.
    """

    low: int
    high: int
    now: int | None
    deadline: int | None
    targets: tuple[Target, ...]
    ids: tuple[str, ...]
    """The window id of each target, in order."""
    window_of: dict[bytes, str]
    register: list[str]
    """Windows not yet in the board's registry (a non-empty list is never served cached)."""
    primary: str


@dataclass(slots=True)
class _WindowSlot:
    """A window a submission at some instant writes to: its id, base target, end."""

    window_id: str
    target: Target
    end_ms: int | None


class Windows:
    """The windows of one board (no I/O): targets, window ids, write windows, registry."""

    def __init__(self, core: PlanCore) -> None:
        self.core = core
        self.kept = core.config.windows
        """The board's window plan (kinds, seasons, retention)."""
        self._backend_now_ms = core.backend_now_ms
        self.retention_ms = -(-micros(self.kept.retention) // 1000)
        self._targets: dict[str, Target] = {}
        self._registered: set[str] = set()
        self._slots: tuple[int, int, list[_WindowSlot]] | None = None
        self._write_cache: WriteWindows | None = None
        kinds = self.kept.kinds
        self.all_time_first = bool(kinds) and kinds[0] is WindowKind.ALL_TIME
        self._defaults: dict[WindowKind, tuple[int, int, str]] = {}

    def target(self, window_id: str) -> Target:
        """The (TTL-less) target of a window id; built once."""
        target = self._targets.get(window_id)
        if target is None:
            keys = self.core.keys
            target = Target(
                keys.window(window_id),
                keys.dense(window_id),
                keys.dense_counts(window_id),
                None,
                keys.ties(window_id) if self.core.secondary else None,
            )
            self._targets[window_id] = target
        return target

    def slots_at(self, instant_ms: int) -> list[_WindowSlot]:
        """The windows a write at ``instant_ms`` falls in; cached until one opens or closes."""
        cached = self._slots
        if cached is not None and cached[0] <= instant_ms < cached[1]:
            return cached[2]
        when = from_ms(instant_ms)
        found = self.kept.windows_at(when)
        low, high = -(1 << 62), 1 << 62
        slots = []
        for window in found:
            end_ms = None
            if window.start is not None and window.end is not None:
                end_ms = ceil_ms(window.end)
                low, high = max(low, ceil_ms(window.start)), min(high, end_ms)
            slots.append(_WindowSlot(window.id, self.target(window.id), end_ms))
        for season in self.kept.seasons:  # a season opening or closing ends the cache
            if season.start > when:
                high = min(high, ceil_ms(season.start))
            elif season.end <= when:
                low = max(low, ceil_ms(season.end))
        self._slots = (low, high, slots)
        return slots

    def default_id(self, now_ms: int) -> str:
        """The id of the board's default window at ``now_ms`` (its first kind's, or the
        current season's)."""
        kinds = self.kept.kinds
        if not kinds:
            now = from_ms(now_ms)
            seasons = self.kept.seasons
            current = [s for s in seasons if s.start <= now < s.end]
            return (current[0] if current else seasons[0]).window.id
        return self.kind_id(kinds[0], now_ms)

    def kind_id(self, kind: WindowKind, now_ms: int) -> str:
        """The id of ``kind``'s window at ``now_ms``; cached while that window lasts."""
        if kind is WindowKind.ALL_TIME:
            return "all"
        cached = self._defaults.get(kind)
        if cached is not None and cached[0] <= now_ms < cached[1]:
            return cached[2]
        window = self.kept.window(kind, from_ms(now_ms))
        assert window.start is not None and window.end is not None
        self._defaults[kind] = (ceil_ms(window.start), ceil_ms(window.end), window.id)
        return window.id

    def window_id(self, window: str | Window | None, now_ms: int | None = None) -> str:
        """Resolve a read's ``window`` argument to a window id of this board.

        ``None``: the current window of the board's first kind. ``"daily"``, ``"weekly"``,
        ``"monthly"``, ``"all"``: that kind's current window. ``"season:<name>"`` or
        ``"s:<name>"``: a season. Anything else is a window id (``"d2026-11-21"``...).
        A window the board does not keep raises :class:`WindowError`.
        """
        if window is None and self.all_time_first:
            return "all"  # the all-time window has one id at every instant: no clock read
        now = self.core.now_ms() if now_ms is None else now_ms
        if window is None:
            return self.default_id(now)
        if isinstance(window, Window):
            window = window.id
        if not isinstance(window, str):
            raise WindowError(f"a window is a str or Window, not {type(window).__name__}")
        if window in _KIND_NAMES:
            kind = WindowKind(window)
            if kind not in self.kept.kinds:
                raise WindowError(f"board {self.core.config.name!r} keeps no {window} window")
            return self.kind_id(kind, now)
        if window.startswith(_SEASON_ALIAS):
            return self.kept.season(window[len(_SEASON_ALIAS) :]).id
        resolved = self.kept.window_for_id(window)
        if resolved.kind is not WindowKind.SEASON and resolved.kind not in self.kept.kinds:
            raise WindowError(f"board {self.core.config.name!r} keeps no {resolved.kind} windows")
        return resolved.id

    def read_target(self, window: str | Window | None) -> tuple[str, Target]:
        """The window id and target a read uses."""
        if window is None and self.all_time_first:
            return "all", self.target("all")  # the default needs no clock read
        window_id = self.window_id(window)
        return window_id, self.target(window_id)

    def season_end_ms(self, season: str | Season) -> int:
        """The end of one of the board's seasons, in Unix ms."""
        if isinstance(season, Season):
            season = season.name
        end = self.kept.season(season).end
        assert end is not None
        return ceil_ms(end)

    def is_registered(self, window_id: str) -> bool:
        """Whether this board has put ``window_id`` in its registry (since the last clear)."""
        return window_id in self._registered

    def write_windows(self, instant: int) -> WriteWindows:
        """The targets a submission at ``instant`` writes (with TTLs), the window id of
        each, the windows to register, and the primary window id; cached (see
        :class:`WriteWindows`), as windows only change at their boundaries."""
        cached = self._write_cache
        deadline = self.core.deadline_ms
        if (
            cached is not None
            and cached.low <= instant < cached.high
            and cached.deadline == deadline
            and not cached.register
        ):
            if cached.now is None:
                return cached
            backend_now = self._backend_now_ms()
            if cached.now == backend_now:
                return cached
        else:
            backend_now = self._backend_now_ms()
        targets: list[Target] = []
        ids: list[str] = []
        window_of: dict[bytes, str] = {}
        register: list[str] = []
        timed = deadline is not None
        for slot in self.slots_at(instant):
            target = slot.target
            ttl: int | None = None
            if slot.end_ms is not None:
                timed = True
                ttl = slot.end_ms + self.retention_ms - backend_now
                if ttl <= 0:
                    continue  # past its retention: the key is (or is about to be) gone
            if deadline is not None:
                ttl = max(1, min(deadline - backend_now, ttl if ttl is not None else 1 << 62))
            if ttl is not None:
                target = Target(
                    target.key, target.dense_key, target.counts_key, ttl, target.ties_key
                )
            targets.append(target)
            ids.append(slot.window_id)
            window_of[target.key] = slot.window_id
            if slot.window_id not in self._registered:
                register.append(slot.window_id)
        if not targets:
            raise WindowError(
                f"every window of {from_ms(instant).isoformat()} is past its retention; "
                "nothing would be written"
            )
        primary = self.default_id(instant)
        if self.core.keys.window(primary) not in window_of:
            primary = ids[0]
        assert self._slots is not None  # filled by slots_at above
        low, high = self._slots[0], self._slots[1]
        found = WriteWindows(
            low,
            high,
            backend_now if timed else None,
            deadline,
            tuple(targets),
            tuple(ids),
            window_of,
            register,
            primary,
        )
        self._write_cache = found
        return found

    def window_targets(self, instant: int) -> tuple[list[Target], dict[bytes, str], list[str], str]:
        """:meth:`write_windows` as (targets, window id per key, to register, primary)."""
        found = self.write_windows(instant)
        return list(found.targets), found.window_of, found.register, found.primary

    def register(self, window_ids: list[str]) -> None:
        """Note windows now in the board's registry."""
        if window_ids:
            self._registered.update(window_ids)
            self._write_cache = None  # its register list is stale now

    def forget(self) -> None:
        """Forget the registry (the board was cleared: every window must register again)."""
        self._registered.clear()
        self._write_cache = None
