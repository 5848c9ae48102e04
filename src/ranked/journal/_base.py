"""What every journal store does the same way, whatever its database: appends go through
one :class:`~ranked.journal._group_commit.GroupCommit` (checked first, on the caller's
thread), reads are checked and paged, and closing stops the committer before the
connections.

A store subclasses :class:`JournalBase` and supplies its SQL: its writing connection (a
:class:`SQLWriter` giving its BEGIN), the page queries, how to run a read
and which driver errors a read may raise, and how to close its connections.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, Final, Generic, Protocol, Self, TypeVar, cast, overload

from ..errors import (
    JournalConfigError,
    JournalError,
    JournalVersionError,
    OutOfRangeError,
    PageSizeError,
)
from ._group_commit import GroupCommit, Then, Ticket, Writer
from .events import Event, NewEvent, check_event, event_from_row, stored_fields
from .lane import NativeLane
from .stats import CommitStats
from .store import Durability

__all__ = [
    "COLUMNS",
    "Connection",
    "JournalBase",
    "SQLWriter",
    "check_schema_version",
]

R = TypeVar("R")

_READ_PAGE: Final = 512
_RECORDS: Final = frozenset(("config", "archive"))
"""Board-wide events that record (a configuration, an archive) and change no score."""
COLUMNS: Final = "seq, board_seq, board, member, operation, score, value, at_us, key, actor, reason"
"""The columns of a stored event, in the order :func:`~ranked.journal.events.event_from_row`
reads them."""


def check_schema_version(rows: list[tuple[object, ...]], name: str, expected: int) -> None:
    """Raise :class:`JournalError` unless ``rows`` (those of ``SELECT version FROM
    schema_version``) are one int, and :class:`JournalVersionError` unless it is
    ``expected`` (each store versions its own schema)."""
    if len(rows) != 1 or not isinstance(rows[0][0], int):
        raise JournalError(f"{name} has no valid schema version")
    version = rows[0][0]
    if version != expected:
        raise JournalVersionError(
            f"{name} has schema version {version}; this ranked reads version {expected}"
        )


class Connection(Protocol):
    """What both drivers' connections (sqlite3, psycopg) offer."""

    def execute(self, sql: str, args: Any = ..., /) -> Any: ...

    def close(self) -> None: ...


C = TypeVar("C", bound=Connection)


class SQLWriter(ABC, Generic[C]):
    """A :class:`~ranked.journal._group_commit.Writer` on the connection ``conn``, the same
    on every store: a store gives its BEGIN (which must exclude every other writer until
    the transaction ends), its driver's errors and its placeholder ``param``.

    It numbers events itself: the last seq and each board's last board_seq are read once
    per transaction and stay true while it inserts (no other writer runs), so a batch of
    events goes to the driver in one ``executemany``. A ROLLBACK forgets them (numbers
    given out may be free again)."""

    def __init__(self, conn: C, errors: tuple[type[Exception], ...], param: str) -> None:
        self.conn = conn
        self.errors = errors
        self._find_sql = f"SELECT {COLUMNS} FROM events WHERE board = {param} AND key = {param}"
        self.last_board_seq_sql = (
            f"SELECT coalesce(max(board_seq), 0) FROM events WHERE board = {param}"
        )
        self.insert_sql = (
            f"INSERT INTO events ({COLUMNS}) {self._OVERRIDING}VALUES ({', '.join([param] * 11)})"
        )
        self._last_seq: int | None = None
        self._last_board_seq: dict[str, int] = {}

    _OVERRIDING: ClassVar[str] = ""
    """What an INSERT that gives the seq itself must say (PostgreSQL's identity column)."""

    @abstractmethod
    def begin(self) -> None:
        """Open a write transaction that excludes every other writer; call :meth:`_forget`
        first."""

    @abstractmethod
    def _executemany(self, sql: str, rows: list[tuple[object, ...]]) -> None:
        """Run ``sql`` once per row of ``rows`` (one trip to the driver where it can)."""

    def execute(self, sql: str) -> None:
        if sql.startswith("ROLLBACK"):
            self._forget()
        self.conn.execute(sql)

    def upkeep(self) -> None:
        """Nothing to do between transactions (a store overrides it when it has)."""

    def shared_failure(self) -> str | None:
        """None: no other writer shares this connection's file (a store overrides it)."""
        return None

    def share_failure(self, why: str) -> None:
        """Nothing to share (a store with another writer of its file overrides it)."""

    def _forget(self) -> None:
        self._last_seq = None
        self._last_board_seq.clear()

    def find(self, board: str, key: str) -> Event | None:
        row = self.conn.execute(self._find_sql, (board, key)).fetchone()
        return None if row is None else event_from_row(row)

    def insert(self, event: NewEvent) -> tuple[int, int]:
        """Insert ``event``: its seq and its board_seq (the last ones plus one)."""
        return self.insert_many([event])[0]

    def insert_many(self, events: list[NewEvent]) -> list[tuple[int, int]]:
        """Insert ``events`` in order: their seqs and board_seqs."""
        conn = self.conn
        seq = self._last_seq
        if seq is None:
            seq = conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]
        last = self._last_board_seq
        numbers: list[tuple[int, int]] = []
        rows: list[tuple[object, ...]] = []
        for event in events:
            board = event.board
            board_seq = last.get(board)
            if board_seq is None:
                board_seq = conn.execute(self.last_board_seq_sql, (board,)).fetchone()[0]
            seq += 1
            board_seq += 1
            last[board] = board_seq
            numbers.append((seq, board_seq))
            rows.append((seq, board_seq, *stored_fields(event)))
        try:
            self._executemany(self.insert_sql, rows)
        except BaseException:
            self._forget()
            raise
        self._last_seq = seq
        return numbers


