"""The journal on one SQLite file (standard library ``sqlite3``), in WAL mode.

File layout: ``<path>`` (the database), ``<path>-wal`` and ``<path>-shm`` (SQLite's
write-ahead log and its index, present while the journal is open). The schema is the
project's own, versioned in the ``schema_version`` table (version 2; a version 1 file is
migrated when it is opened): ``events(seq INTEGER PRIMARY KEY, board_seq, board, member,
operation, score, value, at_us, key, actor, reason)``, a UNIQUE index on ``(board, key)``
where ``key`` is not null (idempotency), UNIQUE ``(board, board_seq)``, ``(board, seq)``
(reading one board) and ``(board, operation, board_seq)`` over board-wide events only.

A member's events are found through ``member_seqs(run, board, member, seq)``, which the
committer fills in runs: once :data:`MEMBER_INDEX_EVERY` events have been committed since
the last run, it writes them as one more run, sorted by member, in a transaction of its own
(``member_runs`` lists the runs by the last seq each covers). Each run goes at the end of
the table, so writing it costs a few sequential pages; a member's history is one index
seek per run, then a scan of the journal's tail after the last run. An index on
``(board, member)`` kept at every commit instead would dirty one page per event at random
(members arrive in no order), and every dirty page is written whole into the WAL at every
commit: measured, it tripled the cost of a durable commit. So would a single sorted table
filled in bulk: members arrive in no order there too.

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

Group commit (:mod:`ranked.journal._group_commit`, shared with PostgreSQL): one committer
thread owns the writing connection; concurrent appends are written in one transaction
(each in its own savepoint, so one append failing fails only itself) and share one fsync.
An append is atomic: all of its events or none. Cost: O(k log n) for k events in a
journal of n.

A damaged file is never read silently wrong: a file that is not a SQLite database, a
database file whose size is not a whole number of pages (a torn last page), or a row that
does not parse raises :class:`~ranked.errors.JournalError`. A torn tail of the ``-wal``
file is what SQLite's own recovery handles: the frames after the last complete commit are
ignored, and the journal opens at its last good state.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from typing import Final

from ..errors import JournalConfigError, JournalError
from ._base import COLUMNS, JournalBase, SQLWriter, check_schema_version
from ._group_commit import MAX_DELAY_MS, check_options
from .events import event_from_row
from .lane import GATE_TIMEOUT_MS, NativeLane, lane_available, new_gate
from .store import Durability

__all__ = ["MAX_DELAY_MS", "MEMBER_INDEX_EVERY", "SCHEMA_VERSION", "SQLiteJournal"]

SCHEMA_VERSION: Final = 2
"""The SQLite journal's schema version (2: members found through ``member_seqs``)."""

MEMBER_INDEX_EVERY: Final = 8192
"""The events of one run of ``member_seqs``: so a member's history scans at most about this
many events of the journal's tail, makes one index seek per this many events before it,
and the committer pauses for one run's sort and sequential write this often."""

_MEMBER_SEQS: Final = (
    "CREATE INDEX events_board_wide ON events (board, operation, board_seq) WHERE member IS NULL",
    "CREATE TABLE member_runs (upto INTEGER PRIMARY KEY)",
    "CREATE TABLE member_seqs (run INTEGER NOT NULL, board TEXT NOT NULL,"
    " member BLOB NOT NULL, seq INTEGER NOT NULL,"
    " PRIMARY KEY (run, board, member, seq)) WITHOUT ROWID",
)

_ADD_RUN: Final = (
    "INSERT INTO member_seqs (run, board, member, seq) SELECT ?2, board, member, seq"
    " FROM events WHERE seq > ?1 AND seq <= ?2 AND member IS NOT NULL"
    " ORDER BY board, member, seq",
    "INSERT INTO member_runs (upto) VALUES (?2)",
)
"""A run of ``member_seqs``: the events after seq ?1 up to seq ?2 (both statements)."""

