"""Typed errors of the pure core: names, score encodings, rank styles, windows, cursors.

Each derives from :class:`ranked.errors.RankedError` (catch the whole family at once)
and from ``ValueError``: every one of them reports a bad value, and is raised before
anything changes.
"""

from __future__ import annotations

from ..errors import RankedError

__all__ = [
    "InvalidCursorError",
    "InvalidNameError",
    "LayoutError",
    "OutOfRangeError",
    "UnknownRankStyleError",
    "WindowError",
]


class InvalidNameError(RankedError, ValueError):
    """A board, namespace or season name is empty, too long, or has a forbidden character.

    Forbidden are ``{`` and ``}`` (they would move the Redis Cluster hash tag) and
    control characters.
    """


class LayoutError(RankedError, ValueError):
    """A composite-score or lexicographic layout cannot work as configured.

    For example, score bits plus time bits wider than the 53 bits a float64 holds
    exactly, or a time unit that is not a positive whole number of microseconds.
    """


class OutOfRangeError(RankedError, ValueError):
    """A value does not fit its encoding: never rounded, clamped or wrapped silently.

    Raised for a score outside its bit budget, a time before the epoch or past the
    last representable unit, and for a stored value that no encoding could produce.
    """


class UnknownRankStyleError(RankedError, ValueError):
    """A rank style name is not one of ``unique``, ``competition`` or ``dense``."""


class WindowError(RankedError, ValueError):
    """A time-window configuration or instant is invalid.

    For example, a naive ``datetime``, a season that ends before it starts, an
    unknown window kind, or a window id that does not parse.
    """


class InvalidCursorError(RankedError, ValueError):
    """A page cursor is malformed, corrupted, of an unknown version, or for another board."""
