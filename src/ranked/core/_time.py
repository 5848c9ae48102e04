"""Instants: aware datetimes or Unix seconds, normalised to UTC datetimes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Final

__all__ = ["UNIX_EPOCH", "Instant", "micros", "to_utc"]

Instant = datetime | float | int
"""An instant: an aware ``datetime``, or Unix time in seconds (``float`` or ``int``)."""

UNIX_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def to_utc(at: Instant, error: type[ValueError]) -> datetime:
    """``at`` as an aware UTC ``datetime``; raises ``error`` if naive or not finite.

    Unix seconds are converted exactly (through :class:`fractions.Fraction`) and then
    truncated towards the past to whole microseconds, the resolution of ``datetime``.
    """
    if isinstance(at, datetime):
        if at.tzinfo is None or at.utcoffset() is None:
            raise error(f"naive datetime {at.isoformat()}: give a timezone (e.g. tzinfo=UTC)")
        return at.astimezone(UTC)
    if isinstance(at, bool) or not isinstance(at, int | float):
        raise error(f"an instant must be a datetime or Unix seconds, not {type(at).__name__}")
    if isinstance(at, float) and (at != at or at in (float("inf"), float("-inf"))):
        raise error(f"Unix time {at!r} is not a finite number")
    whole_micros = (Fraction(at) * 1_000_000).__floor__()
    try:
        return UNIX_EPOCH + timedelta(microseconds=whole_micros)
    except OverflowError as overflow:
        raise error(f"Unix time {at!r} is outside the datetime range") from overflow


def micros(delta: timedelta) -> int:
    """``delta`` as an exact whole number of microseconds."""
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
