"""The asyncio front, ``AsyncAppender``, on both stores: many tasks' appends go to the
committer in one hand-off per loop iteration; ``then_async`` runs on the loop strictly in
seq order (across hand-offs too); each task gets its own result or exception.

pytest-asyncio is not used: each test runs its coroutine with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence

import pytest

from ranked.errors import InvalidEventError, JournalError
from ranked.journal import Event, NewEvent, open_journal
from ranked.journal._base import JournalBase
from ranked.journal._group_commit import Then, Ticket
from ranked.journal.aio import AsyncAppender

from .conftest import fail_next

TASKS, PER_TASK = 64, 100


def _event(i: int, *, key: str | None = None) -> NewEvent:
    return NewEvent(board="b", operation="submit", member=f"m{i}".encode(), at_us=i, key=key)


@pytest.fixture(params=["always", "batch", "none"])
def store(journal_url: str, request: pytest.FixtureRequest) -> Iterator[JournalBase]:
    journal = open_journal(f"{journal_url}?durability={request.param}&max_delay_ms=5")
    try:
        yield journal
    finally:
        journal.close()


class _Counting:
    """Counts the store's hand-offs (``enqueue`` calls) and the appends they carry."""

    def __init__(self, store: JournalBase) -> None:
        self.handoffs = 0
        self.appends = 0
        self._enqueue = store.enqueue
        store.enqueue = self  # type: ignore[method-assign]

    def __call__(
        self,
        appends: Sequence[tuple[Sequence[NewEvent], Then | None]],
        on_settled: Callable[[], None],
        *,
        detached: bool = False,
    ) -> list[Ticket]:
        self.handoffs += 1
        self.appends += len(appends)
        return self._enqueue(appends, on_settled, detached=detached)


def test_64_tasks_then_async_in_strict_seq_order(store: JournalBase) -> None:
    counting = _Counting(store)
    appender = AsyncAppender(store)
    seen: list[int] = []
    inside = [False]

    async def then_async(records: list[Event], fresh: list[bool]) -> bytes | None:
        assert not inside[0], "two then_async overlap"
        inside[0] = True
        if records[0].seq % 7 == 0:  # some suspend: later hand-offs pile up meanwhile
            await asyncio.sleep(0)
        seen.extend(r.seq for r in records)
        inside[0] = False
        return records[0].member

    async def task(t: int) -> list[tuple[bytes | None, bytes]]:
        wrong = []
        for i in range(PER_TASK):
            n = t * PER_TASK + i
            got = await appender.append([_event(n)], then_async)
            if got != f"m{n}".encode():
                wrong.append((got, f"m{n}".encode()))
        return wrong

    async def main() -> list[list[tuple[bytes | None, bytes]]]:
        return await asyncio.gather(*(task(t) for t in range(TASKS)))

    assert all(wrong == [] for wrong in asyncio.run(main()))
    assert seen == list(range(1, TASKS * PER_TASK + 1))
    assert counting.appends == TASKS * PER_TASK
    # appends share hand-offs: those made while one is with the committer wait for it,
    # though a suspended then_async answers one task per loop iteration
    assert counting.handoffs <= 3 * PER_TASK
    store.flush()
    assert store.last_seq() == TASKS * PER_TASK


def test_64_tasks_share_one_handoff_per_iteration(store: JournalBase) -> None:
    counting = _Counting(store)
    appender = AsyncAppender(store)

    async def task(t: int) -> list[int]:
        seqs = []
        for i in range(PER_TASK):
            (record,) = await appender.append([_event(t * PER_TASK + i)])
            assert record.member == f"m{t * PER_TASK + i}".encode()
            seqs.append(record.seq)
        return seqs

    async def main() -> list[list[int]]:
        return await asyncio.gather(*(task(t) for t in range(TASKS)))

    per_task = asyncio.run(main())
    assert sorted(s for seqs in per_task for s in seqs) == list(range(1, TASKS * PER_TASK + 1))
    assert all(seqs == sorted(seqs) for seqs in per_task)
    # every task appends again in the iteration its previous append was answered in
    assert counting.handoffs <= PER_TASK + 2


