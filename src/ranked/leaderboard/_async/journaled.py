"""``AsyncBoardJournal``: a journaled board's write path, restore and snapshots (asyncio;
the source of ``_sync/journaled.py``, generated from this file).

A write call becomes an append of its events (:mod:`.._plan_journal`); the journal
calls back once they are durable, in commit order, and the callback applies them to the
index (:meth:`AsyncBoardJournal.write`): write-ahead, each event exactly once, in order.
Opening restores the index (:meth:`restore`): the newest good snapshot when the index is
empty and the board has snapshots, then every event it lacks. A snapshot's dump is taken
on the board's own path (one atomic step); its file is written by the one thread that
writes snapshot files, in the order they were asked for, so that a periodic snapshot's
file (tens of milliseconds for a big board, an fsync among them) holds no apply after it,
and an older snapshot is never written after a newer one (its prune would delete the newer).
"""

from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Final

from ...errors import InvalidScoreError, OutOfRangeError, UnsupportedOperationError
from ...journal.aio import AsyncAppender
from ...journal.events import Event, NewEvent
from ...journal.snapshots import SnapshotStore
from ...journal.store import JournalStore
from .._fast import ask_writer
from .._journal_events import decode
from .._journal_lane import lane_for
from .._off_loop import off_loop
from .._plan_core import run_async
from .._plan_journal import APPLIED, Gap, Journaling
from .._plan_write import Prepared
from .._requests import SubmitRequest
from .._steps import BoundSteps

__all__ = ["AsyncBoardJournal"]

_log = logging.getLogger("ranked.journal")

_REFUSALS: Final = (InvalidScoreError, OutOfRangeError)
"""What a step raises when the index cannot take an event's value in its current state
(the call's arguments were checked before the event was journaled)."""

_ANSWERS: Final = 4096
"""How many answers of keyed writes a board keeps for retries (the newest)."""


