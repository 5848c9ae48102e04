"""The core of a board's sans-I/O logic: configuration, targets, windows, values, drivers.

Every board operation is a generator that yields steps as ``(step name, args)`` and
receives each step's answer; it returns the typed result. :func:`run_sync` drives it with
the board's steps bound to a :class:`~ranked.backends.base.Backend`, :func:`run_async` to
an :class:`~ranked.backends.base.AsyncBackend` (see :mod:`._steps`), so the sync and async
boards share every line of logic. :class:`PlanCore` holds what every operation needs; the
operations live in mixins by concern (``_plan_write``, ``_plan_read``, ``_plan_social``,
``_plan_life``) assembled into :class:`~ranked.leaderboard._plan.BoardPlan`.

Nothing here touches the network or the engine; time comes from two callables (the
backend's ``now_ms`` and the board's optional clock), both local reads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any, Final, TypeVar

from ..core._time import UNIX_EPOCH, Instant, micros, to_utc
from ..core.cursors import Direction
from ..core.models import Entry, Member, MemberData
from ..core.ranks import RankStyle
from ..core.scores import ScoreAt
from ..core.windows import Season, Window, WindowKind
from ..errors import (
    BoardConfigError,
    InvalidScoreError,
    MemberDataError,
    OutOfRangeError,
    PageSizeError,
    WindowError,
)
from ._requests import Operator, Row, Target, exact_score
from .config import BoardConfig

__all__ = [
    "Call",
    "PlanCore",
    "Steps",
    "TrimmedLookup",
    "WriteWindows",
    "from_ms",
    "member_bytes",
    "member_record",
    "run_async",
    "run_sync",
    "to_ms",
]

T = TypeVar("T")
Call = tuple[str, tuple[Any, ...]]
"""A step: its name (see :mod:`._steps`) and its positional arguments."""
Steps = Generator[Call, Any, T]
"""An operation: yields steps, receives their answers, returns its result."""

TrimmedLookup = Callable[[Member], "float | None"]
"""The rehydration hook: a trimmed member's historical score, or None."""

DEFAULT_PAGE_SIZE: Final = 50
_DELETE_CHUNK: Final = 512
_INF: Final = math.inf
_KIND_NAMES: Final = frozenset(kind.value for kind in WindowKind if kind is not WindowKind.SEASON)
_SEASON_ALIAS: Final = "season:"
_new = tuple.__new__
"""Builds a named-tuple result from a tuple without its generated ``__new__`` (hot paths)."""


def run_sync(bound: Any, steps: Steps[T]) -> T:
    """Drive an operation with a board's steps bound to a synchronous backend
    (:class:`~ranked.leaderboard._steps.BoundSteps`)."""
    try:
        name, args = next(steps)
        while True:
            name, args = steps.send(getattr(bound, name)(*args))
    except StopIteration as done:
        result: T = done.value
        return result


async def run_async(bound: Any, steps: Steps[T]) -> T:
    """Drive an operation with a board's steps bound to an asyncio backend (the same
    logic, awaited)."""
    try:
        name, args = next(steps)
        while True:
            name, args = steps.send(await getattr(bound, name)(*args))
    except StopIteration as done:
        result: T = done.value
        return result


def to_ms(at: Instant) -> int:
    """An instant (aware datetime or Unix seconds) as whole Unix milliseconds (floored)."""
    return micros(to_utc(at, WindowError) - UNIX_EPOCH) // 1000


