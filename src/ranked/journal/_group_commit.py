"""Group commit: the committer thread every journal store writes through.

A store owns one writing connection and hands it to a :class:`GroupCommit` as a
:class:`Writer` (its BEGIN, a statement, finding a keyed record, inserting events, and its
driver's error classes). Appenders queue :class:`Ticket` s; the committer takes everything
queued, writes it in one transaction and commits as the durability mode says: concurrent
appends share one commit (one fsync). A round's new events go to the store in one
:meth:`Writer.insert_many`; should that fail, the round is undone and each append written
again in its own savepoint, so that an append that fails is undone alone.

An append is *settled* (as durable as the mode promises, or failed):

- ``always`` / ``none``: after the COMMIT of its group;
- ``batch``: right after its savepoint is released; the transaction is committed at least
  every ``max_delay_ms``, and at once on a flush or close.

The committer then calls its ``then(records, fresh)`` at once (if it succeeded and has
one); appenders are woken together once the round's writes are done (in ``batch`` mode
before its commit), so that they do not contend with the committer while it writes.

Order: appends are written in queue order (so in seq order) and settled in that order on
the one committer thread, so the ``then`` of one append has returned before the next one's
starts, across groups too.

Failures never strand an appender: a driver error inside an append's savepoint fails that
append alone (:class:`~ranked.errors.JournalError`); one outside it (BEGIN, COMMIT, a
savepoint statement) rolls the group back and fails its appends not yet settled; anything
else stops the committer, fails everything queued, and later appends raise JournalError.
An exception raised by a ``then`` goes to that append's caller only.

Cost: one hand-off (a lock and a notify) per :meth:`GroupCommit.append` or
:meth:`GroupCommit.enqueue` call; O(k log n) writes for an append of k events into a
journal of n; one COMMIT per group.
"""

from __future__ import annotations

import _thread
import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from ..errors import JournalConfigError, JournalError
from .events import Event, NewEvent, recorded
from .stats import CommitStats
from .store import Durability

__all__ = ["MAX_DELAY_MS", "GroupCommit", "Then", "Ticket", "Writer", "check_options"]

MAX_DELAY_MS: Final = 60_000
"""The longest ``batch`` commit delay, in milliseconds."""

Then = Callable[[list[Event], list[bool]], Any]
"""What runs on the committer thread once an append is durable: ``then(records, fresh)``."""


class Writer(Protocol):
    """A store's writing connection, as the committer uses it (on its thread only)."""

    errors: tuple[type[Exception], ...]
    """The driver's errors: a statement that raised one failed."""

    statement_atomic: bool
    """True when a failed statement undoes only itself and the transaction goes on
    (SQLite); False when it spoils the transaction (PostgreSQL: a savepoint is needed)."""

    def begin(self) -> None:
        """Open a write transaction (and take what the store needs to commit in seq order)."""
        ...

    def execute(self, sql: str) -> None:
        """Run one statement without arguments (SAVEPOINT, RELEASE, COMMIT, ROLLBACK)."""
        ...

    def find(self, board: str, key: str) -> Event | None:
        """The record of ``board``'s event with idempotency key ``key``, if there is one."""
        ...

    def insert(self, event: NewEvent) -> tuple[int, int]:
        """Insert ``event`` and return the seq and the board_seq the store gave it."""
        ...

    def insert_many(self, events: list[NewEvent]) -> list[tuple[int, int]]:
        """Insert ``events`` in order (what :meth:`insert` does for each, in fewer trips to
        the driver) and return their numbers."""
        ...

    def upkeep(self) -> None:
        """The store's own upkeep, between transactions, after the appenders of the last
        commit are woken (it may run a transaction of its own). A driver error is ignored:
        the next round asks again."""
        ...

    def shared_failure(self) -> str | None:
        """The store's failure recorded by another writer of the same file (the native
        lane's), or None."""
        ...

    def share_failure(self, why: str) -> None:
        """Record this committer's failure for the other writers of the same file."""
        ...


def check_options(durability: object, max_delay_ms: object) -> None:
    """Raise :class:`~ranked.errors.JournalConfigError` unless ``durability`` is a mode and
    ``max_delay_ms`` an int in [1, :data:`MAX_DELAY_MS`]."""
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


