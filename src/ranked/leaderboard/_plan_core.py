"""The core of a board's sans-I/O logic: configuration, keys, values, time, drivers.

Every board operation is a generator that yields steps as ``(step name, args)`` and
receives each step's answer; it returns the typed result. :func:`run_sync` drives it with
the board's steps bound to a :class:`~ranked.backends.base.Backend`, :func:`run_async` to
an :class:`~ranked.backends.base.AsyncBackend` (see :mod:`._steps`), so the sync and async
boards share every line of logic. :class:`PlanCore` holds what every operation needs; the
operations live in one object per concept, each holding the core (see
:class:`~ranked.leaderboard._plan.BoardPlan`).

Nothing here touches the network or the engine; time comes from two callables (the
backend's ``now_ms`` and the board's optional clock), both local reads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Generator, Iterable, Sequence
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any, TypeVar

from ..core._time import UNIX_EPOCH, Instant, micros, to_utc
from ..core.cursors import Direction
from ..core.models import Entry, Member, MemberData
from ..core.ranks import RankStyle
from ..core.scores import ScoreAt
from ..errors import (
    BoardConfigError,
    InvalidScoreError,
    OutOfRangeError,
    PageSizeError,
    WindowError,
)
from ._requests import Operator, Row, exact_score
from .config import BoardConfig

__all__ = [
    "Call",
    "PlanCore",
    "Steps",
    "TrimmedLookup",
    "ceil_ms",
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


def ceil_ms(when: datetime) -> int:
    """An aware datetime as Unix milliseconds, rounded up."""
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


def member_record(member: Member, blob: bytes | None) -> MemberData | None:
    """A member's stored data blob (``{"name": ..., "meta": {...}}``) as
    :class:`MemberData`, with read-only metadata of its own; None without a blob."""
    if blob is None:
        return None
    record = json.loads(blob)
    return MemberData(member, record["name"], MappingProxyType(record["meta"]))


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
        self.backend_now_ms = backend_now_ms
        self.clock = clock
        self.on_trimmed_lookup = on_trimmed_lookup
        self.bytes_members = bytes_members
        self.cross_slot = cross_slot
        self.deadline_ms: int | None = None
        """The board's deadline (Unix ms) once :meth:`~._plan_life.Life.expire_at` set
        one: later writes expire with it."""
        self.direction = Direction.DESC if self.high_first else Direction.ASC
        self.registry_key = self.keys.prefix + b":windows"
        self.friended_key = self.keys.prefix + b":friended"
        self.time_mask = 0 if self.layout is None else (1 << self.layout.time_bits) - 1

    # -- time ------------------------------------------------------------------------

    def now_ms(self) -> int:
        """The board's 'now': its clock if it has one, else the backend's."""
        return self.clock() if self.clock is not None else self.backend_now_ms()

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

    def value(self, value: float, operator: Operator) -> float:
        """A submitted score as stored, checked for this board (plain: a finite float or an
        exact int; time tie-break: an int within the layout's score bits)."""
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

    def check_time(self, instant_ms: int) -> None:
        """Refuse an instant outside the time tie-break's budget (no-op without one)."""
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
