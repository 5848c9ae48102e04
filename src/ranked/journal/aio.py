"""The journal's asyncio front: many tasks appending through one committer thread at the
cost of about one thread hand-off per event-loop iteration, not one per append.

:class:`AsyncAppender` collects the appends its loop's tasks make in one loop iteration
and hands them to the store's committer at once (:meth:`JournalBase.enqueue`: each append
still atomic and idempotent on its own). The committer wakes the loop once for all of them
(``loop.call_soon_threadsafe``); then, on the loop, each append's ``then_async(records,
fresh)`` is awaited in turn, strictly in seq order (across hand-offs too: one finishes
before the next starts), and each task gets its own result or exception. While one
hand-off is with the committer, new appends wait for it to come back and go together in
the next one (as the committer's own group commit does): so a ``then_async`` that
suspends, answering one task per loop iteration, does not turn into one hand-off per
append.

Cost per append: the events' checks on the loop, a share of one hand-off and one wake-up,
one future. Atomicity and durability are the store's (:meth:`JournalStore.append`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, overload

from ._group_commit import Ticket
from .events import Event, NewEvent, check_event
from .store import JournalStore

__all__ = ["Appender", "AsyncAppender"]

R = TypeVar("R")

ThenAsync = Callable[[list[Event], list[bool]], Awaitable[Any]]


class _Append:
    """One task's append: its events, its ``then_async``, the future it waits on, and
    (once handed over) the committer's ticket."""

    __slots__ = ("events", "future", "then_async", "ticket")

    def __init__(
        self, events: list[NewEvent], then_async: ThenAsync | None, future: asyncio.Future[Any]
    ) -> None:
        self.events = events
        self.then_async = then_async
        self.future = future
        self.ticket: Ticket | None = None


class AsyncAppender:
    """Appends to ``store`` from the tasks of one event loop (bound to the loop of its
    first :meth:`append`; another loop may take it over once that one is closed)."""

    def __init__(self, store: JournalStore) -> None:
        self._store = store
        self._loop: asyncio.AbstractEventLoop | None = None
        self._gathering: list[_Append] = []  # appends not handed over yet
        self._handing = False  # a hand-off is scheduled on the loop, or with the committer
        self._durable: deque[list[_Append]] = deque()  # settled hand-offs, in seq order
        self._applier: asyncio.Task[None] | None = None

    @overload
    async def append(self, events: Sequence[NewEvent], then_async: None = None) -> list[Event]: ...

    @overload
    async def append(
        self,
        events: Sequence[NewEvent],
        then_async: Callable[[list[Event], list[bool]], Awaitable[R]],
    ) -> R: ...

    async def append(self, events: Sequence[NewEvent], then_async: ThenAsync | None = None) -> Any:
        """Append ``events`` atomically; once they are as durable as the store's mode
        promises, await ``then_async(records, fresh)`` (on this loop, after the
        ``then_async`` of every earlier append of this appender has returned) and return
        its value, or the records without one; raise what it raised, or the append's
        :class:`~ranked.errors.JournalError`. A bad event raises its typed error here and
        nothing is appended. A cancelled caller does not cancel its append, nor its
        ``then_async``: the events may be durable already."""
        batch = list(events)
        for event in batch:
            check_event(event)
        if not batch and then_async is None:
            return []
        loop = self._bind()
        item = _Append(batch, then_async, loop.create_future())
        self._gathering.append(item)
        if not self._handing:
            self._handing = True
            loop.call_soon(self._hand_over)
        return await item.future

    def _bind(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            if self._loop is not None and not self._loop.is_closed():
                raise RuntimeError("this AsyncAppender is bound to another event loop")
            self._loop = loop
            self._gathering = []
            self._handing = False
            self._durable.clear()
            self._applier = None
        return loop

    def _hand_over(self) -> None:
        """Hand the gathered appends to the committer in one go."""
        items, self._gathering = self._gathering, []
        if not items:
            self._handing = False
            return
        loop = self._loop
        assert loop is not None

        def on_settled() -> None:  # on the committer thread
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(self._settled, items)

        try:
            tickets = self._store.enqueue([(item.events, None) for item in items], on_settled)
        except Exception as error:  # closed or failed journal: these appends fail
            for item in items:
                _fail(item.future, error)
            self._handing = False
            return
        for item, ticket in zip(items, tickets, strict=True):
            item.ticket = ticket

    def _settled(self, items: list[_Append]) -> None:
        """On the loop: a hand-off is settled; apply it after those before it (at once if
        nothing is being applied and it has no ``then_async`` to await), and hand over
        what was gathered meanwhile (after the tasks this wakes have appended again)."""
        loop = self._loop
        assert loop is not None
        if self._applier is None and not any(item.then_async for item in items):
            for item in items:
                _answer(item)
        else:
            self._durable.append(items)
            if self._applier is None:
                self._applier = loop.create_task(self._apply())
        loop.call_soon(self._hand_over)

    async def _apply(self) -> None:
        """Settle each append in seq order, awaiting its ``then_async`` to the end before
        the next one's starts. Cancelled (its loop is shutting down), it cancels the
        appends it has not settled: their events may be durable, their ``then_async``
        will not run."""
        try:
            while self._durable:
                for item in self._durable.popleft():
                    await self._apply_one(item)
        finally:
            self._applier = None
            while self._durable:
                for item in self._durable.popleft():
                    item.future.cancel()

    @staticmethod
    async def _apply_one(item: _Append) -> None:
        ticket = item.ticket
        assert ticket is not None and ticket.settled
        if ticket.error is not None or item.then_async is None:
            _answer(item)
            return
        try:
            result = await item.then_async(ticket.records, ticket.fresh)
        except asyncio.CancelledError:
            item.future.cancel()
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the applier itself is cancelled
        except Exception as error:  # the caller's
            _fail(item.future, error)
        else:
            _succeed(item.future, result)


def _answer(item: _Append) -> None:
    """Answer an append that has no ``then_async`` to await: its records or its error."""
    ticket = item.ticket
    assert ticket is not None and ticket.settled
    if ticket.error is not None:
        _fail(item.future, ticket.error)
    else:
        _succeed(item.future, ticket.records)


def _succeed(future: asyncio.Future[Any], value: object) -> None:
    if not future.done():  # a cancelled caller
        future.set_result(value)


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


class Appender:
    """The blocking twin of :class:`AsyncAppender` (what the generated blocking board
    uses): the store's own :meth:`~ranked.journal.store.JournalStore.append`, whose
    ``then`` runs on the committer thread in commit order."""

    def __init__(self, store: JournalStore) -> None:
        self.append = store.append