class Ticket:
    """One queued append (``events`` None: a flush). The committer fills in ``records`` and
    ``fresh``, then ``result`` (``then``'s return value, or ``records``) or ``error``, and
    calls ``wake`` once; after that nothing changes it."""

    __slots__ = (
        "detached",
        "error",
        "events",
        "fresh",
        "records",
        "result",
        "settled",
        "then",
        "wake",
    )

    def __init__(
        self,
        events: list[NewEvent] | None,
        then: Then | None,
        wake: Callable[[], None],
        detached: bool = False,
    ) -> None:
        self.events = events
        self.detached = detached
        self.then = then
        self.wake = wake
        self.records: list[Event] = []
        self.fresh: list[bool] = []
        self.result: Any = None
        self.error: BaseException | None = None
        self.settled = False


class _Countdown:
    """Calls ``on_settled`` when the last of ``count`` tickets is settled (on the committer
    thread only, so no lock)."""

    __slots__ = ("left", "on_settled")

    def __init__(self, count: int, on_settled: Callable[[], None]) -> None:
        self.left = count
        self.on_settled = on_settled

    def one(self) -> None:
        self.left -= 1
        if not self.left:
            on_settled, self.on_settled = self.on_settled, _settled_already
            on_settled()  # dropped first: it may hold the tickets, which hold this countdown


def _gate() -> _thread.LockType:
    """A lock already held: acquiring it again waits until someone releases it."""
    gate = _thread.allocate_lock()
    gate.acquire()
    return gate


def _settled_already() -> None:
    """A countdown's ``on_settled`` once it has been called."""


