"""The journal on PostgreSQL (psycopg 3), for several processes sharing one journal.

Schema (version 1, :data:`SCHEMA_VERSION`):
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

Group commit: one committer thread per journal owns the writing connection
(:mod:`ranked.journal._group_commit`, shared with the SQLite store): a round's events go in
one ``executemany`` (psycopg pipelines it), numbered by the writer under the table lock.
Reads use a second connection in autocommit mode and see committed events only. Cost of an
append: O(k log n), and a share of a round's few round trips.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ..errors import JournalConfigError, JournalError
from ._base import COLUMNS, JournalBase, SQLWriter, check_schema_version
from ._group_commit import check_options
from .store import Durability

if TYPE_CHECKING:
    import psycopg

__all__ = ["SCHEMA_VERSION", "PostgresJournal"]

SCHEMA_VERSION: Final = 1
"""The PostgreSQL journal's schema version (each store versions its own schema)."""

_SCHEMA_LOCK: Final = 0x72616E6B6564  # "ranked": the advisory lock around schema creation

_SCHEMA: Final = (
    "CREATE TABLE schema_version (version integer NOT NULL)",
    "CREATE TABLE events ("
    " seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " board_seq bigint NOT NULL,"
    " board text NOT NULL,"
    " member bytea,"
    " operation text NOT NULL,"
    " score double precision,"
    " value bytea NOT NULL,"
    " at_us bigint NOT NULL,"
    " key text,"
    " actor text,"
    " reason text)",
    "CREATE UNIQUE INDEX events_board_key ON events (board, key) WHERE key IS NOT NULL",
    "CREATE INDEX events_board_seq ON events (board, seq)",
    "CREATE UNIQUE INDEX events_board_number ON events (board, board_seq)",
    "CREATE INDEX events_board_member ON events (board, member, seq, operation, score)",
    f"INSERT INTO schema_version (version) VALUES ({SCHEMA_VERSION})",
)


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


class _Writer(SQLWriter["psycopg.Connection[tuple[Any, ...]]"]):
    """The committer's connection. Every transaction starts by locking the events table,
    so seqs commit in seq order."""

    statement_atomic = False
    _OVERRIDING = "OVERRIDING SYSTEM VALUE "

    def begin(self) -> None:
        self._forget()
        self.conn.execute("BEGIN")
        self.conn.execute("LOCK TABLE events IN EXCLUSIVE MODE")

    def _executemany(self, sql: str, rows: list[tuple[object, ...]]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(sql, rows)


class PostgresJournal(JournalBase):
    """A :class:`~ranked.journal.store.JournalStore` on a PostgreSQL database (see the
    module docstring). Thread-safe; several processes may append to one journal."""

    _READ_ALL = f"SELECT {COLUMNS} FROM events WHERE seq > %s ORDER BY seq LIMIT %s"
    _READ_BOARD = (
        f"SELECT {COLUMNS} FROM events WHERE board = %s AND seq > %s ORDER BY seq LIMIT %s"
    )
    _BOARD_EVENTS = (
        f"SELECT {COLUMNS} FROM events WHERE board = %s AND board_seq > %s"
        " ORDER BY board_seq LIMIT %s"
    )
    _LAST_BOARD_SEQ = "SELECT max(board_seq) FROM events WHERE board = %s"
    _PARAM = "%s"
    _OPERATIONS = "string_agg(DISTINCT operation, ',')"
    _NOT_WHOLE = "score <> trunc(score)"
    _MEMBER_EVENTS = (
        f"SELECT {COLUMNS} FROM events WHERE board = %s AND member = %s AND seq > %s"
        " ORDER BY seq LIMIT %s"
    )

    def __init__(
        self, conninfo: str, *, durability: Durability = "always", max_delay_ms: int = 10
    ) -> None:
        check_options(durability, max_delay_ms)
        error = _driver_error()
        self._read_errors = (error,)
        self.conninfo: Final = conninfo
        name = "postgresql journal"
        writer = self._connect(name, durability)
        try:
            self._prepare(writer, name, error)
            self._reader = self._connect(name, durability)
        except BaseException:
            writer.close()
            raise
        self._writer = _Writer(writer, (error,), "%s")
        super().__init__(self._writer, name=name, durability=durability, max_delay_ms=max_delay_ms)

    def _connect(self, name: str, durability: Durability) -> psycopg.Connection[tuple[Any, ...]]:
        import psycopg

        try:
            conn = psycopg.connect(self.conninfo, autocommit=True)
            sync = "off" if durability == "none" else "on"
            conn.execute(f"SET synchronous_commit = {sync}")
        except psycopg.Error as error:
            raise JournalError(f"{name} cannot be opened: {error}") from error
        return conn

    def _prepare(
        self, conn: psycopg.Connection[tuple[Any, ...]], name: str, error: type[Exception]
    ) -> None:
        """Create the schema in an empty database, or check the version of an existing one."""
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
                            f"{name}: the database has an events table but no"
                            " schema_version: not a ranked journal"
                        )
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    return
                rows = conn.execute("SELECT version FROM schema_version").fetchall()
                check_schema_version(rows, name, SCHEMA_VERSION)
        except error as failure:
            raise JournalError(f"{name} cannot be opened: {failure}") from failure

    # -- reading and closing -------------------------------------------------------------

    _BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
