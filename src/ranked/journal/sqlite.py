"""The journal on one SQLite file (standard library ``sqlite3``), in WAL mode.

File layout: ``<path>`` (the database), ``<path>-wal`` and ``<path>-shm`` (SQLite's
write-ahead log and its index, present while the journal is open). The schema is the
project's own, versioned in the ``schema_version`` table (version 1):
``events(seq INTEGER PRIMARY KEY, board, member, operation, value, at_us, key, actor,
reason)``, a UNIQUE index on ``(board, key)`` where ``key`` is not null (idempotency) and
an index on ``(board, seq)`` (reading one board).

Durability modes (what an acknowledged append can lose in a crash):

- ``always`` (default): ``synchronous=FULL``; :meth:`SQLiteJournal.append` returns once
  its transaction is committed and the WAL fsynced. Nothing acknowledged is lost, neither
  by a killed process nor by a power cut (given a disk that honours fsync).
- ``batch``: ``synchronous=FULL``, but appends are acknowledged as soon as they are written
  into the open transaction, which is committed (and fsynced) at least every
  ``max_delay_ms``. A crash loses at most the events acknowledged in the last
  ``max_delay_ms``; their seqs are then given again to later events. :meth:`flush` commits
  at once. Reads see committed events only.
- ``none``: ``synchronous=OFF``; each append is committed before it returns, without fsync.
  A killed process loses nothing (the OS holds the written pages); a power cut or kernel
  crash can lose what the OS had not yet written.

Group commit: one committer thread owns the writing connection; appenders queue their
events and wait. The committer takes everything queued and writes it in one transaction
(each append in its own savepoint, so one append failing fails only itself), commits, then
wakes the appenders: concurrent appends share one fsync. An append is atomic: all of its
events or none. Cost: O(k log n) for k events in a journal of n.

A damaged file is never read silently wrong: a file that is not a SQLite database, a
database file whose size is not a whole number of pages (a torn last page), or a row that
does not parse raises :class:`~ranked.errors.JournalError`. A torn tail of the ``-wal``
file is what SQLite's own recovery handles: the frames after the last complete commit are
ignored, and the journal opens at its last good state.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Final

from ..errors import (
    JournalConfigError,
    JournalError,
    JournalVersionError,
    OutOfRangeError,
    PageSizeError,
    RankedError,
)
from .events import Event, NewEvent, check_event, stored_fields
from .store import Durability

__all__ = ["MAX_DELAY_MS", "SCHEMA_VERSION", "SQLiteJournal"]

SCHEMA_VERSION: Final = 1
"""The journal schema version this ranked writes and reads."""

MAX_DELAY_MS: Final = 60_000
"""The longest ``batch`` commit delay, in milliseconds."""

_READ_PAGE: Final = 512

_SCHEMA: Final = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE events ("
    " seq INTEGER PRIMARY KEY,"
    " board TEXT NOT NULL,"
    " member BLOB,"
    " operation TEXT NOT NULL,"
    " value BLOB NOT NULL,"
    " at_us INTEGER NOT NULL,"
    " key TEXT,"
    " actor TEXT,"
    " reason TEXT)",
    "CREATE UNIQUE INDEX events_board_key ON events (board, key) WHERE key IS NOT NULL",
    "CREATE INDEX events_board_seq ON events (board, seq)",
    f"INSERT INTO schema_version (version) VALUES ({SCHEMA_VERSION})",
)

_COLUMNS: Final = "seq, board, member, operation, value, at_us, key, actor, reason"


def _row_event(row: tuple[object, ...]) -> Event:
    """The event a row holds, or :class:`JournalError` naming the row if it does not parse."""
    seq, board, member, operation, value, at_us, key, actor, reason = row
    try:
        return Event(
            seq=seq,  # type: ignore[arg-type]  # checked by Event
            board=board,  # type: ignore[arg-type]
            member=member,  # type: ignore[arg-type]
            operation=operation,  # type: ignore[arg-type]
            value=value,  # type: ignore[arg-type]
            at_us=at_us,  # type: ignore[arg-type]
            key=key,  # type: ignore[arg-type]
            actor=actor,  # type: ignore[arg-type]
            reason=reason,  # type: ignore[arg-type]
        )
    except RankedError as error:
        raise JournalError(f"journal row seq={seq!r} does not parse: {error}") from error


class _Pending:
    """One append (or, with ``events`` None, one flush) waiting for the committer."""

    __slots__ = ("done", "error", "events", "result")

    def __init__(self, events: list[NewEvent] | None) -> None:
        self.events = events
        self.result: list[Event] = []
        self.error: BaseException | None = None
        self.done = threading.Event()


def _check_options(durability: object, max_delay_ms: object) -> None:
    if durability not in ("always", "batch", "none"):
        raise JournalConfigError(
            f"durability {durability!r} is not one of 'always', 'batch', 'none'"
        )
    if (
        isinstance(max_delay_ms, bool)
        or not isinstance(max_delay_ms, int)
        or not 1 <= max_delay_ms <= MAX_DELAY_MS
    ):
        raise JournalConfigError(
            f"max_delay_ms must be an int in [1, {MAX_DELAY_MS}], not {max_delay_ms!r}"
        )


class SQLiteJournal:
    """A :class:`~ranked.journal.store.JournalStore` on one SQLite file (see the module
    docstring for the durability modes and the file layout). Thread-safe; one process
    writes a journal file at a time."""

    def __init__(
        self, path: str, *, durability: Durability = "always", max_delay_ms: int = 10
    ) -> None:
        _check_options(durability, max_delay_ms)
        if not isinstance(path, str) or not path:
            raise JournalConfigError(f"path must be a non-empty str, not {path!r}")
        self.path: Final = path
        self.durability: Final = durability
        self._delay_s = max_delay_ms / 1000
        self._writer = self._open_writer()
        try:
            self._reader = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._check_tail()
        except sqlite3.DatabaseError as error:
            self._writer.close()
            raise JournalError(f"journal {path!r} cannot be read: {error}") from error
        except BaseException:
            self._writer.close()
            raise
        self._reader_lock = threading.Lock()
        self._cond = threading.Condition()
        self._queue: list[_Pending] = []
        self._closing = False
        self._closed = False
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="ranked-journal", daemon=True)
        self._thread.start()

    # -- opening -------------------------------------------------------------------------

    def _open_writer(self) -> sqlite3.Connection:
        """The committer's connection, on a file whose schema is created or verified."""
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as error:
            raise JournalError(f"journal {self.path!r} cannot be opened: {error}") from error
        try:
            self._prepare(conn)
        except sqlite3.DatabaseError as error:
            conn.close()
            raise JournalError(f"journal {self.path!r} cannot be opened: {error}") from error
        except BaseException:
            conn.close()
            raise
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"journal {self.path!r} cannot use WAL mode (got {mode!r})")
        conn.execute(f"PRAGMA synchronous={'OFF' if self.durability == 'none' else 'FULL'}")
        conn.execute("BEGIN IMMEDIATE")
        try:
            tables = {
                row[0]
                for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if "schema_version" not in tables:
                if tables:
                    raise JournalError(
                        f"{self.path!r} is a SQLite database but not a ranked journal"
                        f" (it has tables {sorted(tables)})"
                    )
                for statement in _SCHEMA:
                    conn.execute(statement)
            else:
                rows = conn.execute("SELECT version FROM schema_version").fetchall()
                if len(rows) != 1 or not isinstance(rows[0][0], int):
                    raise JournalError(f"journal {self.path!r} has no valid schema version")
                version = rows[0][0]
                if version != SCHEMA_VERSION:
                    raise JournalVersionError(
                        f"journal {self.path!r} has schema version {version}; this ranked"
                        f" reads version {SCHEMA_VERSION}"
                    )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _check_tail(self) -> None:
        """Refuse a database file cut inside a page, and read the last row (it must parse)."""
        page_size = self._reader.execute("PRAGMA page_size").fetchone()[0]
        size = os.path.getsize(self.path)
        if size % page_size:
            raise JournalError(
                f"journal {self.path!r} is {size} bytes, not a whole number of"
                f" {page_size}-byte pages: its last page is torn"
            )
        row = self._reader.execute(
            f"SELECT {_COLUMNS} FROM events ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        if row is not None:
            _row_event(row)

    # -- appending -----------------------------------------------------------------------

    def append(self, events: Sequence[NewEvent]) -> list[Event]:
        """Append ``events`` atomically and return their records (see
        :meth:`ranked.journal.store.JournalStore.append`). Every event is checked first: one
        bad event raises its typed error and nothing is appended."""
        batch = list(events)
        for event in batch:
            check_event(event)
        if not batch:
            return []
        pending = _Pending(batch)
        self._submit(pending)
        return pending.result

    def flush(self) -> None:
        """Commit everything appended so far (only ``batch`` mode has anything to do)."""
        self._submit(_Pending(None))

    def _submit(self, pending: _Pending) -> None:
        with self._cond:
            if self._closing:
                raise JournalError(f"journal {self.path!r} is closed")
            if self._failure is not None:
                raise JournalError(f"journal {self.path!r} failed: {self._failure}")
            self._queue.append(pending)
            self._cond.notify()
        pending.done.wait()
        if pending.error is not None:
            raise pending.error

    # -- the committer thread ------------------------------------------------------------

    def _run(self) -> None:
        """Take what is queued, write it in the open transaction, commit when the mode asks;
        wake each appender once its events are as durable as the mode promises."""
        in_txn = False
        deadline = 0.0
        batch: list[_Pending] = []
        waiting: list[_Pending] = []  # written, to be woken after the commit
        try:
            while True:
                with self._cond:
                    while not self._queue and not self._closing:
                        if in_txn:
                            left = deadline - time.monotonic()
                            if left <= 0:
                                break
                            self._cond.wait(left)
                        else:
                            self._cond.wait()
                    batch, self._queue = self._queue, []
                    closing = self._closing
                try:
                    if batch and not in_txn:
                        self._writer.execute("BEGIN IMMEDIATE")
                        in_txn = True
                        deadline = time.monotonic() + self._delay_s
                    for pending in batch:
                        if pending.events is not None:
                            self._write(pending, pending.events)
                    if self.durability == "batch":
                        for pending in batch:
                            if pending.events is None:
                                waiting.append(pending)
                            else:
                                pending.done.set()
                    else:
                        waiting.extend(batch)
                    must_commit = (
                        self.durability != "batch"
                        or closing
                        or any(p.events is None for p in batch)
                        or time.monotonic() >= deadline
                    )
                    if in_txn and must_commit:
                        self._writer.execute("COMMIT")
                        in_txn = False
                except sqlite3.Error as error:
                    try:
                        if self._writer.in_transaction:  # SQLite may have rolled back itself
                            self._writer.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # the transaction is gone either way
                    in_txn = False
                    failure = JournalError(f"journal {self.path!r} commit failed: {error}")
                    for pending in waiting + batch:
                        pending.error = failure
                        pending.result = []
                if not in_txn:
                    for pending in waiting:
                        pending.done.set()
                    waiting = []
                if closing and not in_txn:
                    with self._cond:
                        if not self._queue:
                            return
        except BaseException as error:  # never leave an appender waiting forever
            with self._cond:
                self._failure = error
                stranded, self._queue = waiting + batch + self._queue, []
            for pending in stranded:
                pending.error = JournalError(f"journal {self.path!r} failed: {error}")
                pending.done.set()
            raise

    def _write(self, pending: _Pending, events: list[NewEvent]) -> None:
        """Write one append in its own savepoint: on an error only this append is undone."""
        conn = self._writer
        conn.execute("SAVEPOINT append")
        try:
            out: list[Event] = []
            for event in events:
                if event.key is not None:
                    row = conn.execute(
                        f"SELECT {_COLUMNS} FROM events WHERE board = ? AND key = ?",
                        (event.board, event.key),
                    ).fetchone()
                    if row is not None:
                        out.append(_row_event(row))
                        continue
                cursor = conn.execute(
                    "INSERT INTO events (board, member, operation, value, at_us, key, actor,"
                    " reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    stored_fields(event),
                )
                seq = cursor.lastrowid
                assert seq is not None
                out.append(
                    Event(
                        seq=seq,
                        board=event.board,
                        member=event.member,
                        operation=event.operation,
                        value=event.value,
                        at_us=event.at_us,
                        key=event.key,
                        actor=event.actor,
                        reason=event.reason,
                    )
                )
        except (sqlite3.Error, JournalError) as error:
            conn.execute("ROLLBACK TO append")
            conn.execute("RELEASE append")
            pending.error = (
                error
                if isinstance(error, JournalError)
                else JournalError(f"journal {self.path!r} append failed: {error}")
            )
            return
        conn.execute("RELEASE append")
        pending.result = out

    # -- reading -------------------------------------------------------------------------

    def read(
        self, after_seq: int = 0, board: str | None = None, limit: int | None = None
    ) -> Iterator[Event]:
        """The committed events with ``seq > after_seq`` (of ``board`` only, if given), in
        seq order, at most ``limit``. Read in pages of 512 rows, each an index range scan."""
        if isinstance(after_seq, bool) or not isinstance(after_seq, int) or after_seq < 0:
            raise OutOfRangeError(f"after_seq must be an int >= 0, not {after_seq!r}")
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        ):
            raise PageSizeError(f"limit must be None or an int >= 0, not {limit!r}")
        if board is not None and not isinstance(board, str):
            raise JournalConfigError(f"board must be a str or None, not {board!r}")
        return self._read(after_seq, board, limit)

    def _read(self, after: int, board: str | None, limit: int | None) -> Iterator[Event]:
        where = "seq > ?" if board is None else "board = ? AND seq > ?"
        sql = f"SELECT {_COLUMNS} FROM events WHERE {where} ORDER BY seq LIMIT ?"
        left = limit
        while left is None or left > 0:
            page = _READ_PAGE if left is None else min(_READ_PAGE, left)
            args = (after, page) if board is None else (board, after, page)
            rows = self._query(sql, args)
            event = None
            for row in rows:
                event = _row_event(row)
                yield event
            if event is None or len(rows) < page:
                return
            after = event.seq
            if left is not None:
                left -= len(rows)

    def last_seq(self) -> int:
        """The greatest committed ``seq``, 0 for an empty journal. O(log n)."""
        ((seq,),) = self._query("SELECT max(seq) FROM events", ())
        if seq is None:
            return 0
        if not isinstance(seq, int):
            raise JournalError(f"journal {self.path!r} has a seq that is not an int: {seq!r}")
        return seq

    def _query(self, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        """The rows of one read; a damaged file raises :class:`JournalError`."""
        try:
            with self._reader_lock:
                return self._reader.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as error:
            raise JournalError(f"journal {self.path!r} cannot be read: {error}") from error

    # -- closing -------------------------------------------------------------------------

    def close(self) -> None:
        """Commit what is pending, stop the committer and close the file. Idempotent."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._closing = True
            self._cond.notify()
        self._thread.join()
        with self._reader_lock:
            self._reader.close()
        self._writer.close()

    def __enter__(self) -> SQLiteJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