def test_then_async_exceptions_and_failures_go_to_their_task(store: JournalBase) -> None:
    appender = AsyncAppender(store)
    booms: dict[int, ValueError] = {}

    async def then_async(records: list[Event], fresh: list[bool]) -> int:
        n = records[0].at_us
        if n % 3 == 0:
            booms[n] = ValueError(f"then_async of {n}")
            raise booms[n]
        return n

    async def task(n: int) -> object:
        try:
            return await appender.append([_event(n)], then_async)
        except ValueError as error:
            return error

    async def main() -> list[object]:
        return await asyncio.gather(*(task(n) for n in range(30)))

    got = asyncio.run(main())
    for n, value in enumerate(got):
        assert value is booms[n] if n % 3 == 0 else value == n  # the very same object
    # a failed append fails its own task only, and its then_async does not run
    called: list[int] = []

    async def recording(records: list[Event], fresh: list[bool]) -> int:
        called.append(records[0].at_us)
        return records[0].at_us

    async def failing() -> list[object]:
        # the round's INSERT fails, then the first append's own: the others are written
        # again on their own and succeed
        fail_next(store, "INSERT", times=2)
        return await asyncio.gather(
            *(appender.append([_event(100 + n)], recording) for n in range(4)),
            return_exceptions=True,
        )

    first, *rest = asyncio.run(failing())
    assert isinstance(first, JournalError) and "append failed" in str(first)
    assert rest == [101, 102, 103] and called == [101, 102, 103]


def test_duplicates_bad_events_and_a_closed_journal(store: JournalBase) -> None:
    appender = AsyncAppender(store)

    async def main() -> None:
        first = await appender.append([_event(1, key="k")])
        got = await appender.append(
            [_event(2, key="k"), _event(3)], lambda records, fresh: _pair(records, fresh)
        )
        assert got == ([first[0].seq, 2], [False, True])
        assert await appender.append([]) == []
        with pytest.raises(InvalidEventError):
            await appender.append([_event(4), {"board": "b"}])  # type: ignore[list-item]
        store.flush()
        assert store.last_seq() == 2
        store.close()
        with pytest.raises(JournalError, match="closed"):
            await appender.append([_event(5)])

    asyncio.run(main())


def test_one_round_written_together(store: JournalBase) -> None:
    """The appends of one hand-off are written in one insert: numbered in order, a key
    taken earlier in the same round gives the earlier record; should the round's insert
    fail, each append is written again on its own and none fails."""
    appender = AsyncAppender(store)

    async def round_of(*batches: list[NewEvent]) -> list[object]:
        return await asyncio.gather(
            *(appender.append(batch, _pair) for batch in batches), return_exceptions=True
        )

    got = asyncio.run(
        round_of([_event(1, key="a")], [_event(2), _event(3, key="b")], [_event(4, key="a")])
    )
    assert got == [([1], [True]), ([2, 3], [True, True]), ([1], [False])]
    fail_next(store, "INSERT")
    got = asyncio.run(round_of([_event(5)], [_event(6), _event(7)], [_event(8, key="b")]))
    assert got == [([4], [True]), ([5, 6], [True, True]), ([3], [False])]
    store.flush()
    assert [event.board_seq for event in store.board_events("b")] == list(range(1, 7))


async def _pair(records: list[Event], fresh: list[bool]) -> tuple[list[int], list[bool]]:
    return [r.seq for r in records], fresh


def test_a_cancelled_task_still_has_its_then_async_run(store: JournalBase) -> None:
    appender = AsyncAppender(store)
    applied: list[int] = []

    async def slow(records: list[Event], fresh: list[bool]) -> int:
        await asyncio.sleep(0.01)
        applied.append(records[0].seq)
        return records[0].seq

    async def main() -> None:
        first = asyncio.create_task(appender.append([_event(1)], slow))
        await asyncio.sleep(0)
        first.cancel()
        assert await appender.append([_event(2)], slow) == 2
        assert first.cancelled()

    asyncio.run(main())
    assert applied == [1, 2]  # durable, so applied, even though nobody waited for it


def test_the_appender_is_bound_to_one_loop_at_a_time(store: JournalBase) -> None:
    appender = AsyncAppender(store)
    first = asyncio.new_event_loop()
    try:
        records: list[Event] = first.run_until_complete(appender.append([_event(1)]))
        with pytest.raises(RuntimeError, match="another event loop"):
            asyncio.run(appender.append([_event(2)]))
    finally:
        first.close()
    seq: int = asyncio.run(appender.append([_event(3)], _seq))  # the first loop is closed
    assert (records[0].seq, seq) == (1, 2)


async def _seq(records: list[Event], fresh: list[bool]) -> int:
    return records[0].seq
