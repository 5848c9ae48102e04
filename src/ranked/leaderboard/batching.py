"""``IncrBatcher``: a board's increments coalesced per member over a flush interval
(seed 000's batched writes: up to one interval of staleness for far fewer writes).

Increments (``incr``, and ``decr`` as a negated increment) wait in the open batch, one
pending run per member; once per interval the batch is written as one
:meth:`~ranked.leaderboard.AsyncLeaderboard.submit_many` with operator ``incr``: one
atomic step on the index and, on a journaled board, one journal append (one event group,
one commit). Every caller whose increment was in the flush is answered once the flush is
applied (and durable, as the board's journal promises): with its member's result in the
flush, that is, the member's standing after the flush, which includes the other callers'
increments of the same flush.

Exactness: whole-number increments of one sign are summed in Python ints and written as
one entry. Sums of whole numbers within 2**53 are exact, so a member holding a whole
number whose score stays within 2**53 gets exactly what adding the increments one by one
gives, in any order. A fractional increment is never summed (it is its own entry, in
order), and once the batcher has seen a fractional increment, or a score that is
fractional or reaches 2**53, it stops summing (each increment its own entry, still one
write per flush). A sign change starts a new run, so a sum never passes a value the steps
would not. Two cases are left: a member holding a fraction this batcher has not seen
(written by another process, or before a restart) that gets several increments in its
first flush, and a score that crosses 2**53 within a flush (past it the board takes only
increments landing on an exact float): there a sum may round, or be taken, where one step
at a time would not.

Refusals: a flush the board refuses for its input (an increment past exact floats, a bad
member) is applied again one run at a time, and a refused run one increment at a time:
each caller gets its own answer or its own error, the others are not held back. Any other
failure (the journal or the backend unavailable) is every caller's of that flush.

Order: a write of a member that is not batched (another operator, an idempotency key, a
score that is not a finite number) goes through :meth:`IncrBatcher.write`, which first
applies that member's increments that came before it and holds back those that come
after it until it is done, so each member's writes apply in arrival order.

Costs: :meth:`IncrBatcher.add` is O(1) (a dict lookup, an append, a future); a flush of k
entries is one board write, O(k * windows * log n). Uses the board's public API only.
Not thread-safe: one event loop.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from ..core.models import Member
from ..errors import BoardConfigError, RankedError
from ._requests import Operator
from .aio import AsyncLeaderboard
from .results import Submission

__all__ = ["MAX_INTERVAL_MS", "Flushed", "IncrBatcher"]

MAX_INTERVAL_MS: Final = 10_000
"""The longest flush interval, in milliseconds."""

EXACT: Final = 2**53
"""Whole numbers up to this magnitude are exact in a float64: their sums too."""


@dataclass(frozen=True, slots=True)
class Flushed:
    """What one flush did, for metrics and live feeds."""

    results: Sequence[Submission]
    """Every submission written, in order (one per entry)."""
    increments: int
    """The callers' increments it carried."""
    entries: int
    """(member, delta) pairs written to the board: the index writes."""
    writes: int
    """Board write calls: 1, or more when a refusal made it go one run at a time."""


class _Run:
    """Consecutive increments of one member written as one entry: whole numbers of one
    sign within 2**53 (summed), or one increment alone (a fraction, a number past 2**53).
    ``waiters[i]`` is the caller of ``deltas[i]``."""

    __slots__ = ("deltas", "member", "sign", "summed", "total", "waiters")

    def __init__(self, member: Member, delta: float, summed: bool) -> None:
        self.member = member
        self.summed = summed
        self.total: float = int(delta) if summed else delta
        self.sign = _sign(delta)
        self.deltas: list[float] = []
        self.waiters: list[asyncio.Future[Submission]] = []


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


def _whole(value: float) -> bool:
    """A whole number every float64 sum of such numbers keeps exact."""
    if isinstance(value, int):
        return -EXACT <= value <= EXACT
    return value.is_integer() and -EXACT <= value <= EXACT


def _refusal(error: BaseException) -> bool:
    """The board refused the input (a value or member it cannot take): another split of
    the same increments may pass. Anything else (journal, backend) would fail again."""
    return isinstance(error, RankedError) and isinstance(error, ValueError | TypeError)


