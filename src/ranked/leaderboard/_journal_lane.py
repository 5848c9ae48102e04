"""A journaled board's plain submissions through its store's native lane
(:mod:`ranked.journal.lane`).

A one-member submission with no idempotency key, no instant and no tie value, on a board
whose backend has a native one-call writer that answers at once (``memory://`` on the C
engine) and whose store has a lane (SQLite), goes to the lane in one C call; the lane
writes it, and once it is durable applies it through that writer and answers with the
:class:`~ranked.leaderboard.results.Submission`. Everything else takes the board's general
path, and so does an event the writer does not apply, with the numbers the lane gave it,
in order (the writer refuses every later event of the board until it is in: each event is
applied once, in ``board_seq`` order).

- asyncio (:class:`LaneSubmitter`, :func:`lane_for`): the call returns a future; the lane
  applies on the loop; the general path's events are applied one after the other by one
  task, which answers their futures.
- blocking (:class:`BlockingLaneSubmitter`, :func:`blocking_lane_for`, what the generated
  blocking board uses): the call waits; the first waiting thread to get the GIL applies
  every written event in commit order, calling the general path at once where needed.

An event the index already held (another writer's catch-up applied it) answers with the
member's standing, as the general path does. While the store's committer holds detached
appends not written yet (the write guard's verdicts, handed over without waiting), a
submission takes the general path too, behind them: so the journal keeps the order in
which one caller made its calls, whichever writer wrote them (a caller that waits for its
append is ordered by that wait).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..journal.events import Event, recorded
from ..journal.lane import NativeLane
from ._fast import ask_writer
from ._plan_core import from_ms

if TYPE_CHECKING:
    from ._async.journaled import AsyncBoardJournal
    from ._sync.journaled import BoardJournal

__all__ = ["BlockingLaneSubmitter", "LaneSubmitter", "blocking_lane_for", "lane_for"]


def lane_for(journal: AsyncBoardJournal) -> LaneSubmitter | None:
    """The asyncio board's lane submitter, None when its store can have no lane (the lane
    itself starts at the board's first submission it can take)."""
    return LaneSubmitter(journal) if journal.store.lane_possible() else None


def blocking_lane_for(journal: BoardJournal) -> BlockingLaneSubmitter | None:
    """The blocking board's lane submitter, None when its store can have no lane."""
    return BlockingLaneSubmitter(journal) if journal.store.lane_possible() else None


