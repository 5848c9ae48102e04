"""The durable journal: an append-only event store, the source of truth boards are
rebuilt from (see docs/durability.md). This first piece is the store itself; wiring it into
the boards' write path comes next. :class:`SnapshotStore` keeps crash-safe snapshot files
of boards (the payload is the caller's), restored with the journal's tail.

:func:`open_journal` opens a journal by URL (``sqlite:///path/to/file.db``);
:class:`NewEvent` is what callers append, :class:`Event` what the store hands back.
"""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

from ..errors import JournalConfigError, UnsupportedURLError
from .events import MAX_AT_US, OPERATIONS, Event, NewEvent
from .snapshots import SnapshotStore
from .sqlite import SCHEMA_VERSION, SQLiteJournal
from .store import Durability, JournalStore

__all__ = [
    "MAX_AT_US",
    "OPERATIONS",
    "SCHEMA_VERSION",
    "Durability",
    "Event",
    "JournalStore",
    "NewEvent",
    "SQLiteJournal",
    "SnapshotStore",
    "open_journal",
]


def open_journal(url: str) -> SQLiteJournal:
    """The journal at ``url``: ``sqlite:///path/to/file.db`` (an absolute path; the file is
    created with the schema if it does not exist). Options go in the query string:
    ``?durability=always|batch|none`` and ``&max_delay_ms=N`` (batch mode, default 10).

    Another scheme raises :class:`~ranked.errors.UnsupportedURLError`; a bad option
    :class:`~ranked.errors.JournalConfigError`.
    """
    if not isinstance(url, str):
        raise UnsupportedURLError(f"a journal URL must be a str, not {type(url).__name__}")
    parts = urlsplit(url)
    if parts.scheme != "sqlite":
        raise UnsupportedURLError(
            f"journal URL {url!r}: scheme {parts.scheme!r} is not supported (use sqlite:///path)"
        )
    if parts.netloc:
        raise JournalConfigError(f"journal URL {url!r}: use sqlite:///path (no host)")
    path = unquote(parts.path)
    if path in ("", "/"):
        raise JournalConfigError(f"journal URL {url!r} names no file")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = set(query) - {"durability", "max_delay_ms"}
    if unknown:
        raise JournalConfigError(f"journal URL {url!r}: unknown options {sorted(unknown)}")
    durability = query.get("durability", ["always"])[-1]
    delay = query.get("max_delay_ms", ["10"])[-1]
    if not delay.isdigit():
        raise JournalConfigError(f"journal URL {url!r}: max_delay_ms must be an int")
    return SQLiteJournal(path, durability=durability, max_delay_ms=int(delay))  # type: ignore[arg-type]