class AsyncBoardJournal:
    """The journal of one board: its store, the order of applies, its snapshots."""

    def __init__(
        self,
        store: JournalStore,
        journaling: Journaling,
        steps: BoundSteps,
        snapshots: SnapshotStore | None,
        snapshot_every: int | None,
    ) -> None:
        self.store = store
        self.journaling = journaling
        self.steps = steps
        self.snapshots = snapshots
        self.snapshot_every = snapshot_every
        self._since_snapshot = 0
        self._answers: OrderedDict[str, Any] = OrderedDict()
        self._appender = AsyncAppender(store)
        self._eligible = True
        """Whether to ask the backend for the board's sequenced one-call submit (see
        .._fast): until it answers None, or the board is not eligible."""
        self._writer: Any = None
        self._writing: Future[Any] | None = None
        """The board's last snapshot file asked of the writer thread (a periodic snapshot
        waits for it to be done before it asks for another)."""
        self.lane = lane_for(self)
        """The board's way through the store's native lane (asyncio; None: none)."""

    # -- writes ---------------------------------------------------------------------------

    async def write(self, events: list[NewEvent], prepared: Prepared | None = None) -> Any:
        """Append ``events`` (one call's), then, once durable, apply them: the call's
        result. A retried keyed call gets the first call's answer."""

        async def apply(records: list[Event], fresh: list[bool]) -> Any:
            if not all(fresh):
                return self._answers.get(records[0].key or "")
            result = await self.apply_recorded(records, prepared)
            key = records[0].key
            if key is not None:
                self._answers[key] = result
                if len(self._answers) > _ANSWERS:
                    self._answers.popitem(last=False)
            return result

        return await self._appender.append(events, apply)

    async def apply_recorded(self, records: Sequence[Event], prepared: Prepared | None) -> Any:
        journaling = self.journaling
        while True:
            try:
                direct = journaling.direct(records, prepared)
                if direct is not None:  # one request, no window to register: one step
                    result: Any = await self._one_call(direct, prepared)
                    if result is None:  # the general step: errors, APPLIED, a Gap
                        answer = await self.steps.submit_seq(*direct)
                        result = journaling.finish_direct(prepared, answer)
                else:
                    result = await run_async(self.steps, journaling.apply(records, prepared))
            except _REFUSALS:
                await self._refused(records)
                raise
            if isinstance(result, Gap):  # earlier events are missing: apply them first
                await self.catch_up(result.applied, before=records[0].board_seq)
                continue
            if self.count_applied(len(records)):
                await self.snapshot_behind()
            return None if result is APPLIED else result

    def count_applied(self, count: int) -> bool:
        """``count`` more events are applied: whether the periodic snapshot is due."""
        self._since_snapshot += count
        return (
            self.snapshots is not None
            and self.snapshot_every is not None
            and self._since_snapshot >= self.snapshot_every
            and (self._writing is None or self._writing.done())
        )

    async def _one_call(
        self, direct: tuple[bytes, int, int, SubmitRequest], prepared: Prepared | None
    ) -> list[Any] | None:
        """The live submission's result through the backend's sequenced one-call submit,
        or None when there is none or it did not apply the event (the general step then
        answers)."""
        writer = self._writer if self._writer is not None else self._ask_writer()
        if writer is None or prepared is None:
            return None
        _seq_key, after, last, request = direct
        done = await writer(after, last, prepared.members[0], request.value, request.operator)
        return None if done is None else [done]

    def has_writer(self) -> bool:
        """Whether the board's sequenced one-call submit exists (asked for when it may)."""
        if self._writer is None and self._eligible:
            self._ask_writer()
        return self._writer is not None

    def may_have_writer(self) -> bool:
        """False once the board or the backend is known to have no one-call submit."""
        return self._eligible

    async def mark_refused(self, board_seq: int) -> None:
        """Mark the board's event ``board_seq`` applied with no effect (see
        :meth:`_refused`)."""
        await self.steps.record_seq(self.journaling.seq_key, board_seq - 1, board_seq)

    def _ask_writer(self) -> Any:
        """The backend's sequenced one-call submit for this board, once its window is
        registered (None until then, and for good when the board or the backend has
        none)."""
        if not self._eligible:
            return None
        journaling = self.journaling
        self._writer, self._eligible = ask_writer(
            self.steps.backend, journaling.plan, journaling.seq_key
        )
        return self._writer

    async def _refused(self, records: Sequence[Event]) -> Any:
        """Mark ``records`` applied with no effect: the index refused them (a value it
        cannot hold given its state, such as an increment past exact floats). Their step
        changed nothing, and a replay reaches the same state and refuses them the same
        way; without this mark every later event would wait for them for ever. Answers
        like a sequenced step: None, APPLIED or a Gap."""
        after, last = records[0].board_seq - 1, records[-1].board_seq
        return await self.steps.record_seq(self.journaling.seq_key, after, last)

    # -- restore ----------------------------------------------------------------------------

    async def restore(self, *, from_snapshot: bool = True) -> int:
        """Bring the index up to the journal: when the index holds nothing of this board,
        load the newest good snapshot (unless ``from_snapshot`` is False: a rebuild from
        the journal alone), or else fold the journal and bulk-load the result where the
        board allows it; then apply every event after what it holds. Returns how many
        events were replayed one by one."""
        journaling = self.journaling
        applied: int = await self.steps.read_seq(journaling.seq_key)
        newest = self.store.last_board_seq(journaling.board)
        if applied > newest:  # the journal lost its tail (batch mode): the index is ahead
            _log.warning(
                "board %r: the index holds events up to %d but the journal ends at %d;"
                " rebuilding the board from the journal",
                journaling.board,
                applied,
                newest,
            )
            await run_async(self.steps, journaling.reset())
            applied = 0
        if applied == 0 and self.snapshots is not None and from_snapshot:
            found = self.snapshots.load_newest(journaling.board, max_seq=newest)
            self.snapshots.discard_after(journaling.board, newest)  # a history the journal lost
            if found is not None:
                await self.steps.restore_dump(found[1])
                applied = await self.steps.read_seq(journaling.seq_key)
        if applied == 0 and newest:  # the engine's bulk load where the board allows it
            try:
                loaded = await run_async(self.steps, journaling.bulk_load())
            except UnsupportedOperationError:
                loaded = None  # Redis: replay
            if loaded is not None:
                _log.info("board %r: %d journal events folded and loaded", journaling.board, loaded)
                applied = loaded
        return await self.catch_up(applied)

    async def catch_up(self, applied: int, before: int | None = None) -> int:
        """Apply the board's events after ``applied`` (those before ``before`` only), in
        order, each exactly once. Returns how many the index lacked."""
        count = 0
        events = self.store.board_events(self.journaling.board, after=applied)
        for event in events:
            if before is not None and event.board_seq >= before:
                break
            group = [event]  # a submission of several members: its events together
            for _ in range(decode(event).batch - 1):
                group.append(next(events))
            try:
                done = await run_async(self.steps, self.journaling.apply(group))
            except _REFUSALS as error:
                _log.warning(
                    "board %r: event %d was refused when first applied and is again: %s",
                    self.journaling.board,
                    event.board_seq,
                    error,
                )
                done = await self._refused(group)
            if isinstance(done, Gap):  # another writer is mid-way: start again from it
                return count + await self.catch_up(done.applied, before)
            if done is not APPLIED:
                count += len(group)
        if count:
            _log.info("board %r: %d journal events applied", self.journaling.board, count)
        return count

    # -- snapshots --------------------------------------------------------------------------

    async def snapshot(self) -> int | None:
        """Write a snapshot of the board (``memory://``) and wait until its file is
        durable (after any snapshot file asked for before it): the sequence number it
        covers, None when the board has no snapshot store."""
        snapshots = self.snapshots
        if snapshots is None:
            return None
        payload, covered = await self._dump()
        written = _file_writer().submit(snapshots.write, self.journaling.board, covered, payload)
        self._writing = written
        await off_loop(written.result)
        return covered

    async def snapshot_behind(self) -> None:
        """The periodic snapshot: dump the board now and hand its file to the writer
        thread. A failed write is logged, not raised: the apply that asked has succeeded,
        and the next period tries again. A backend that cannot dump (Redis, which keeps
        its own keys) takes no snapshots."""
        snapshots = self.snapshots
        if snapshots is None:
            return
        try:
            payload, covered = await self._dump()
        except UnsupportedOperationError:
            self.snapshots = None
            return
        board = self.journaling.board
        self._writing = _file_writer().submit(_write_logged, snapshots, board, covered, payload)

    async def _dump(self) -> tuple[bytes, int]:
        """The board's dump (one atomic step) and the sequence number it covers."""
        journaling = self.journaling
        payload, seq = await self.steps.dump(journaling.prefix, journaling.seq_key)
        self._since_snapshot = 0
        return payload, int(seq or 0)


@functools.cache
def _file_writer() -> ThreadPoolExecutor:
    """The one thread that writes snapshot files, for every board of the process, in the
    order they were asked for."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="ranked-snapshot")


def _write_logged(snapshots: SnapshotStore, board: str, covered: int, payload: bytes) -> None:
    """Write a periodic snapshot's file; log a failure (the journal still has it all)."""
    try:
        snapshots.write(board, covered, payload)
    except Exception as error:  # a full disk, a lost directory: the next period tries again
        _log.warning("board %r: the snapshot at %d was not written: %s", board, covered, error)
