"""Typed errors raised by ranked.

Every error ranked raises on purpose derives from :class:`RankedError`, so callers
can catch the whole family at once; each also derives from the builtin that
fits it (``ValueError`` for bad values) so generic handlers keep working.
"""

from __future__ import annotations

__all__ = [
    "BackendUnavailableError",
    "InvalidScoreError",
    "RankedError",
    "ResponseError",
    "SnapshotError",
]


class RankedError(Exception):
    """Base class of every error ranked raises on purpose."""


class InvalidScoreError(RankedError, ValueError):
    """A score is NaN, or an operation would produce a NaN score.

    Raised before anything changes: the set is left exactly as it was.
    """


class SnapshotError(RankedError, ValueError):
    """A snapshot is truncated, corrupt, or of an unknown format version."""


class ResponseError(RankedError):
    """An error reply of :meth:`ranked.Keyspace.execute`.

    ``str(error)`` is Redis's error text without the leading ``-``, for
    example ``ERR syntax error`` or
    ``WRONGTYPE Operation against a key holding the wrong kind of value``.
    """


class BackendUnavailableError(RankedError):
    """The backend's server cannot be reached (down, restarting, network). Retry later:
    the client reconnects by itself once the server is back."""