_LAST_RUN: Final = "SELECT coalesce(max(upto), 0) FROM member_runs"
_LAST_SEQ: Final = "SELECT coalesce(max(seq), 0) FROM events"


def _add_run(conn: sqlite3.Connection, after: int, last: int) -> None:
    """Write the events after seq ``after`` up to ``last`` as one run of ``member_seqs``
    (inside the caller's transaction)."""
    for statement in _ADD_RUN:
        conn.execute(statement, (after, last))


_MIGRATIONS: Final = {
    1: (
        *_MEMBER_SEQS,
        "DROP INDEX events_board_member",
        "UPDATE schema_version SET version = 2",
    ),
}
"""The statements that take a file of version N to version N + 1, all in one transaction
(from version 1, then one run of ``member_seqs`` over the whole journal)."""

_SCHEMA: Final = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE events ("
    " seq INTEGER PRIMARY KEY,"
    " board_seq INTEGER NOT NULL,"
    " board TEXT NOT NULL,"
    " member BLOB,"
    " operation TEXT NOT NULL,"
    " score REAL,"
    " value BLOB NOT NULL,"
    " at_us INTEGER NOT NULL,"
    " key TEXT,"
    " actor TEXT,"
    " reason TEXT)",
    "CREATE UNIQUE INDEX events_board_key ON events (board, key) WHERE key IS NOT NULL",
    "CREATE INDEX events_board_seq ON events (board, seq)",
    "CREATE UNIQUE INDEX events_board_number ON events (board, board_seq)",
    *_MEMBER_SEQS,
    f"INSERT INTO schema_version (version) VALUES ({SCHEMA_VERSION})",
)


_CHUNKS: Final = (256, 64, 16, 4, 1)
"""The row counts of the multi-row INSERTs a round is cut into (few distinct statements,
so the driver's statement cache keeps them all)."""


class _Writer(SQLWriter[sqlite3.Connection]):
    """The committer's connection."""

    statement_atomic = True

    def __init__(self, conn: sqlite3.Connection, mark: int) -> None:
        super().__init__(conn, (sqlite3.Error,), "?")
        self._mark = mark
        """The last seq ``member_seqs`` covers (its last run's)."""
        self.gate = new_gate()
        """The file's write gate, shared with the native lane (None without the lane's
        module): each transaction takes it first and gives it back when it is over."""
        self._held = False

    def begin(self) -> None:
        self._forget()
        gate = self.gate
        if gate is not None:
            if not gate.take(GATE_TIMEOUT_MS):
                raise sqlite3.OperationalError("the journal's write gate was not given in time")
            self._held = True
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._give()
            raise

    def execute(self, sql: str) -> None:
        # the turn ends with a COMMIT that succeeds or with any ROLLBACK (after a failed
        # COMMIT the committer rolls back)
        try:
            super().execute(sql)
        except BaseException:
            if sql == "ROLLBACK":
                self._give()
            raise
        if sql in ("COMMIT", "ROLLBACK"):
            self._give()

    def _give(self) -> None:
        if self._held:
            self._held = False
            assert self.gate is not None
            self.gate.give()

    def shared_failure(self) -> str | None:
        return None if self.gate is None else self.gate.failure()

    def share_failure(self, why: str) -> None:
        if self.gate is not None:
            self.gate.fail(why)

    def upkeep(self) -> None:
        """Write the events committed since the last run as a run of ``member_seqs`` (in
        one transaction of its own) once there are :data:`MEMBER_INDEX_EVERY` of them."""
        last = self._last_seq
        if last is None or last - self._mark < MEMBER_INDEX_EVERY:
            return
        conn = self.conn
        self.begin()
        try:
            # read again inside the transaction: the native lane writes runs too
            (mark,) = conn.execute(_LAST_RUN).fetchone()
            if last - mark >= MEMBER_INDEX_EVERY:
                _add_run(conn, mark, last)
                mark = last
            self.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.execute("ROLLBACK")
            raise
        self._mark = mark

    def _executemany(self, sql: str, rows: list[tuple[object, ...]]) -> None:
        # One multi-row INSERT per chunk, not one statement per row: the driver lets go
        # of the GIL around every statement it steps, and each time it must win the GIL
        # back from the event loop's thread before the next row.
        width = len(rows[0]) if rows else 0
        at = 0
        for size in _CHUNKS:
            while len(rows) - at >= size:
                chunk = rows[at : at + size]
                at += size
                if size == 1:
                    self.conn.execute(sql, chunk[0])
                else:
                    self.conn.execute(_many(sql, size, width), [v for row in chunk for v in row])