class _Context:
    """What both submitters share: the board's context for the C calls, made once the
    board's sequenced writer exists, and the member's standing for an event the index
    already held (``standing``, set by the board: ``members -> [Submission]``)."""

    def __init__(self, journal: AsyncBoardJournal | BoardJournal) -> None:
        self._journal = journal
        self._lane: NativeLane | None = None
        self._context: tuple[Any, ...] | None = None
        self._busy: Callable[[], bool] = _never
        self._off = False
        self.standing: Callable[..., Any] | None = None

    def _taken(self) -> tuple[Any, ...] | None:
        """The C calls' context when the lane may take a call now; None: the general
        path (no context yet or for good, or detached appends the call must come after)."""
        context = self._context
        if context is None:
            context = self._ready_context()
        return None if context is None or self._busy() else context

    def _ready_context(self) -> tuple[Any, ...] | None:
        """The C calls' context once the board's sequenced writer exists (the general path
        asks for it on the board's first write); None until then, and for good when the
        board, the backend or the store has none."""
        if self._off:
            return None
        journal = self._journal
        if not journal.has_writer():
            self._off = not journal.may_have_writer()
            return None
        journaling = journal.journaling
        writer, again = ask_writer(
            journal.steps.backend, journaling.plan, journaling.seq_key, now=True
        )
        lane = journal.store.native_lane()
        if writer is None or lane is None or self.standing is None:
            self._off = not again or lane is None
            return None
        self._lane = lane
        self._busy = journal.store.committer_busy
        self._context = (
            journaling.board,
            journaling.plan.core.config.operator,
            writer,
            self._fall_back,
            self._applied,
        )
        return self._context

    def _now_us(self) -> int:
        return self._journal.journaling.plan.core.now_ms() * 1000

    def _record(self, seq: int, board_seq: int, *call: Any) -> tuple[list[Event], Any]:
        """The lane's event as the general path records it, and its prepared request:
        ``call`` is ``(member, score, operator, at_us, actor, reason)``. The lane takes
        less than the general path does, so this never refuses; should it, the caller
        marks the event applied with no effect, so that later events do not wait on it."""
        member, score, operator, at_us, actor, reason = call
        events, prepared = self._journal.journaling.submit(
            ((member, score),), operator, from_ms(at_us // 1000), None, None, actor, reason
        )
        return [recorded(events[0], seq, board_seq)], prepared

    def _fall_back(self, *entry: Any) -> Any:
        raise NotImplementedError

    def _applied(self, count: int) -> None:
        raise NotImplementedError


class LaneSubmitter(_Context):
    """An asyncio board's side of the lane."""

    def __init__(self, journal: AsyncBoardJournal) -> None:
        super().__init__(journal)
        self._journal: AsyncBoardJournal = journal
        self._waiting: deque[tuple[Any, ...]] = deque()
        self._worker: asyncio.Task[None] | None = None
        self._snapshotting = False

    def submit(self, member: Any, score: Any, operator: Any, actor: Any, reason: Any) -> Any:
        """The future of the submission's Submission, or None when the lane does not take
        it (nothing queued: run the general path). Called on the loop."""
        context = self._taken()
        if context is None:
            return None
        lane = self._lane.for_loop()  # type: ignore[union-attr]
        if lane is None:
            return None
        return lane.submit(context, member, score, operator, actor, reason, self._now_us())

    def _applied(self, count: int) -> None:
        """On the loop: ``count`` events were applied by the writer (the periodic snapshot,
        when due)."""
        if self._journal.count_applied(count) and not self._snapshotting:
            self._snapshotting = True
            asyncio.get_running_loop().create_task(self._snapshot())

    async def _snapshot(self) -> None:
        try:
            await self._journal.snapshot_behind()
        finally:
            self._snapshotting = False

    def _fall_back(self, *entry: Any) -> None:
        """On the loop: a durable event the writer did not apply, ``(seq, board_seq,
        member, score, operator, at_us, actor, reason, future)``, to the general path in
        order."""
        self._waiting.append(entry)
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        try:
            while self._waiting:
                await self._general(*self._waiting.popleft())
        finally:
            self._worker = None

    async def _general(self, seq: int, board_seq: int, *entry: Any) -> None:
        """Apply one event through the board's general path and answer its future (the
        entry's last item; before it, the call as :meth:`_record` takes it)."""
        journal, future = self._journal, entry[-1]
        try:
            try:
                records, prepared = self._record(seq, board_seq, *entry[:-1])
            except Exception:
                await journal.mark_refused(board_seq)
                raise
            found = await journal.apply_recorded(records, prepared)
            if found is None:  # the index held it already
                assert self.standing is not None
                found = await self.standing([entry[0]])
        except Exception as error:
            _fail(future, error)
            return
        if not future.done():
            future.set_result(found[0])


class BlockingLaneSubmitter(_Context):
    """A blocking board's side of the lane."""

    def __init__(self, journal: BoardJournal) -> None:
        super().__init__(journal)
        self._journal: BoardJournal = journal

    def submit(self, member: Any, score: Any, operator: Any, actor: Any, reason: Any) -> Any:
        """The submission's Submission once durable and applied, or None when the lane
        does not take it (nothing queued: run the general path)."""
        context = self._taken()
        if context is None:
            return None
        lane = self._lane.blocking  # type: ignore[union-attr]
        return lane.submit_wait(context, member, score, operator, actor, reason, self._now_us())

    def _applied(self, count: int) -> None:
        """On the applying thread: ``count`` events were applied by the writer."""
        journal = self._journal
        if journal.count_applied(count):
            journal.snapshot_behind()

    def _fall_back(self, seq: int, board_seq: int, *entry: Any) -> Any:
        """On the applying thread, in commit order: apply one event through the board's
        general path (the entry as :meth:`LaneSubmitter._fall_back` gets it, its waiter
        None); its Submission (the waiting caller gets it, or what this raises)."""
        journal = self._journal
        try:
            records, prepared = self._record(seq, board_seq, *entry[:-1])
        except Exception:
            journal.mark_refused(board_seq)
            raise
        found = journal.apply_recorded(records, prepared)
        if found is None:  # the index held it already
            assert self.standing is not None
            found = self.standing([entry[0]])
        return found[0]


def _never() -> bool:
    return False


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