class JournalBase(ABC):
    """An append-only journal on one database (see :class:`~ranked.journal.store.JournalStore`
    for the contract). Thread-safe."""

    _READ_ALL: ClassVar[str]
    """The page query over every board: arguments ``(after_seq, limit)``."""
    _READ_BOARD: ClassVar[str]
    """The page query over one board: arguments ``(board, after_seq, limit)``."""
    _PARAM: ClassVar[str]
    """The driver's placeholder (``?``, ``%s``)."""
    _BEGIN_READ: ClassVar[str]
    """The statement opening a read transaction that sees one snapshot."""
    _BOARD_EVENTS: ClassVar[str]
    """The page query over one board by board_seq: arguments ``(board, after, limit)``."""
    _LAST_BOARD_SEQ: ClassVar[str]
    """The greatest board_seq of one board: argument ``(board,)``."""
    _OPERATIONS: ClassVar[str]
    """SQL aggregate: the distinct ``operation`` values of the rows, joined by commas."""
    _NOT_WHOLE: ClassVar[str]
    """SQL true when ``score`` is not a whole number (the store's own spelling)."""
    _MEMBER_EVENTS: ClassVar[str]
    """The page query over one member of one board: ``(board, member, after_seq, limit)``."""
    _read_errors: tuple[type[Exception], ...]
    """The driver errors a read may raise (reported as JournalError)."""

    def __init__(
        self, writer: Writer, *, name: str, durability: Durability, max_delay_ms: int
    ) -> None:
        self._name = name
        self.durability: Final = durability
        self._reader_lock = threading.Lock()
        self._committer = GroupCommit(
            writer, name=name, durability=durability, max_delay_ms=max_delay_ms
        )

    # -- appending -----------------------------------------------------------------------

    @overload
    def append(self, events: Sequence[NewEvent], then: None = None) -> list[Event]: ...

    @overload
    def append(
        self, events: Sequence[NewEvent], then: Callable[[list[Event], list[bool]], R]
    ) -> R: ...

    def append(self, events: Sequence[NewEvent], then: Then | None = None) -> Any:
        """Append ``events`` atomically and return their records (see
        :meth:`ranked.journal.store.JournalStore.append`, also for ``then``). Every event is
        checked first: one bad event raises its typed error and nothing is appended."""
        batch = _checked(events)
        if not batch and then is None:
            return []
        return self._committer.append(batch, then)

    def enqueue(
        self,
        appends: Sequence[tuple[Sequence[NewEvent], Then | None]],
        on_settled: Callable[[], None],
        *,
        detached: bool = False,
    ) -> list[Ticket]:
        """Hand several appends to the committer at once, without waiting (the way an
        asyncio front batches its tasks' appends). Each is atomic on its own, as one
        :meth:`append`; their tickets come back at once, and ``on_settled()`` is called
        once, on the committer thread, when every one of them is settled: read each
        ticket's ``result`` (or ``error``) then. All events are checked first: one bad
        event raises its typed error and nothing is queued. ``on_settled`` must not raise
        nor wait for this journal. ``detached``: nobody waits for them (a record written
        behind its answer): until they are written, :meth:`committer_busy` is True."""
        checked = [(_checked(events), then) for events, then in appends]
        return self._committer.enqueue(checked, on_settled, detached)

    def flush(self) -> None:
        """Commit everything appended so far (only ``batch`` mode has anything to do)."""
        self._committer.flush()

    def native_lane(self) -> NativeLane | None:
        """The store's native lane (:mod:`ranked.journal.lane`); None: this store has none
        (only SQLite's has)."""
        return None

    def lane_possible(self) -> bool:
        """Whether :meth:`native_lane` can give a lane (without starting one)."""
        return False

    def lane_counts(self) -> tuple[int, int]:
        """(events, commits) the native lane wrote, (0, 0) before it starts or without one
        (it never starts one)."""
        return 0, 0

    def committer_busy(self) -> bool:
        """Whether detached appends (:meth:`enqueue` with ``detached``) are queued and not
        written yet: a writer whose events must be journaled after them, such as the
        native lane's, then takes its turn behind them. O(1)."""
        return self._committer.detached > 0

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
        left = limit
        while left is None or left > 0:
            page = _READ_PAGE if left is None else min(_READ_PAGE, left)
            if board is None:
                rows = self._query(self._READ_ALL, (after, page))
            else:
                rows = self._query(self._READ_BOARD, (board, after, page))
            event = None
            for row in rows:
                event = event_from_row(row)
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

    def board_events(self, board: str, after: int = 0) -> Iterator[Event]:
        """The committed events of ``board`` with ``board_seq > after``, in order. Read in
        pages of 512 rows, each an index range scan."""
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise OutOfRangeError(f"after must be an int >= 0, not {after!r}")
        while True:
            rows = self._query(self._BOARD_EVENTS, (board, after, _READ_PAGE))
            for row in rows:
                event = event_from_row(row)
                after = event.board_seq
                yield event
            if len(rows) < _READ_PAGE:
                return

    def member_events(self, board: str, member: bytes, limit: int | None = None) -> list[Event]:
        """The committed events of ``member`` on ``board``, in seq order, at most ``limit``
        (the store's ``_MEMBER_EVENTS``: on PostgreSQL an index range scan, O(log n + k);
        on SQLite one index seek per run of its member index and a scan of the journal's
        tail after the last run)."""
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
        ):
            raise PageSizeError(f"limit must be None or an int >= 0, not {limit!r}")
        found: list[Event] = []
        after = 0
        while limit is None or len(found) < limit:
            page = _READ_PAGE if limit is None else min(_READ_PAGE, limit - len(found))
            rows = self._query(self._MEMBER_EVENTS, (board, member, after, page))
            found += (event_from_row(row) for row in rows)
            if len(rows) < page:
                break
            after = found[-1].seq
        return found

    def aggregate_scores(
        self, board: str, high_first: bool
    ) -> tuple[int, list[tuple[bytes, float]]] | None:
        """Every member's score folded in SQL over the board's events (one pair per
        member, in no particular order: the engine's bulk load sorts them faster than
        SQL does), and the last ``board_seq`` folded; None when the events need a
        replay. The fold follows the operations found: only ``incr`` / ``decr``: their
        sum (every score whole and every sum below 2**53, so the order of the additions
        cannot change a result); only ``best``: the greatest (``high_first``) or least
        score; only ``set``: the last one. Records (``config``, ``archive``) fold to
        nothing. All in one read transaction (one snapshot of the journal): a pass over
        the board's events, then a GROUP BY (a sort on SQLite, an index on PostgreSQL)."""
        try:
            with self._reader_lock:
                self._execute_read(self._BEGIN_READ)
                try:
                    return self._aggregate(board, high_first)
                finally:
                    self._execute_read("COMMIT")
        except self._read_errors as error:
            raise JournalError(f"{self._name} cannot be read: {error}") from error

    def _aggregate(
        self, board: str, high_first: bool
    ) -> tuple[int, list[tuple[bytes, float]]] | None:
        """:meth:`aggregate_scores` inside its read transaction (the reader lock held)."""
        query = self._fetch
        p = self._PARAM
        ((found, count, largest, fractions),) = query(
            f"SELECT {self._OPERATIONS}, count(score), max(abs(score)),"
            f" sum(CASE WHEN {self._NOT_WHOLE} THEN 1 ELSE 0 END)"
            f" FROM events WHERE board = {p}",
            (board,),
        )  # one pass: what a sum needs to be exact
        ops = set(str(found or "").split(",")) - _RECORDS - {""}
        if ops and ops <= {"incr", "decr"}:
            fold = "sum"
        elif ops == {"best"}:
            fold = "max" if high_first else "min"
        elif ops == {"set"}:
            fold = "last"
        else:
            return None
        ((last_seq,),) = query(self._LAST_BOARD_SEQ, (board,))
        last = int(cast(int, last_seq or 0))
        total = float(cast(float, largest or 0)) * int(cast(int, count))
        if fold == "sum" and (fractions or total >= 2.0**53):
            return None
        if fold == "last":
            sql = (
                f"SELECT member, score + 0.0 FROM events WHERE board = {p} AND seq IN"
                f" (SELECT max(seq) FROM events WHERE board = {p} AND member IS NOT NULL"
                " GROUP BY member)"
            )
            rows = query(sql, (board, board))
        else:
            value = (
                "sum(CASE WHEN operation = 'decr' THEN -score ELSE score END)"
                if fold == "sum"
                else f"{fold}(score)"
            )
            sql = (
                f"SELECT member, {value} + 0.0 FROM events WHERE board = {p}"
                " AND member IS NOT NULL GROUP BY member"
            )
            rows = query(sql, (board,))
        return last, self._pairs(rows)

    def _pairs(self, rows: list[tuple[object, ...]]) -> list[tuple[bytes, float]]:
        """(member, score) pairs of rows as the driver returns them."""
        return [(bytes(cast(bytes, m)), float(cast(float, v))) for m, v in rows]

    def event_by_key(self, board: str, key: str) -> Event | None:
        """The committed event of ``board`` with idempotency key ``key``, if any. O(log n)."""
        p = self._PARAM
        rows = self._query(
            f"SELECT {COLUMNS} FROM events WHERE board = {p} AND key = {p}", (board, key)
        )
        return event_from_row(rows[0]) if rows else None

    def keys_with_prefix(self, board: str, prefix: str) -> list[str]:
        """The idempotency keys of ``board``'s events that start with ``prefix``, sorted.
        O(log n + k): a range of the (board, key) index."""
        if not isinstance(prefix, str) or not prefix:
            raise JournalConfigError(f"prefix must be a non-empty str, not {prefix!r}")
        p = self._PARAM
        rows = self._query(
            f"SELECT key FROM events WHERE board = {p} AND key >= {p} AND key < {p} ORDER BY key",
            (board, prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)),
        )
        return [str(row[0]) for row in rows]

    def removed_after(self, board: str, after: int) -> set[bytes]:
        """The members of ``board`` removed by events after ``seq`` ``after``: an index
        range scan over the board's events after it."""
        p = self._PARAM
        rows = self._query(
            f"SELECT DISTINCT member FROM events WHERE board = {p} AND seq > {p}"
            " AND operation = 'remove'",
            (board, after),
        )
        return {bytes(cast(bytes, row[0])) for row in rows}

    def last_board_event(self, board: str, operation: str) -> Event | None:
        """``board``'s newest board-wide event (no member) of ``operation``, if any: an
        index range over the board's board-wide events (board_seq follows seq within a
        board)."""
        p = self._PARAM
        rows = self._query(
            f"SELECT {COLUMNS} FROM events WHERE board = {p} AND member IS NULL"
            f" AND operation = {p} ORDER BY board_seq DESC LIMIT 1",
            (board, operation),
        )
        return event_from_row(rows[0]) if rows else None

    def boards(self) -> list[str]:
        """The names of the boards with events, sorted (one pass over the journal)."""
        return sorted(str(row[0]) for row in self._query("SELECT DISTINCT board FROM events", ()))

    def last_clear(self, board: str, before: int) -> int:
        """The ``board_seq`` of ``board``'s last ``clear`` event before ``before`` (0:
        none). Board-wide events have no member: an index range scan over those only."""
        p = self._PARAM
        ((seq,),) = self._query(
            f"SELECT max(board_seq) FROM events WHERE board = {p} AND member IS NULL"
            f" AND operation = 'clear' AND board_seq < {p}",
            (board, before),
        )
        return 0 if seq is None else int(seq)  # type: ignore[call-overload]

    def last_board_seq(self, board: str) -> int:
        """The greatest committed ``board_seq`` of ``board``, 0 when it has none. O(log n)."""
        ((seq,),) = self._query(self._LAST_BOARD_SEQ, (board,))
        return 0 if seq is None else int(seq)  # type: ignore[call-overload]

    def _query(self, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        """The rows of one read; a driver error (a damaged file, a lost server) raises
        :class:`JournalError`."""
        try:
            with self._reader_lock:
                return self._fetch(sql, args)
        except self._read_errors as error:
            raise JournalError(f"{self._name} cannot be read: {error}") from error

    _reader: Any
    """The reading connection (the store's driver)."""
    _writer: SQLWriter[Any]
    """The committer's connection."""

    def _execute_read(self, sql: str) -> None:
        """Run a statement with no rows on the reading connection (BEGIN, COMMIT)."""
        self._reader.execute(sql)

    def _fetch(self, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        """All rows of ``sql`` on the reading connection (called under the reader lock)."""
        rows: list[tuple[object, ...]] = self._reader.execute(sql, args).fetchall()
        return rows

    # -- closing -------------------------------------------------------------------------

    @property
    def stats(self) -> CommitStats:
        """The committer's counters: commits, events, commit latency, round sizes."""
        return self._committer.stats

    def close(self) -> None:
        """Commit what is pending, stop the committer and close the connections. Idempotent.
        Appending after close raises :class:`JournalError`."""
        if self._committer.close():
            with self._reader_lock:
                self._close_connections()

    def _close_connections(self) -> None:
        """Close the reading and the writing connection."""
        self._reader.close()
        self._writer.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _checked(events: Sequence[NewEvent]) -> list[NewEvent]:
    batch = list(events)
    for event in batch:
        check_event(event)
    return batch