_STATEMENTS: dict[tuple[str, int], str] = {}


def _many(sql: str, size: int, width: int) -> str:
    """``sql`` (an INSERT of one row of ``width`` placeholders) for ``size`` rows."""
    found = _STATEMENTS.get((sql, size))
    if found is None:
        head, _, _ = sql.rpartition("VALUES")
        one = "(" + ", ".join(["?"] * width) + ")"
        found = _STATEMENTS[sql, size] = head + "VALUES " + ", ".join([one] * size)
    return found


class SQLiteJournal(JournalBase):
    """A :class:`~ranked.journal.store.JournalStore` on one SQLite file (see the module
    docstring for the durability modes and the file layout). Thread-safe; one process
    writes a journal file at a time."""

    _READ_ALL = f"SELECT {COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?"
    _READ_BOARD = f"SELECT {COLUMNS} FROM events WHERE board = ? AND seq > ? ORDER BY seq LIMIT ?"
    _BOARD_EVENTS = (
        f"SELECT {COLUMNS} FROM events WHERE board = ? AND board_seq > ? ORDER BY board_seq LIMIT ?"
    )
    _LAST_BOARD_SEQ = "SELECT max(board_seq) FROM events WHERE board = ?"
    _PARAM = "?"
    _OPERATIONS = "group_concat(DISTINCT operation)"
    _NOT_WHOLE = "score <> CAST(score AS INTEGER)"
    _MEMBER_EVENTS = (
        f"SELECT {COLUMNS} FROM events WHERE seq IN (SELECT m.seq FROM member_runs AS r"
        " CROSS JOIN member_seqs AS m ON m.run = r.upto AND m.board = ?1 AND m.member = ?2"
        " AND m.seq > ?3 WHERE r.upto > ?3 ORDER BY r.upto, m.seq LIMIT ?4)"
        f" UNION ALL SELECT {COLUMNS} FROM events NOT INDEXED"
        f" WHERE seq > max(?3, ({_LAST_RUN})) AND board = ?1 AND member = ?2"
        " ORDER BY seq LIMIT ?4"
    )  # one seek per run after the cursor (CROSS JOIN: the runs outside; runs cover
    # ascending seq ranges, so their order is seq order and a page stops at its limit),
    # then the tail after the last run
    _read_errors = (sqlite3.DatabaseError,)

    def _pairs(self, rows: list[tuple[object, ...]]) -> list[tuple[bytes, float]]:
        """The rows as they are: sqlite3 returns a BLOB as bytes and a REAL as float."""
        return rows  # type: ignore[return-value]

    def __init__(
        self, path: str, *, durability: Durability = "always", max_delay_ms: int = 10
    ) -> None:
        check_options(durability, max_delay_ms)
        if not isinstance(path, str) or not path:
            raise JournalConfigError(f"path must be a non-empty str, not {path!r}")
        self.path: Final = path
        self._absolute_path = os.path.abspath(path)  # the lane opens it later: any cwd then
        writer, mark = self._open_writer(durability)
        try:
            self._reader = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._check_tail()
        except sqlite3.DatabaseError as error:
            writer.close()
            raise JournalError(f"journal {path!r} cannot be read: {error}") from error
        except BaseException:
            writer.close()
            raise
        committer = _Writer(writer, mark)
        self._writer = committer
        self._gate = committer.gate
        self._max_delay_ms = max_delay_ms
        self._lane: NativeLane | None = None
        self._lane_off = False
        self._lane_lock = threading.Lock()
        super().__init__(
            self._writer,
            name=f"journal {path!r}",
            durability=durability,
            max_delay_ms=max_delay_ms,
        )

    # -- opening -------------------------------------------------------------------------

    def _open_writer(self, durability: Durability) -> tuple[sqlite3.Connection, int]:
        """The committer's connection, on a file whose schema is created, migrated or
        verified, and the last seq ``member_seqs`` covers."""
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as error:
            raise JournalError(f"journal {self.path!r} cannot be opened: {error}") from error
        try:
            mark = self._prepare(conn, durability)
        except sqlite3.DatabaseError as error:
            conn.close()
            raise JournalError(f"journal {self.path!r} cannot be opened: {error}") from error
        except BaseException:
            conn.close()
            raise
        return conn, mark

    def _prepare(self, conn: sqlite3.Connection, durability: Durability) -> int:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"journal {self.path!r} cannot use WAL mode (got {mode!r})")
        conn.execute(f"PRAGMA synchronous={'OFF' if durability == 'none' else 'FULL'}")
        # a round's savepoint keeps the pages it changes in a sub-journal: in memory, not
        # in a temporary file created, written and deleted at every group commit
        conn.execute("PRAGMA temp_store=MEMORY")
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
                self._migrate(conn)
            (mark,) = conn.execute(_LAST_RUN).fetchone()
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return int(mark)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Take the file to :data:`SCHEMA_VERSION` (inside the caller's transaction)."""
        name = f"journal {self.path!r}"
        rows = conn.execute("SELECT version FROM schema_version").fetchall()
        while len(rows) == 1 and rows[0][0] in _MIGRATIONS:
            version = rows[0][0]
            for statement in _MIGRATIONS[version]:
                conn.execute(statement)
            if version == 1:  # the whole journal becomes the first run of member_seqs
                (last,) = conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
                if last:
                    _add_run(conn, 0, last)
            rows = conn.execute("SELECT version FROM schema_version").fetchall()
        check_schema_version(rows, name, SCHEMA_VERSION)

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
            f"SELECT {COLUMNS} FROM events ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        if row is not None:
            event_from_row(row)

    # -- reading and closing -------------------------------------------------------------

    _BEGIN_READ = "BEGIN"

    # -- the native lane ---------------------------------------------------------------------

    def native_lane(self) -> NativeLane | None:
        """The store's native lane (:mod:`ranked.journal.lane`), started on first use; None
        where it cannot run, and once the store is closed."""
        lane = self._lane
        if lane is None and not self._lane_off:
            with self._lane_lock:
                if self._lane is None and not self._lane_off:
                    if self.lane_possible():
                        self._lane = self._start_lane()
                    else:
                        self._lane_off = True
                lane = self._lane
        return None if self._lane_off else lane

    def lane_counts(self) -> tuple[int, int]:
        lane = self._lane
        return (0, 0) if lane is None else lane.counts()

    def lane_possible(self) -> bool:
        """Whether :meth:`native_lane` can start a lane (without starting one)."""
        return not self._lane_off and self._gate is not None and lane_available()

    def _start_lane(self) -> NativeLane:
        writer = self._writer
        return NativeLane(
            path=self._absolute_path,
            synchronous="OFF" if self.durability == "none" else "FULL",
            batch=self.durability == "batch",
            max_delay_ms=self._max_delay_ms,
            insert=writer.insert_sql,
            last_seq=_LAST_SEQ,
            last_board_seq=writer.last_board_seq_sql,
            last_run=_LAST_RUN,
            add_run=_ADD_RUN,
            every=MEMBER_INDEX_EVERY,
            error_type=JournalError,
            gate=self._gate,
        )

    def flush(self) -> None:
        lane = self._lane
        if lane is not None:
            lane.flush()
        super().flush()

    def close(self) -> None:
        with self._lane_lock:
            self._lane_off = True
            lane = self._lane
        if lane is not None:
            lane.close()  # what it holds is committed before the committer stops
        super().close()
