"""Every typed error ranked raises, in one hierarchy (all exported from :mod:`ranked`).

Every error ranked raises on purpose derives from :class:`RankedError`, so callers
can catch the whole family at once; each also derives from the builtin that
fits it (``ValueError`` for bad values, ``TypeError`` for wrong types) so generic
handlers keep working. A call refused with one of these changes nothing.
"""

from __future__ import annotations

__all__ = [
    "BackendUnavailableError",
    "BoardConfigError",
    "CrossSlotError",
    "GuardArgumentError",
    "GuardConfigError",
    "InvalidCursorError",
    "InvalidEventError",
    "InvalidItemError",
    "InvalidNameError",
    "InvalidPriorityError",
    "InvalidScoreError",
    "JournalConfigError",
    "JournalError",
    "JournalVersionError",
    "KeyArgumentError",
    "KeyNotFoundError",
    "KeyStoreError",
    "LayoutError",
    "MemberDataError",
    "NotifyConfigError",
    "OutOfRangeError",
    "PageSizeError",
    "PendingNotFoundError",
    "QueueArgumentError",
    "RankedError",
    "RateLimitConfigError",
    "RateLimitTypeError",
    "ResponseError",
    "ServiceConfigError",
    "SnapshotError",
    "SnapshotFileError",
    "UnknownRankStyleError",
    "UnsupportedOperationError",
    "UnsupportedURLError",
    "WindowError",
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


# -- bad values: each is also a ValueError, raised before anything changes ------------------


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
    """A value does not fit where it goes: never rounded, clamped or wrapped silently.

    Raised for a score outside its bit budget or beyond what a float64 holds exactly, a
    duration or instant outside :data:`ranked.core.limits` (the range every backend holds
    exactly), a time before an epoch or past the last representable unit, and a stored
    value that no encoding could produce. The message names the limit.
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


class PageSizeError(RankedError, ValueError):
    """A page size, count or offset is not a positive int, or exceeds the board's
    ``max_page_size`` (reads are always bounded)."""


class BoardConfigError(RankedError, ValueError):
    """A board is configured with values that cannot work together, for example a time
    tie-break whose direction disagrees with the board's, or a negative ``keep``."""


class MemberDataError(RankedError, ValueError):
    """Member data or board metadata is not a JSON object (a dict with str keys and
    JSON-serialisable values), or a display name is not a str."""


class InvalidPriorityError(RankedError, ValueError):
    """A queue priority is not a finite number (NaN, infinity, a bool, a string), or an
    integer too large to be stored exactly in a float64 (beyond +-2**53)."""


class QueueArgumentError(RankedError, ValueError):
    """A queue count, delay, lease, timeout, shard count or attempt limit is out of range."""


class RateLimitConfigError(RankedError, ValueError):
    """A rate-limit policy or a hit asks for something impossible (a cost above the limit,
    a window that is not positive, an unknown algorithm)."""


class UnsupportedURLError(RankedError, ValueError):
    """A backend URL whose scheme ranked does not know, or that is not a URL at all."""


class UnsupportedOperationError(RankedError):
    """A backend has no form of this step (dumping keys for a snapshot is for
    ``memory://``: a Redis server persists its own keys)."""


class CrossSlotError(RankedError, ValueError):
    """One call names keys of several Redis Cluster hash slots, which a cluster cannot run
    as one command or script. Keys of one board share a hash tag and never do this."""


# -- wrong types: each is also a TypeError ----------------------------------------------------


class InvalidItemError(RankedError, TypeError):
    """A queue item is neither ``bytes`` nor ``str`` (items are opaque payloads)."""


class RateLimitTypeError(RankedError, TypeError):
    """A hit's argument has the wrong type (a cost that is not an int, an identity that is
    neither str nor bytes)."""


# -- the journal ----------------------------------------------------------------------------


class InvalidEventError(RankedError, ValueError):
    """A journal event has a field of the wrong type or value (an empty board, an unknown
    operation, a ``value`` that is not bytes, ...). Raised before anything is appended:
    an append with one bad event appends none of its events."""


class JournalError(RankedError):
    """A journal file cannot be used: it is not a SQLite database, it is corrupt or
    truncated, or a row in it does not parse. Nothing is repaired or guessed silently."""


class JournalVersionError(JournalError):
    """A journal file was written with a schema version this ranked does not know (the
    message names the file's version and the newest one this ranked reads)."""


class SnapshotFileError(JournalError):
    """A snapshot file cannot be written or removed, or the snapshot directory cannot be
    created or listed (the ``OSError`` is the cause). A damaged snapshot file is not an
    error: loading skips it with a warning and takes an older one."""


class JournalConfigError(RankedError, ValueError):
    """A journal is opened with options that cannot work: an unknown durability mode, a
    batch delay that is not a positive whole number of milliseconds, a URL without a path."""


class NotifyConfigError(RankedError, ValueError):
    """A notification policy (``ranked.notify``) that cannot work: an interval that is not
    a positive duration, a threshold below 1, an unknown kind of change, a time limit
    before the end on a window that never ends."""


class ServiceConfigError(RankedError, ValueError):
    """A service setting (flag, ``RANKED_*`` variable or TOML file) has a value the service
    cannot use; the message names it."""


# -- the service's API keys -----------------------------------------------------------------


class KeyArgumentError(RankedError, ValueError):
    """An API key's scope is not ``admin``, ``write`` or ``read``, its name is not a
    non-empty str of printable characters (at most 200), a key id is not 12 lowercase hex
    digits, or a key store's refresh interval is negative. Raised before anything is
    written."""


class KeyNotFoundError(RankedError, LookupError):
    """No API key has this id (revoking an unknown key)."""


class KeyStoreError(RankedError):
    """The API key file cannot be used: its directory cannot be created, it is not a SQLite
    database or not a ranked key store, it has a schema version this ranked does not know,
    a row in it does not parse, or the store is closed. Nothing is repaired silently."""


class GuardConfigError(RankedError, ValueError):
    """A write guard is configured with values that cannot work: a bound below its
    minimum, a secret that is not bytes, a rate limit that is not a policy, a pending tier
    below 1, a webhook URL that is not http(s). Raised when the configuration is made."""


class GuardArgumentError(RankedError, ValueError):
    """A guarded submission's argument has the wrong type or form (a nonce that is not a
    short printable str, a client time that is not a number, a signature that is not
    hex). Raised before any check runs: nothing is recorded."""


class PendingNotFoundError(RankedError, LookupError):
    """No pending submission has this id on the board (never held, or already promoted
    or rejected)."""