class IncrBatcher:
    """Coalesces ``board``'s increments per member, flushed every ``interval_ms``
    (1 to :data:`MAX_INTERVAL_MS`). ``on_flush`` is called with each flush's
    :class:`Flushed` once it is applied, before its callers are answered.

    Close it (:meth:`close`) to write what is pending; increments given after that are
    written one by one.
    """

    def __init__(
        self,
        board: AsyncLeaderboard,
        interval_ms: int,
        *,
        on_flush: Callable[[Flushed], None] | None = None,
    ) -> None:
        if (
            isinstance(interval_ms, bool)
            or not isinstance(interval_ms, int)
            or not 1 <= interval_ms <= MAX_INTERVAL_MS
        ):
            raise BoardConfigError(
                f"interval_ms must be an int in [1, {MAX_INTERVAL_MS}], not {interval_ms!r}"
            )
        self.board = board
        self.interval_ms = interval_ms
        self.on_flush = on_flush
        self.sums = True
        """Whether whole increments are summed (False once a fraction was seen)."""
        self._batch: dict[Member, list[_Run]] = {}
        self._applying: dict[Member, list[_Run]] = {}
        self._held: dict[Member, int] = {}
        self._member_gates: dict[Member, asyncio.Lock] = {}
        self._gate = asyncio.Lock()  # one flush (or early member flush) at a time
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    # -- taking writes ----------------------------------------------------------------------

    def batchable(self, score: float, operator: Operator | None, key: str | None) -> bool:
        """Whether :meth:`submit` would batch this write: operator incr or decr (given or
        the board's), no idempotency key, a finite int or float score, the batcher open."""
        op = operator or self.board.config.operator
        return (
            op in ("incr", "decr")
            and key is None
            and not self._closed
            and type(score) in (int, float)
            and (type(score) is int or math.isfinite(score))
        )

    async def submit(
        self,
        member: Member,
        score: float,
        *,
        operator: Operator | None = None,
        key: str | None = None,
    ) -> Submission:
        """Like the board's ``submit``: batched when :meth:`batchable`, else written
        through :meth:`write` (in order with the member's pending increments)."""
        if isinstance(member, str | bytes) and self.batchable(score, operator, key):
            return await self.add(member, score, operator)
        return await self.write(member, score, operator=operator, key=key)

    async def add(
        self, member: Member, score: float, operator: Operator | None = None
    ) -> Submission:
        """Add an increment (``operator`` decr: ``-score``) to the open batch; answers
        the member's standing after the flush that wrote it (the caller should have
        checked :meth:`batchable`; ``member`` is a str or bytes). O(1) here; the flush
        comes within the interval."""
        delta = -score if (operator or self.board.config.operator) == "decr" else score
        whole = _whole(delta)
        if not whole and isinstance(delta, float) and not delta.is_integer():
            self.sums = False  # a fraction: sums could round differently from now on
        runs = self._batch.get(member)
        if runs is None:
            runs = self._batch[member] = []
        last = runs[-1] if runs else None
        sign = _sign(delta)
        if (
            last is not None
            and last.summed
            and whole
            and self.sums
            and (last.sign == 0 or sign == 0 or last.sign == sign)
            and -EXACT <= last.total + delta <= EXACT
        ):
            last.total += int(delta)
            last.sign = last.sign or sign
        else:
            last = _Run(member, delta, whole and self.sums)
            runs.append(last)
        future: asyncio.Future[Submission] = asyncio.get_running_loop().create_future()
        last.deltas.append(delta)
        last.waiters.append(future)
        if member not in self._held:
            self._arm()
        return await future

    async def write(
        self,
        member: Member,
        score: float,
        *,
        operator: Operator | None = None,
        key: str | None = None,
    ) -> Submission:
        """The board's ``submit``, after the member's increments that came before this
        call, and before those that come after it (held until this write is done)."""
        ahead = self._batch.pop(member, None)
        in_flight = ahead is None and member in self._applying
        self._held[member] = self._held.get(member, 0) + 1
        gate = self._member_gates.get(member)
        if gate is None:
            gate = self._member_gates[member] = asyncio.Lock()
        try:
            async with gate:  # this member's writes, in arrival order
                if ahead is not None:
                    async with self._gate:
                        await self._write(ahead)
                elif in_flight:
                    async with self._gate:  # the flush holding its increments ends first
                        pass
                return await self.board.submit(member, score, operator=operator, key=key)
        finally:
            held = self._held[member] - 1
            if held:
                self._held[member] = held
            else:
                del self._held[member]
                del self._member_gates[member]
                if member in self._batch:
                    self._arm()

    # -- flushing -----------------------------------------------------------------------------

    def _arm(self) -> None:
        if self._timer is None:
            delay = 0 if self._closed else self.interval_ms / 1000
            self._timer = asyncio.get_running_loop().call_later(delay, self._due)

    def _due(self) -> None:
        self._timer = None
        task = asyncio.get_running_loop().create_task(self.flush())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def flush(self) -> None:
        """Write the open batch now (after a flush in progress), but for members whose
        other writes are under way (:meth:`write` flushes them in its turn)."""
        async with self._gate:
            batch = self._batch
            if not batch:
                return
            if self._held:
                held = self._held
                self._batch = {m: runs for m, runs in batch.items() if m in held}
                batch = {m: runs for m, runs in batch.items() if m not in held}
            else:
                self._batch = {}
            if batch:
                self._applying = batch
                try:
                    await self._write([run for runs in batch.values() for run in runs])
                finally:
                    self._applying = {}

    async def _write(self, runs: list[_Run]) -> None:
        """Write ``runs`` (in order) as one ``submit_many`` and answer their callers; on a
        refusal, one run at a time (:meth:`_one_by_one`). Never raises but cancellation:
        a failure is each caller's."""
        increments = sum(len(run.deltas) for run in runs)
        try:
            results = await self.board.submit_many(
                [(run.member, run.total) for run in runs], operator="incr"
            )
        except Exception as error:
            if not _refusal(error):
                _fail(runs, error)
                return
            results, writes = await self._one_by_one(runs)
            self._report(results, increments, writes)
            return
        except BaseException:
            _fail(runs, None)
            raise
        self._report(results, increments, 1)
        last = {run.member: result for run, result in zip(runs, results, strict=True)}
        for run in runs:
            answer = last[run.member]  # the member's standing after the flush
            for waiter in run.waiters:
                if not waiter.done():
                    waiter.set_result(answer)

    async def _one_by_one(self, runs: list[_Run]) -> tuple[list[Submission], int]:
        """Apply each run alone, and a refused run of several increments each increment
        alone: every caller gets its own result or refusal. Returns the results and the
        board writes made."""
        results: list[Submission] = []
        for index, run in enumerate(runs):
            try:
                found = await self._alone(run.member, run.total, run.waiters)
                if isinstance(found, Submission):
                    results.append(found)
                elif len(run.deltas) == 1:
                    _fail_waiters(run.waiters, found)
                else:
                    for delta, waiter in zip(run.deltas, run.waiters, strict=True):
                        one = await self._alone(run.member, delta, [waiter])
                        if isinstance(one, Submission):
                            results.append(one)
                        else:
                            _fail_waiters([waiter], one)
            except Exception as error:  # not a refusal: the rest fail with it
                _fail(runs[index:], error)
                break
            except BaseException:
                _fail(runs[index:], None)
                raise
        return results, len(results)

    async def _alone(
        self, member: Member, delta: float, waiters: list[asyncio.Future[Submission]]
    ) -> Submission | Exception:
        """Submit one increment and answer ``waiters`` with its result; a refusal is
        returned (its callers not answered yet), any other error raised."""
        try:
            result = await self.board.submit(member, delta, operator="incr")
        except Exception as error:
            if _refusal(error):
                return error
            raise
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(result)
        return result

    def _report(self, results: list[Submission], increments: int, writes: int) -> None:
        if self.sums:
            for result in results:
                for window in result.windows.values() or (result.primary,):
                    score = float(window.score)
                    if not (score.is_integer() and -EXACT < score < EXACT):
                        self.sums = False  # a fraction, or 2**53 reached: sums could differ
        if self.on_flush is not None and results:
            self.on_flush(Flushed(results, increments, len(results), writes))

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Increments waiting in the open batch."""
        return sum(len(run.deltas) for runs in self._batch.values() for run in runs)

    async def close(self) -> None:
        """Write every pending increment and stop batching (later increments are written
        one by one). Waits for flushes under way."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while True:
            await self.flush()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            if not self._batch:
                return
            await asyncio.sleep(0.001)  # members held by a write under way


def _fail(runs: Sequence[_Run], error: Exception | None) -> None:
    """Give ``error`` to every caller of ``runs`` not answered yet (None: cancel them)."""
    for run in runs:
        _fail_waiters(run.waiters, error)


def _fail_waiters(waiters: Sequence[asyncio.Future[Submission]], error: Exception | None) -> None:
    for waiter in waiters:
        if not waiter.done():
            if error is None:
                waiter.cancel()
            else:
                waiter.set_exception(error)
