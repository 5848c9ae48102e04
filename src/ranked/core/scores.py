"""Composite scores: (score, achieved-at time) packed into one exactly representable float64.

A sorted set holds one float64 per member. To rank equal scores by who got there
first, :class:`TimeTiebreak` packs the score into the high bits and a *reversed*
time offset into the low bits::

    packed = score * 2**time_bits + (2**time_bits - 1 - offset)
    offset = floor((at - epoch) / unit)

so a higher score always wins and, among equal scores, the earlier time wins (on a
board read highest first). With ``lower_is_better=True`` the time is not reversed
and the board is read lowest first: a lower score wins and, among equal scores, the
earlier time still wins.

Budget: a float64 holds every integer of magnitude up to 2**53 exactly, so
``score_bits + time_bits <= 53``. Nothing is ever rounded, clamped or wrapped: a
score outside ``[score_min, score_max]`` or a time outside ``[epoch, time_end)``
raises :class:`~ranked.errors.OutOfRangeError`, and the time is an offset from
a configurable epoch, so there is no 2038 wrap.

With ``signed=True`` scores may be negative: ``[-2**score_bits, 2**score_bits - 1]``;
the packing above still orders correctly because the time field is always in
``[0, 2**time_bits)`` (floor division and modulo split it back).

Two presets reproduce the layouts of the seed articles inside this budget:
:func:`seed004_layout` and :func:`seed003_layout`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final, NamedTuple

from ..errors import LayoutError, OutOfRangeError
from ._time import UNIX_EPOCH, Instant, micros, to_utc

__all__ = [
    "EXACT_BITS",
    "ScoreAt",
    "TimeTiebreak",
    "seed003_layout",
    "seed004_layout",
]

EXACT_BITS: Final = 53
"""Every integer ``n`` with ``abs(n) <= 2**53`` is exact in a float64."""

_SECOND: Final = timedelta(seconds=1)


class ScoreAt(NamedTuple):
    """A decoded composite score: the score, and the start of the time unit it was achieved in."""

    score: int
    at: datetime


@dataclass(frozen=True, slots=True)
class TimeTiebreak:
    """Packs (integer score, time) into one float64; earlier times win ties.

    ``score_bits`` and ``time_bits`` are field widths (``score_bits + time_bits <=
    53``); ``epoch`` is an aware datetime (the first representable instant) and
    ``unit`` a positive whole number of microseconds (the time resolution). See
    the module docstring for the layout. O(1) everything.
    """

    score_bits: int
    time_bits: int
    epoch: datetime = UNIX_EPOCH
    unit: timedelta = _SECOND
    signed: bool = False
    lower_is_better: bool = False
    _unit_us: int = field(init=False, repr=False, compare=False)
    _epoch_utc: datetime = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("score_bits", "time_bits"):
            bits = getattr(self, name)
            if isinstance(bits, bool) or not isinstance(bits, int) or bits < 1:
                raise LayoutError(f"{name} must be a positive int, not {bits!r}")
        if self.score_bits + self.time_bits > EXACT_BITS:
            raise LayoutError(
                f"score_bits + time_bits = {self.score_bits} + {self.time_bits} = "
                f"{self.score_bits + self.time_bits} > {EXACT_BITS}: packed values would not be "
                f"exact in a float64 (with {self.time_bits} time bits the score gets at most "
                f"{EXACT_BITS - self.time_bits} bits)"
            )
        if not isinstance(self.epoch, datetime) or self.epoch.utcoffset() is None:
            raise LayoutError(f"epoch must be an aware datetime, not {self.epoch!r}")
        unit_us = micros(self.unit) if isinstance(self.unit, timedelta) else 0
        if unit_us <= 0:
            raise LayoutError(f"unit must be a positive timedelta, not {self.unit!r}")
        object.__setattr__(self, "_unit_us", unit_us)
        object.__setattr__(self, "_epoch_utc", self.epoch.astimezone(UTC))

    # -- ranges ------------------------------------------------------------------

    @property
    def score_min(self) -> int:
        """The lowest encodable score: ``0``, or ``-2**score_bits`` when signed."""
        return -(1 << self.score_bits) if self.signed else 0

    @property
    def score_max(self) -> int:
        """The highest encodable score: ``2**score_bits - 1``."""
        return (1 << self.score_bits) - 1

    @property
    def time_end(self) -> datetime:
        """The first instant past the budget: ``epoch + 2**time_bits * unit`` (exclusive).

        Raises :class:`OverflowError` if that is beyond ``datetime.max``.
        """
        return self._epoch_utc + timedelta(microseconds=self._unit_us << self.time_bits)

    def _time_span_us(self) -> int:
        return self._unit_us << self.time_bits

    # -- encode / decode -------------------------------------------------------------

    def offset(self, at: Instant) -> int:
        """Whole units from ``epoch`` to ``at`` (floored); outside the budget raises.

        Raises :class:`~ranked.errors.OutOfRangeError` for a time before the
        epoch or at/after :attr:`time_end`, or a naive datetime.
        """
        when = to_utc(at, OutOfRangeError)
        elapsed_us = micros(when - self._epoch_utc)
        if elapsed_us < 0:
            raise OutOfRangeError(f"time {when.isoformat()} is before the epoch {self.epoch}")
        if elapsed_us >= self._time_span_us():
            raise OutOfRangeError(
                f"time {when.isoformat()} is past the last representable unit: "
                f"{self.time_bits} time bits of {self.unit} from {self.epoch} end before it"
            )
        return elapsed_us // self._unit_us

    def pack(self, score: int, offset: int) -> int:
        """The packed integer for ``score`` and a time ``offset`` in units (both checked)."""
        if isinstance(score, bool) or not isinstance(score, int):
            raise OutOfRangeError(f"score must be an int, not {type(score).__name__}")
        if not self.score_min <= score <= self.score_max:
            raise OutOfRangeError(
                f"score {score} is outside [{self.score_min}, {self.score_max}], "
                f"the range of {self.score_bits} score bits"
                + ("" if self.signed else " (negative scores need signed=True)")
            )
        time_max = (1 << self.time_bits) - 1
        if not 0 <= offset <= time_max:
            raise OutOfRangeError(f"time offset {offset} is outside [0, {time_max}]")
        time_field = offset if self.lower_is_better else time_max - offset
        return (score << self.time_bits) + time_field

    def unpack(self, packed: int) -> tuple[int, int]:
        """Split a packed integer into (score, offset in units): the inverse of :meth:`pack`."""
        score, time_field = divmod(packed, 1 << self.time_bits)
        if not self.score_min <= score <= self.score_max:
            raise OutOfRangeError(f"packed value {packed} holds score {score}, outside the layout")
        time_max = (1 << self.time_bits) - 1
        return score, time_field if self.lower_is_better else time_max - time_field

    def encode(self, score: int, at: Instant) -> float:
        """The float64 sorted-set score for ``score`` achieved at ``at``; exact, never rounded.

        ``at`` is an aware datetime or Unix seconds; times within one ``unit`` tie.
        """
        return float(self.pack(score, self.offset(at)))

    def decode(self, value: float) -> ScoreAt:
        """The (score, time) a stored float64 encodes; time is the start of its unit.

        Raises :class:`~ranked.errors.OutOfRangeError` for a value that no
        :meth:`encode` call of this layout produces (not an integer, out of range).
        """
        if not math.isfinite(value) or value != math.floor(value):
            raise OutOfRangeError(f"{value!r} is not a packed composite score (not an integer)")
        score, offset = self.unpack(int(value))
        try:
            at = self._epoch_utc + timedelta(microseconds=offset * self._unit_us)
        except OverflowError:
            raise OutOfRangeError(f"{value!r} holds a time after year 9999") from None
        return ScoreAt(score, at)


def seed004_layout() -> TimeTiebreak:
    """Seed 004's layout inside the exact budget: ``(score << 32) | (0x7FFFFFFF - unix_seconds)``.

    For Unix seconds in ``[0, 2**31)`` this produces exactly the seed's integers. The
    seed's 32-bit low field holding ``0x7FFFFFFF - t`` is a 32-bit reversed field whose
    epoch is ``2**31`` seconds before 1970 (``2**32 - 1 - (t + 2**31) == 0x7FFFFFFF - t``).
    Differences from the seed: 32 time bits leave 21 score bits (scores up to
    2,097,151, not 2**32 - 1), and 2038-01-19T03:14:08Z is an error, not a wrap to 1970.
    """
    return TimeTiebreak(
        score_bits=EXACT_BITS - 32,
        time_bits=32,
        epoch=UNIX_EPOCH - timedelta(seconds=1 << 31),
        unit=_SECOND,
    )


def seed003_layout(ends_at: datetime, *, time_bits: int = 22) -> TimeTiebreak:
    """Seed 003's layout: ``(xp << 22) + remaining_seconds`` until the competition ends.

    ``remaining = ends_at - at`` is the reversed offset from ``epoch = ends_at - (2**22
    - 1) s``, so the budget covers the 2**22 - 1 seconds (about 48.5 days) before the
    end. For whole-second times this equals the seed's integers; a fractional time is
    floored to its second (the seed floors the *remaining* time instead). Differences
    from the seed: the score gets the remaining ``53 - time_bits`` bits (31, not the
    42 of a 64-bit integer), and a time one second or more after the end (or more than
    the budget before it) raises instead of being clamped to 0 remaining seconds.
    """
    return TimeTiebreak(
        score_bits=EXACT_BITS - time_bits,
        time_bits=time_bits,
        epoch=ends_at - _SECOND * ((1 << time_bits) - 1),
        unit=_SECOND,
    )
