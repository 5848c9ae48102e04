"""The one range of durations and instants that every backend holds exactly.

Lua numbers on Redis are float64 and the scripts count time in whole microseconds, so an
instant, a duration, and their sum must stay below 2**53 us (about 285 years after 1970)
to be exact; past that a deadline wraps or rounds and a far-future item is ready at once.
The memory backend would hold more, but one range for every backend keeps the answers
the same everywhere. Every duration (a window, a delay, a lease, a timeout, a TTL) and every
instant (an ``at``, a clock reading) is checked against these bounds where it enters the
API, and a value outside raises :class:`~ranked.errors.OutOfRangeError` naming the limit.

- Durations: ``0 <= d <= MAX_DURATION_S`` (100 years of 365.25 days).
- Instants: ``0 <= t <= MAX_INSTANT_S`` (Unix seconds; 2140-01-01T00:00:00Z).

The largest sum, ``MAX_INSTANT_S + MAX_DURATION_S``, is 8,520,422,400 s, that is
8.52e15 us, under 2**53 (9.007e15 us); the module checks this at import.
"""

from __future__ import annotations

import math
from typing import Final

from ..errors import OutOfRangeError

__all__ = [
    "MAX_DURATION_S",
    "MAX_INSTANT_S",
    "MAX_INSTANT_US",
    "MAX_SUM_US",
    "check_duration",
    "check_instant",
    "check_instant_us",
]

MAX_DURATION_S: Final = 3_155_760_000
"""The longest duration, in seconds: 100 years of 365.25 days."""

MAX_INSTANT_S: Final = 5_364_662_400
"""The latest instant, in Unix seconds: 2140-01-01T00:00:00Z."""

MAX_INSTANT_US: Final = MAX_INSTANT_S * 1_000_000
"""The latest instant, in Unix microseconds."""

MAX_SUM_US: Final = 2**53
"""Every instant plus every duration, in microseconds, stays below this (exact in a double)."""

if (MAX_INSTANT_S + MAX_DURATION_S) * 1_000_000 >= MAX_SUM_US:  # pragma: no cover
    raise AssertionError("the duration and instant bounds must sum below 2**53 us")


def _check(value: object, name: str, kind: str, high: int, span: str) -> float:
    """``value`` as a float when it is a number in ``[0, high]`` (integers compared
    exactly), else ``OutOfRangeError`` naming ``name`` and the limit."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OutOfRangeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise OutOfRangeError(f"{name} must be a finite {kind}, not {value!r}")
    if not 0 <= value <= high:
        raise OutOfRangeError(f"{name} {value!r} is outside [0, {high}] {span}")
    return float(value)


_DURATION: Final = ("duration", MAX_DURATION_S, "s (100 years: the longest every backend holds)")
_INSTANT: Final = (
    "instant",
    MAX_INSTANT_S,
    "Unix seconds (1970 to 2140: what every backend holds)",
)


def check_duration(value: object, name: str) -> float:
    """``value`` (seconds) if ``0 <= value <= MAX_DURATION_S``, else ``OutOfRangeError``."""
    return _check(value, name, *_DURATION)


def check_instant(value: object, name: str) -> float:
    """``value`` (Unix seconds) if ``0 <= value <= MAX_INSTANT_S``, else ``OutOfRangeError``."""
    return _check(value, name, *_INSTANT)


def check_instant_us(value: object, name: str) -> int:
    """``value``, an int of Unix microseconds in ``[0, MAX_INSTANT_US]``, else
    ``OutOfRangeError`` naming ``name`` and the limit."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise OutOfRangeError(f"{name} must be an int of Unix microseconds, not {value!r}")
    if not 0 <= value <= MAX_INSTANT_US:
        raise OutOfRangeError(
            f"{name} {value!r} is outside [0, {MAX_INSTANT_US}] us (1970 to 2140: the "
            "instants every backend holds)"
        )
    return value