class GroupCommit:
    """The committer thread of one store (see the module docstring)."""

    def __init__(
        self, writer: Writer, *, name: str, durability: Durability, max_delay_ms: int
    ) -> None:
        check_options(durability, max_delay_ms)
        self._writer = writer
        self._failures: tuple[type[Exception], ...] = (*writer.errors, JournalError)
        self._name = name
        self._ack_at_savepoint = durability == "batch"
        self._delay_s = max_delay_ms / 1000
        self._deadline = 0.0  # batch: when the open transaction must be committed
        self._cond = threading.Condition()
        self._queue: list[Ticket] = []
        self._closing = False
        self._failure: BaseException | None = None
        self._acknowledged_open = False
        """batch mode: appends of the open transaction were acknowledged (a failed commit
        would lose them: the journal then refuses every later append)."""
        self.stats = CommitStats()
        """What this committer has done (read from any thread; see CommitStats)."""
        self.detached = 0
        """Detached appends (see :meth:`enqueue`) queued and not settled yet: read from any
        thread by a writer whose events must be journaled after them (the store's native
        lane's)."""
        self._thread = threading.Thread(target=self._run, name="ranked-journal", daemon=True)
        self._thread.start()

    # -- handing appends over ------------------------------------------------------------

    def append(self, events: list[NewEvent], then: Then | None) -> Any:
        """Queue one append and wait until it is settled: ``then``'s return value (or the
        records), or raise its error."""
        gate = _gate()
        ticket = Ticket(events, then, gate.release)
        self._wait(ticket, gate)
        return ticket.result

    def enqueue(
        self,
        appends: Sequence[tuple[list[NewEvent], Then | None]],
        on_settled: Callable[[], None],
        detached: bool = False,
    ) -> list[Ticket]:
        """Queue several appends in one hand-off, each atomic on its own, and return at once
        their tickets; ``on_settled()`` is called once, on the committer thread, when all of
        them are settled (it must not raise, nor wait for the journal). ``detached``: no
        caller waits for them (counted in :attr:`detached` until settled)."""
        if not appends:
            on_settled()
            return []
        countdown = _Countdown(len(appends), on_settled)
        tickets = [Ticket(events, then, countdown.one, detached) for events, then in appends]
        self._put(tickets)
        return tickets

    def flush(self) -> None:
        """Wait until everything queued before is committed."""
        gate = _gate()
        self._wait(Ticket(None, None, gate.release), gate)

    def _wait(self, ticket: Ticket, gate: _thread.LockType) -> None:
        """Queue ``ticket`` and block until the committer has woken it (released its
        ``gate``, a lock held since it was made: the cheapest wake-up there is, one C call
        on each side)."""
        if threading.get_ident() == self._thread.ident:
            raise JournalError(
                f"{self._name}: a then callback cannot append or flush and wait (the"
                " committer would wait for itself)"
            )
        self._put([ticket])
        gate.acquire()
        if ticket.error is not None:
            raise ticket.error

    def _put(self, tickets: list[Ticket]) -> None:
        with self._cond:
            if self._closing:
                raise JournalError(f"{self._name} is closed")
            if self._failure is not None:
                raise JournalError(f"{self._name} failed: {self._failure}")
            shared = self._writer.shared_failure()
            if shared is not None:
                raise JournalError(f"{self._name} failed: {shared}")
            self._queue += tickets
            self.detached += sum([ticket.detached for ticket in tickets])
            self._cond.notify()

    def close(self) -> bool:
        """Commit what is queued and stop the thread; False if it was closed already."""
        with self._cond:
            if self._closing:
                return False
            self._closing = True
            self._cond.notify()
        self._thread.join()
        return True

    # -- the committer thread ------------------------------------------------------------

    def _run(self) -> None:
        in_txn = False
        batch: list[Ticket] = []
        written: list[Ticket] = []  # to be settled after the commit
        settled: list[Ticket] = []  # settled in this round, to be woken together
        try:
            while True:
                with self._cond:
                    while not self._queue and not self._closing:
                        if not in_txn:
                            self._cond.wait()
                            continue
                        left = self._deadline - time.monotonic()
                        if left <= 0:
                            break
                        self._cond.wait(left)
                    batch, self._queue = self._queue, []
                    closing = self._closing
                try:
                    in_txn = self._round(batch, written, settled, in_txn, closing)
                    if not in_txn:
                        for ticket in written:
                            self._settle(ticket, settled)
                        written.clear()
                finally:
                    self._wake(settled)
                if not in_txn:
                    self._upkeep()
                batch = []
                if closing and not in_txn:
                    with self._cond:
                        if not self._queue:
                            return
        except BaseException as error:  # never leave an appender waiting forever
            with self._cond:
                self._failure = error
                stranded, self._queue = written + batch + self._queue, []
            for ticket in stranded:
                if not ticket.settled:
                    ticket.error = JournalError(f"{self._name} failed: {error}")
                self._settle(ticket, settled)
            self._wake(settled)
            raise

    def _round(
        self,
        batch: list[Ticket],
        written: list[Ticket],
        settled: list[Ticket],
        in_txn: bool,
        closing: bool,
    ) -> bool:
        """Write ``batch`` into the open transaction (opening one if needed) and commit
        when the mode asks; returns whether a transaction is still open. Settled tickets
        go to ``settled``; those to settle at the commit stay in ``written``."""
        writer = self._writer
        try:
            if not in_txn and any([ticket.events for ticket in batch]):
                writer.begin()
                in_txn = True
                self._deadline = time.monotonic() + self._delay_s
            flushing = False
            appends = [ticket for ticket in batch if ticket.events]
            self._write_all(appends)
            if appends:
                self.stats.written(sum([len(t.events or ()) for t in appends if t.error is None]))
            for ticket in batch:
                if ticket.events is None:
                    flushing = True
                    written.append(ticket)
                    continue
                if self._ack_at_savepoint and in_txn:
                    self._settle(ticket, settled)  # acknowledged now, before the commit
                    self._acknowledged_open = True
                else:
                    written.append(ticket)
            self._wake(settled)
            must_commit = (
                not self._ack_at_savepoint
                or closing
                or flushing
                or time.monotonic() >= self._deadline
            )
            if in_txn and must_commit:
                started = time.perf_counter()
                writer.execute("COMMIT")
                self.stats.committed(time.perf_counter() - started)
                in_txn = False
                self._acknowledged_open = False
        except writer.errors as error:
            with contextlib.suppress(*writer.errors):  # it may be gone already
                writer.execute("ROLLBACK")
            if self._acknowledged_open:  # acknowledged events are gone: stop here
                with self._cond:
                    self._failure = JournalError(
                        f"a commit failed after appends were acknowledged (batch mode): {error};"
                        " they are lost, and the journal takes no more appends (reopen it)"
                    )
                self._writer.share_failure(str(self._failure))
                self._acknowledged_open = False
            for ticket in written + batch:
                if not ticket.settled and ticket.error is None:
                    ticket.error = JournalError(f"{self._name} commit failed: {error}")
                self._settle(ticket, settled)
            written.clear()
            return False
        return in_txn

    def _write_all(self, tickets: list[Ticket]) -> None:
        """Write the appends of ``tickets`` (each with events): all of their new events in
        one :meth:`Writer.insert_many`. Should that fail, the round is undone and each
        append is written again on its own, so that only an append that fails fails (its
        ticket gets the error). A round of one event on a store whose failed statement
        undoes only itself (SQLite) needs no savepoint: its INSERT is the whole round."""
        if not tickets:
            return
        alone = len(tickets) == 1 and len(tickets[0].events or ()) == 1
        if alone and self._writer.statement_atomic:
            error = self._write_events(tickets)
        else:
            error = self._write_saved(tickets)
            if error is not None and len(tickets) > 1:
                for ticket in tickets:
                    self._write_all([ticket])
                return
        if error is not None:
            tickets[0].error = (
                error
                if isinstance(error, JournalError)
                else JournalError(f"{self._name} append failed: {error}")
            )

    def _write_saved(self, tickets: list[Ticket]) -> Exception | None:
        """:meth:`_write_events` inside a savepoint, undone if it fails: its error."""
        writer = self._writer
        writer.execute("SAVEPOINT append")
        error = self._write_events(tickets)
        if error is not None:
            writer.execute("ROLLBACK TO SAVEPOINT append")
        writer.execute("RELEASE SAVEPOINT append")
        return error

    def _write_events(self, tickets: list[Ticket]) -> Exception | None:
        """Insert the new events of ``tickets`` and fill in their records and ``fresh``
        flags (a keyed event whose key is taken, in the journal or earlier in this round,
        gets the earlier record); return the driver's or the journal's error instead."""
        writer = self._writer
        keyed: dict[tuple[str, str], Event | int] = {}
        new: list[NewEvent] = []
        slots: list[list[tuple[Event | int, bool]]] = []
        try:
            for ticket in tickets:
                slot: list[tuple[Event | int, bool]] = []
                for event in ticket.events or ():
                    if event.key is not None:
                        taken = keyed.get((event.board, event.key))
                        if taken is None:
                            taken = writer.find(event.board, event.key)
                        if taken is not None:
                            slot.append((taken, False))
                            continue
                        keyed[event.board, event.key] = len(new)
                    slot.append((len(new), True))
                    new.append(event)
                slots.append(slot)
            numbers = writer.insert_many(new)
        except self._failures as error:
            return error
        records = [recorded(event, *number) for event, number in zip(new, numbers, strict=True)]
        for ticket, slot in zip(tickets, slots, strict=True):
            ticket.records = [records[ref] if isinstance(ref, int) else ref for ref, _ in slot]
            ticket.fresh = [fresh for _, fresh in slot]
        return None

    def _upkeep(self) -> None:
        """The writer's upkeep; a driver error leaves it for the next round."""
        with contextlib.suppress(*self._writer.errors):
            self._writer.upkeep()

    def _wake(self, settled: list[Ticket]) -> None:
        """Wake the appenders of ``settled`` tickets, in order, and empty the list: together,
        after the writes of a round, so that woken appenders do not contend with the
        committer while it writes."""
        detached = sum([ticket.detached for ticket in settled])
        if detached:
            with self._cond:
                self.detached -= detached
        for ticket in settled:
            ticket.wake()
        settled.clear()

    def _settle(self, ticket: Ticket, settled: list[Ticket]) -> None:
        """Call the ticket's ``then`` (if it succeeded) and add it to ``settled`` (to be
        woken); once."""
        if ticket.settled:
            return
        if ticket.error is None:
            if ticket.then is None:
                ticket.result = ticket.records
            else:
                try:
                    ticket.result = ticket.then(ticket.records, ticket.fresh)
                except BaseException as error:  # the caller's, not the committer's
                    ticket.error = error
        ticket.settled = True
        settled.append(ticket)
