"""The journal on PostgreSQL (psycopg 3), for several processes sharing one journal.

Schema (the same version as the SQLite store, :data:`~ranked.journal.sqlite.SCHEMA_VERSION`):
``schema_version(version)`` (one row) and ``events(seq bigint GENERATED ALWAYS AS IDENTITY
PRIMARY KEY, board, member, operation, value, at_us, key, actor, reason)``, a UNIQUE index
on ``(board, key)`` where ``key`` is not null and an index on ``(board, seq)``. The schema is
created on first open, under a transaction-level advisory lock so two processes opening a
fresh database at once create it once.

Seqs in commit order across processes: an identity value is drawn when a row is inserted,
not when its transaction commits, so two concurrent transactions could commit seqs out of
order and a reader that saw seq 12 could later miss seq 11. Every write transaction
therefore starts with ``LOCK TABLE events IN EXCLUSIVE MODE`` (it blocks other writers, not
readers) and holds it to its commit: seqs are drawn and committed by one transaction at a
time, so ``read(after_seq=k)`` never misses an event committed later. Seqs of a rolled-back
append are not reused (a gap), which reading does not mind.

Durability modes: ``always`` (default) sets ``synchronous_commit=on``; :meth:`append`
returns once its transaction is committed and flushed to the server's WAL. ``none`` sets
``synchronous_commit=off``: committed before :meth:`append` returns, but the server may
lose the last few hundred milliseconds of commits in a server crash (never a torn state).
``batch`` keeps one transaction (and the table lock) open for at most ``max_delay_ms``, as
the SQLite store does; other processes' appends wait for it.

Group commit: one committer thread per journal owns the writing connection, as in
:mod:`ranked.journal.sqlite` (each append in its own savepoint). Reads use a second
connection in autocommit mode and see committed events only. Cost of an append: O(k log n)
plus one round trip per statement.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..errors import (
    JournalConfigError,
    JournalError,
    JournalVersionError,
    OutOfRangeError,
    PageSizeError,
)
from .events import Event, NewEvent, check_event, stored_fields
from .sqlite import SCHEMA_VERSION, _check_options, _Pending, _row_event
from .store import Durability

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresJournal"]

_READ_PAGE: Final = 512
_SCHEMA_LOCK: Final = 0x72616E6B6564  # "ranked": the advisory lock around schema creation

_SCHEMA: Final = (
    "CREATE TABLE schema_version (version integer NOT NULL)",
    "CREATE TABLE events ("
    " seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " board text NOT NULL,"
    " member bytea,"
    " operation text NOT NULL,"
    " value bytea NOT NULL,"
    " at_us bigint NOT NULL,"
    " key text,"
    " actor text,"
    " reason text)",
    "CREATE UNIQUE INDEX events_board_key ON events (board, key) WHERE key IS NOT NULL",
    "CREATE INDEX events_board_seq ON events (board, seq)",
    f"INSERT INTO schema_version (version) VALUES ({SCHEMA_VERSION})",
)

_COLUMNS: Final = "seq, board, member, operation, value, at_us, key, actor, reason"


def _driver_error() -> type[Exception]:
    """psycopg's base error, importing psycopg on first use: sqlite:// users need not
    install it."""
    try:
        import psycopg
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise JournalConfigError(
            "a postgresql:// journal needs psycopg 3: pip install 'ranked[postgresql]'"
        ) from error
    return psycopg.Error


class PostgresJournal:
    """A :class:`~ranked.journal.store.JournalStore` on a PostgreSQL database (see the
    module docstring). Thread-safe; several processes may append to one journal."""

    def __init__(
        self, conninfo: str, *, durability: Durability = "always", max_delay_ms: int = 10
    ) -> None:
        _check_options(durability, max_delay_ms)
        self._error = _driver_error()
        self.conninfo: Final = conninfo
        self.durability: Final = durability
        self._delay_s = max_delay_ms / 1000
        self._writer = self._connect()
        try:
            self._prepare()
            self._reader = self._connect()
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

    @property
    def _name(self) -> str:
        return "postgresql journal"

    def _connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        import psycopg

        try:
            conn = psycopg.connect(self.conninfo, autocommit=True)
            sync = "off" if self.durability == "none" else "on"
            conn.execute(f"SET synchronous_commit = {sync}")
        except psycopg.Error as error:
            raise JournalError(f"{self._name} cannot be opened: {error}") from error
        return conn

    def _prepare(self) -> None:
        """Create the schema in an empty database, or check the version of an existing one."""
        conn = self._writer
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                have = conn.execute(
                    "SELECT to_regclass('schema_version') IS NOT NULL,"
                    " to_regclass('events') IS NOT NULL"
                ).fetchone()
                assert have is not None
                if not have[0]:
                    if have[1]:
                        raise JournalError(
                            f"{self._name}: the database has an events table but no"
                            " schema_version: not a ranked journal"
                        )
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    return
                rows = conn.execute("SELECT version FROM schema_version").fetchall()
                if len(rows) != 1 or not isinstance(rows[0][0], int):
                    raise JournalError(f"{self._name} has no valid schema version")
                version = rows[0][0]
                if version != SCHEMA_VERSION:
                    raise JournalVersionError(
                        f"{self._name} has schema version {version}; this ranked"
                        f" reads version {SCHEMA_VERSION}"
                    )
        except self._error as error:
            raise JournalError(f"{self._name} cannot be opened: {error}") from error

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
                raise JournalError(f"{self._name} is closed")
            if self._failure is not None:
                raise JournalError(f"{self._name} failed: {self._failure}")
            self._queue.append(pending)
            self._cond.notify()
        pending.done.wait()
        if pending.error is not None:
            raise pending.error

    def _run(self) -> None:
        """The committer: as in :class:`~ranked.journal.sqlite.SQLiteJournal`, but each
        transaction starts by locking the events table (seqs commit in order)."""
        conn = self._writer
        in_txn = False
        deadline = 0.0
        batch: list[_Pending] = []
        waiting: list[_Pending] = []
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
                        conn.execute("BEGIN")
                        in_txn = True
                        conn.execute("LOCK TABLE events IN EXCLUSIVE MODE")
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
                        conn.execute("COMMIT")
                        in_txn = False
                except self._error as error:
                    with contextlib.suppress(self._error):  # the transaction is gone either way
                        conn.execute("ROLLBACK")
                    in_txn = False
                    failure = JournalError(f"{self._name} commit failed: {error}")
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
                pending.error = JournalError(f"{self._name} failed: {error}")
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
                        f"SELECT {_COLUMNS} FROM events WHERE board = %s AND key = %s",
                        (event.board, event.key),
                    ).fetchone()
                    if row is not None:
                        out.append(_row_event(row))
                        continue
                row = conn.execute(
                    "INSERT INTO events (board, member, operation, value, at_us, key, actor,"
                    " reason) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING seq",
                    stored_fields(event),
                ).fetchone()
                assert row is not None
                out.append(
                    Event(
                        seq=row[0],
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
        except (self._error, JournalError) as error:
            conn.execute("ROLLBACK TO SAVEPOINT append")
            conn.execute("RELEASE SAVEPOINT append")
            pending.error = (
                error
                if isinstance(error, JournalError)
                else JournalError(f"{self._name} append failed: {error}")
            )
            return
        conn.execute("RELEASE SAVEPOINT append")
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
        where = "seq > %s" if board is None else "board = %s AND seq > %s"
        sql = f"SELECT {_COLUMNS} FROM events WHERE {where} ORDER BY seq LIMIT %s"
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
            raise JournalError(f"{self._name} has a seq that is not an int: {seq!r}")
        return seq

    def _query(self, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        try:
            with self._reader_lock:
                return self._reader.execute(sql, args).fetchall()
        except self._error as error:
            raise JournalError(f"{self._name} cannot be read: {error}") from error

    # -- closing -------------------------------------------------------------------------

    def close(self) -> None:
        """Commit what is pending, stop the committer and close the connections. Idempotent."""
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

    def __enter__(self) -> PostgresJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
