"""The durable journal: an append-only event store, the source of truth boards are
rebuilt from (see docs/durability.md). This first piece is the store itself; wiring it into
the boards' write path comes next. :class:`SnapshotStore` keeps crash-safe snapshot files
of boards (the payload is the caller's), restored with the journal's tail.

:func:`open_journal` opens a journal by URL (``sqlite:///path/to/file.db``, or
``postgresql://user@host/db`` for several processes sharing one journal);
:class:`NewEvent` is what callers append, :class:`Event` what the store hands back.
``append(events, then=...)`` applies what is durable on the committer thread, in seq
order; :class:`ranked.journal.aio.AsyncAppender` is the asyncio front.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote, urlencode, urlsplit, urlunsplit

from ..errors import JournalConfigError, UnsupportedURLError
from .events import MAX_AT_US, Event, NewEvent
from .snapshots import SnapshotStore
from .sqlite import SCHEMA_VERSION, SQLiteJournal
from .store import Durability, JournalStore

if TYPE_CHECKING:
    from .postgres import PostgresJournal

__all__ = [
    "MAX_AT_US",
    "SCHEMA_VERSION",
    "Durability",
    "Event",
    "JournalStore",
    "NewEvent",
    "PostgresJournal",
    "SQLiteJournal",
    "SnapshotStore",
    "open_journal",
]


_OPTIONS = ("durability", "max_delay_ms")


def __getattr__(name: str) -> object:
    # PostgresJournal is imported on first use: it needs psycopg, sqlite:// users do not
    if name == "PostgresJournal":
        from .postgres import PostgresJournal

        return PostgresJournal
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _options(url: str, query: dict[str, list[str]], allowed: bool) -> tuple[str, int]:
    """The durability and max_delay_ms of ``query`` (checked later by the store)."""
    unknown = set(query) - set(_OPTIONS)
    if unknown and not allowed:
        raise JournalConfigError(f"journal URL {url!r}: unknown options {sorted(unknown)}")
    durability = query.get("durability", ["always"])[-1]
    delay = query.get("max_delay_ms", ["10"])[-1]
    if not delay.isdigit():
        raise JournalConfigError(f"journal URL {url!r}: max_delay_ms must be an int")
    return durability, int(delay)


def _open_postgres(url: str) -> PostgresJournal:
    """``postgresql://`` or ``postgres://``: the journal's options are taken out of the
    query string, the rest (host, port, user, database, libpq parameters) goes to psycopg."""
    from .postgres import PostgresJournal

    parts = urlsplit(url)
    query = parse_qs(parts.query, keep_blank_values=True)
    durability, delay = _options(url, query, allowed=True)
    rest = urlencode([(k, v) for k, vs in query.items() if k not in _OPTIONS for v in vs])
    conninfo = urlunsplit(("postgresql", parts.netloc, parts.path, rest, parts.fragment))
    return PostgresJournal(conninfo, durability=durability, max_delay_ms=delay)  # type: ignore[arg-type]


def open_journal(url: str) -> SQLiteJournal | PostgresJournal:
    """The journal at ``url``: ``sqlite:///path/to/file.db`` (an absolute path; the file is
    created with the schema if it does not exist), or ``postgresql://user@host:port/db``
    (also ``postgres://``; the schema is created in an empty database; libpq parameters
    such as ``?host=/run/postgresql`` pass through; needs psycopg 3). Options go in the
    query string: ``?durability=always|batch|none`` and ``&max_delay_ms=N`` (batch mode,
    default 10).

    Another scheme raises :class:`~ranked.errors.UnsupportedURLError`; a bad option
    :class:`~ranked.errors.JournalConfigError`.
    """
    if not isinstance(url, str):
        raise UnsupportedURLError(f"a journal URL must be a str, not {type(url).__name__}")
    parts = urlsplit(url)
    if parts.scheme in ("postgresql", "postgres"):
        return _open_postgres(url)
    if parts.scheme != "sqlite":
        raise UnsupportedURLError(
            f"journal URL {url!r}: scheme {parts.scheme!r} is not supported"
            " (use sqlite:///path or postgresql://host/db)"
        )
    if parts.netloc:
        raise JournalConfigError(f"journal URL {url!r}: use sqlite:///path (no host)")
    path = unquote(parts.path)
    if path in ("", "/"):
        raise JournalConfigError(f"journal URL {url!r} names no file")
    query = parse_qs(parts.query, keep_blank_values=True)
    durability, delay = _options(url, query, allowed=False)
    return SQLiteJournal(path, durability=durability, max_delay_ms=delay)  # type: ignore[arg-type]