def _ceil_ms(when: datetime) -> int:
    return -(-micros(when - UNIX_EPOCH) // 1000)


def from_ms(ms: int) -> datetime:
    """Unix milliseconds as an aware UTC datetime (exact)."""
    return UNIX_EPOCH + timedelta(milliseconds=ms)


def member_bytes(member: Member) -> bytes:
    """A member id as key bytes: ``str`` as UTF-8, ``bytes`` as is."""
    if isinstance(member, str):
        return member.encode("utf-8")
    if isinstance(member, bytes):
        return member
    raise TypeError(f"a member is str or bytes, not {type(member).__name__}")


def _json_object(value: Mapping[str, Any] | None, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise MemberDataError(f"{what} must be a dict with str keys, not {value!r}")
    return dict(value)


def member_record(member: Member, blob: bytes | None) -> MemberData | None:
    """A member's stored data blob (``{"name": ..., "meta": {...}}``) as
    :class:`MemberData`, with read-only metadata of its own; None without a blob."""
    if blob is None:
        return None
    record = json.loads(blob)
    return MemberData(member, record["name"], MappingProxyType(record["meta"]))


def _dumps(value: object, what: str) -> bytes:
    try:
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode()
    except (TypeError, ValueError) as error:
        raise MemberDataError(f"{what} is not JSON serialisable: {error}") from None


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


class PlanCore:
    """The state and helpers every operation of a board uses (no I/O)."""

    def __init__(
        self,
        config: BoardConfig,
        backend_now_ms: Callable[[], int],
        *,
        clock: Callable[[], int] | None = None,
        on_trimmed_lookup: TrimmedLookup | None = None,
        bytes_members: bool = False,
        cross_slot: bool = True,
    ) -> None:
        self.config = config
        self.keys = config.keys
        self.lex = config.lex
        self.secondary = config.secondary
        # A lexicographic board stores every entry at score 0: its order is ascending bytes.
        self.high_first = config.higher_is_better and self.lex is None
        self.style = config.rank_style
        self.layout = config.layout
        self.composite = config.composite
        self.trim_to = config.trim_to
        self.windows = config.windows
        self.backend_now_ms = backend_now_ms
        self.clock = clock
        self.on_trimmed_lookup = on_trimmed_lookup
        self.bytes_members = bytes_members
        self.cross_slot = cross_slot
        self.deadline_ms: int | None = None
        self.direction = Direction.DESC if self.high_first else Direction.ASC
        self.retention_ms = -(-micros(self.windows.retention) // 1000)
        self.registry_key = self.keys.prefix + b":windows"
        self.friended_key = self.keys.prefix + b":friended"
        self._targets: dict[str, Target] = {}
        self._registered: set[str] = set()
        self._slots: tuple[int, int, list[_WindowSlot]] | None = None
        self._write_cache: WriteWindows | None = None
        kinds = self.windows.kinds
        self._all_time_first = bool(kinds) and kinds[0] is WindowKind.ALL_TIME
        self._defaults: dict[WindowKind, tuple[int, int, str]] = {}
        self._time_mask = 0 if self.layout is None else (1 << self.layout.time_bits) - 1

    # -- time and windows --------------------------------------------------------

    def now_ms(self) -> int:
        """The board's 'now': its clock if it has one, else the backend's."""
        return self.clock() if self.clock is not None else self.backend_now_ms()

    def target(self, window_id: str) -> Target:
        """The (TTL-less) target of a window id; built once."""
        target = self._targets.get(window_id)
        if target is None:
            keys = self.keys
            target = Target(
                keys.window(window_id),
                keys.dense(window_id),
                keys.dense_counts(window_id),
                None,
                keys.ties(window_id) if self.secondary else None,
            )
            self._targets[window_id] = target
        return target

    def _slots_at(self, instant_ms: int) -> list[_WindowSlot]:
        cached = self._slots
        if cached is not None and cached[0] <= instant_ms < cached[1]:
            return cached[2]
        when = from_ms(instant_ms)
        found = self.windows.windows_at(when)
        low, high = -(1 << 62), 1 << 62
        slots = []
        for window in found:
            end_ms = None
            if window.start is not None and window.end is not None:
                end_ms = _ceil_ms(window.end)
                low, high = max(low, _ceil_ms(window.start)), min(high, end_ms)
            slots.append(_WindowSlot(window.id, self.target(window.id), end_ms))
        for season in self.windows.seasons:  # a season opening or closing ends the cache
            if season.start > when:
                high = min(high, _ceil_ms(season.start))
            elif season.end <= when:
                low = max(low, _ceil_ms(season.end))
        self._slots = (low, high, slots)
        return slots

    def _default_id(self, now_ms: int) -> str:
        kinds = self.windows.kinds
        if not kinds:
            now = from_ms(now_ms)
            seasons = self.windows.seasons
            current = [s for s in seasons if s.start <= now < s.end]
            return (current[0] if current else seasons[0]).window.id
        return self._kind_id(kinds[0], now_ms)

    def _kind_id(self, kind: WindowKind, now_ms: int) -> str:
        if kind is WindowKind.ALL_TIME:
            return "all"
        cached = self._defaults.get(kind)
        if cached is not None and cached[0] <= now_ms < cached[1]:
            return cached[2]
        window = self.windows.window(kind, from_ms(now_ms))
        assert window.start is not None and window.end is not None
        self._defaults[kind] = (_ceil_ms(window.start), _ceil_ms(window.end), window.id)
        return window.id

    def window_id(self, window: str | Window | None, now_ms: int | None = None) -> str:
        """Resolve a read's ``window`` argument to a window id of this board.

        ``None``: the current window of the board's first kind. ``"daily"``, ``"weekly"``,
        ``"monthly"``, ``"all"``: that kind's current window. ``"season:<name>"`` or
        ``"s:<name>"``: a season. Anything else is a window id (``"d2026-11-21"``...).
        A window the board does not keep raises :class:`WindowError`.
        """
        now = self.now_ms() if now_ms is None else now_ms
        if window is None:
            return self._default_id(now)
        if isinstance(window, Window):
            window = window.id
        if not isinstance(window, str):
            raise WindowError(f"a window is a str or Window, not {type(window).__name__}")
        if window in _KIND_NAMES:
            kind = WindowKind(window)
            if kind not in self.windows.kinds:
                raise WindowError(f"board {self.config.name!r} keeps no {window} window")
            return self._kind_id(kind, now)
        if window.startswith(_SEASON_ALIAS):
            return self.windows.season(window[len(_SEASON_ALIAS) :]).id
        resolved = self.windows.window_for_id(window)
        if resolved.kind is not WindowKind.SEASON and resolved.kind not in self.windows.kinds:
            raise WindowError(f"board {self.config.name!r} keeps no {resolved.kind} windows")
        return resolved.id

    def read_target(self, window: str | Window | None) -> tuple[str, Target]:
        """The window id and target a read uses."""
        if window is None and self._all_time_first:
            return "all", self.target("all")  # the default needs no clock read
        window_id = self.window_id(window)
        return window_id, self.target(window_id)

    def season_end_ms(self, season: str | Season) -> int:
        """The end of one of the board's seasons, in Unix ms."""
        if isinstance(season, Season):
            season = season.name
        end = self.windows.season(season).end
        assert end is not None
        return _ceil_ms(end)

    # -- values ----------------------------------------------------------------------

    def member_out(self, member: bytes) -> Member:
        """A stored member as returned to callers: str when it is UTF-8 (unless
        ``bytes_members``), else bytes."""
        if self.bytes_members:
            return member
        try:
            return member.decode("utf-8")
        except UnicodeDecodeError:
            return member

    def score_out(self, raw: float) -> float:
        """A stored score as returned: the plain score (decoded on time tie-break boards)."""
        if self.layout is None:
            return raw
        return self.layout.decode(raw).score

    def decode(self, raw: float) -> ScoreAt:
        """A stored composite value as (score, achieved-at); only on time tie-break boards."""
        if self.layout is None:
            raise BoardConfigError(f"board {self.config.name!r} has no time tie-break to decode")
        return self.layout.decode(raw)

    def entry(self, row: Row) -> Entry:
        """A backend row as an :class:`Entry` (a lexicographic board decodes the member:
        its score is the layout's first field)."""
        if self.lex is not None:
            decoded = self.lex.decode(row[0])
            return Entry(self.member_out(decoded.member), decoded.fields[0], row[2])
        return Entry(self.member_out(row[0]), self.score_out(row[1]), row[2])

    def entries(self, rows: Iterable[Row]) -> list[Entry]:
        """:meth:`entry` of every row (plain scores: one loop, no call per row)."""
        if self.lex is not None or self.layout is not None:
            return [self.entry(row) for row in rows]
        found: list[Entry] = []
        append = found.append
        if self.bytes_members:
            for member, score, rank in rows:
                append(_new(Entry, (member, score, rank, None)))
            return found
        for member, score, rank in rows:
            try:
                name: Member = member.decode("utf-8")
            except UnicodeDecodeError:
                name = member
            append(_new(Entry, (name, score, rank, None)))
        return found

    def with_data(self, entries: Sequence[Entry], wanted: bool) -> Steps[tuple[Entry, ...]]:
        """``entries`` with their member data when ``wanted``: one HMGET of the data hash
        for the whole list (never one call per entry); else as they are, no call."""
        if not wanted or not entries:
            return tuple(entries)
        blobs: list[bytes | None] = yield (
            "hash_get",
            (self.keys.data, [member_bytes(entry.member) for entry in entries]),
        )
        return tuple(
            entry._replace(data=member_record(entry.member, blob))
            for entry, blob in zip(entries, blobs, strict=True)
        )

    def style_of(self, style: RankStyle | str | None) -> RankStyle:
        """The rank style of a read: the given one, or the board's default."""
        resolved = self.style if style is None else RankStyle.parse(style)
        if self.lex is not None and resolved is RankStyle.DENSE:
            raise BoardConfigError(
                f"dense rank is not available on lexicographic board {self.config.name!r}: "
                "it would count the distinct field prefixes above a member (a scan); use "
                "style='unique' or 'competition'"
            )
        return resolved

    def check_size(self, size: int, what: str = "size") -> int:
        """A page size in ``[1, max_page_size]``, else :class:`PageSizeError`."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise PageSizeError(f"{what} must be an int >= 1, not {size!r}")
        if size > self.config.max_page_size:
            raise PageSizeError(
                f"{what} {size} exceeds the board's max_page_size "
                f"({self.config.max_page_size}); page through with cursors"
            )
        return size

    @staticmethod
    def check_offset(offset: int) -> int:
        """An offset >= 0, else :class:`PageSizeError`."""
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise PageSizeError(f"offset must be an int >= 0, not {offset!r}")
        return offset

    def _value(self, value: float, operator: Operator) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidScoreError(f"a score is an int or float, not {type(value).__name__}")
        layout = self.layout
        if layout is None:
            if isinstance(value, int):
                return exact_score(value)  # an int a float64 would round is refused
            if not math.isfinite(value):
                raise InvalidScoreError(f"score {value!r} is not a finite number")
            return float(value)
        if not isinstance(value, int):
            raise OutOfRangeError(f"a time tie-break board takes int scores, not {value!r}")
        if operator in ("set", "best") and not layout.score_min <= value <= layout.score_max:
            raise OutOfRangeError(
                f"score {value} is outside [{layout.score_min}, {layout.score_max}], "
                f"the range of the board's {layout.score_bits} score bits"
            )
        if abs(value) > 1 << 53:
            raise OutOfRangeError(f"score {value} is not exact in a float64")
        return float(value)

    def _check_time(self, instant_ms: int) -> None:
        composite = self.composite
        if composite is None:
            return
        offset = (instant_ms - composite.epoch_ms) // composite.unit_ms
        if not 0 <= offset < 1 << composite.time_bits:
            assert self.layout is not None
            raise OutOfRangeError(
                f"time {from_ms(instant_ms).isoformat()} is outside the time tie-break's "
                f"budget [{self.layout.epoch.isoformat()}, {self.layout.time_end.isoformat()})"
            )

    def ties_key(self, window_id: str) -> bytes:
        """The window's ties hash: tie-break values (secondary) or member -> encoded member
        (lexicographic boards)."""
        return self.keys.ties(window_id)

    def unsupported(self, what: str, needs: str) -> BoardConfigError:
        """The error of an operation this board's tie-break cannot answer yet."""
        return BoardConfigError(
            f"{what} is not available on board {self.config.name!r} with tie_break="
            f"{self.config.tie_break!r}: it needs {needs}, which the backend contract lacks"
        )
