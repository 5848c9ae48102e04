"""The apply hook, ``store.append(events, then=...)``, on both stores and in every
durability mode: ``then`` runs on the committer thread once per append, strictly in seq
order, as soon as the append is as durable as the mode promises; its value or exception
goes to its own caller only; ``fresh`` tells new records from idempotent duplicates."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import NoReturn

import pytest

from ranked.errors import JournalError
from ranked.journal import Event, JournalStore, NewEvent, open_journal

from .conftest import fail_next

MODES = ["always", "batch", "none"]


def _event(i: int, *, board: str = "b", key: str | None = None) -> NewEvent:
    return NewEvent(board=board, operation="submit", member=f"m{i}".encode(), at_us=i, key=key)


@pytest.fixture(params=MODES)
def durability(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(journal_url: str, durability: str) -> Iterator[JournalStore]:
    """A fresh journal on each store, in each durability mode (batch: 5 ms)."""
    journal = open_journal(f"{journal_url}?durability={durability}&max_delay_ms=5")
    try:
        yield journal
    finally:
        journal.close()


class _Order:
    """A ``then`` that records the seqs it sees, and that no two calls overlap or run
    off the committer thread."""

    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.threads: set[str] = set()
        self.inside = False
        self.overlapped = False

    def __call__(self, records: list[Event], fresh: list[bool]) -> bytes | None:
        if self.inside:
            self.overlapped = True
        self.inside = True
        self.threads.add(threading.current_thread().name)
        self.seqs.extend(r.seq for r, new in zip(records, fresh, strict=True) if new)
        member = records[0].member
        threading.Event().wait(0)  # let other threads run while inside
        self.inside = False
        return member


def test_then_sees_every_seq_in_order_under_16_threads(store: JournalStore) -> None:
    threads, per_thread = 16, 200
    order = _Order()
    wrong: list[tuple[bytes | None, bytes]] = []
    start = threading.Barrier(threads)

    def work(t: int) -> None:
        start.wait()
        for i in range(per_thread):
            mine = f"m{t * per_thread + i}".encode()
            got = store.append([_event(t * per_thread + i, board=f"b{t}")], then=order)
            if got != mine:  # the value of this append's own then
                wrong.append((got, mine))

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert wrong == []
    assert order.seqs == list(range(1, threads * per_thread + 1))
    assert order.threads == {"ranked-journal"} and not order.overlapped
    store.flush()
    assert [e.seq for e in store.read()] == order.seqs


def test_then_with_several_events_and_duplicates(store: JournalStore) -> None:
    (first,) = store.append([_event(1, key="a")])
    seen: list[tuple[list[Event], list[bool]]] = []

    def then(records: list[Event], fresh: list[bool]) -> int:
        seen.append((records, fresh))
        return len(records)

    batch = [_event(2, key="a"), _event(3, key="b"), _event(4, key="b"), _event(5)]
    assert store.append(batch, then=then) == 4
    ((records, fresh),) = seen
    assert fresh == [False, True, False, True]
    assert records[0] == first
    assert records[1] == records[2] and records[1].member == b"m3"
    assert [r.seq for r in records] == [1, 2, 2, 3]
    # a retry of the whole append: the keyed events are stale, the unkeyed one is new
    assert store.append(batch, then=then) == 4
    assert seen[1][1] == [False, False, False, True]
    assert seen[1][0][:3] == records[:3] and seen[1][0][3].seq == 4


def test_a_retry_of_keyed_events_is_all_stale(store: JournalStore) -> None:
    keyed = [_event(1, key="x"), _event(2, key="y")]
    first = store.append(keyed)
    got = store.append(keyed, then=lambda records, fresh: (records, fresh))
    assert got == (first, [False, False])


def test_then_exception_goes_to_its_caller_only(store: JournalStore) -> None:
    threads, per_thread = 4, 50
    raised: list[list[tuple[BaseException, BaseException]]] = [[] for _ in range(threads)]
    values: list[list[int]] = [[] for _ in range(threads)]

    def work(t: int) -> None:
        for i in range(per_thread):
            n = t * per_thread + i
            boom = ValueError(f"then of {n}")

            def then(
                records: list[Event], fresh: list[bool], n: int = n, boom: Exception = boom
            ) -> int:
                if n % 5 == 0:
                    raise boom
                return records[0].seq

            try:
                values[t].append(store.append([_event(n, key=f"k{n}")], then=then))
            except ValueError as error:
                raised[t].append((error, boom))

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for t in range(threads):
        assert len(raised[t]) == per_thread // 5
        assert all(error is boom for error, boom in raised[t])  # the very same object
        assert len(values[t]) == per_thread - per_thread // 5
    # the appends whose then raised are durable all the same, and the journal goes on
    store.flush()
    assert store.last_seq() == threads * per_thread
    assert store.append([_event(999)], then=lambda records, fresh: records[0].seq) == 201


@pytest.mark.parametrize("mode", MODES)
def test_then_runs_once_durable(journal_url: str, mode: str) -> None:
    """always / none: after the commit (a reader sees the record); batch: right after the
    savepoint, before the commit (a reader does not see it yet)."""
    journal = open_journal(f"{journal_url}?durability={mode}&max_delay_ms=60000")
    committed: list[int] = []

    def then(records: list[Event], fresh: list[bool]) -> int:
        committed.append(journal.last_seq())
        return records[0].seq

    with journal:
        assert journal.append([_event(1)], then=then) == 1
        assert journal.append([_event(2)], then=then) == 2
        if mode == "batch":
            assert committed == [0, 0]  # acknowledged inside the open transaction
            journal.flush()
            assert journal.last_seq() == 2
        else:
            assert committed == [1, 2]


def test_then_of_a_failed_append_is_not_called(store: JournalStore) -> None:
    store.append([_event(0)])
    fail_next(store, "INSERT")
    called: list[int] = []
    with pytest.raises(JournalError, match="append failed"):
        store.append([_event(1)], then=lambda records, fresh: called.append(1))
    assert called == []
    store.flush()
    assert store.last_seq() == 1  # nothing of it was written
    assert store.append([_event(2)], then=lambda records, fresh: records[0].seq) >= 2


@pytest.mark.parametrize("mode", ["always", "none"])
def test_then_of_a_failed_commit_is_not_called(journal_url: str, mode: str) -> None:
    with open_journal(f"{journal_url}?durability={mode}") as store:
        store.append([_event(0)])
        fail_next(store, "COMMIT")
        called: list[int] = []
        with pytest.raises(JournalError, match="commit failed"):
            store.append([_event(1)], then=lambda records, fresh: called.append(1))
        assert called == [] and store.last_seq() == 1
        assert store.append([_event(2)], then=lambda records, fresh: len(records)) == 1


def test_then_cannot_append_and_wait(store: JournalStore) -> None:
    def then(records: list[Event], fresh: list[bool]) -> NoReturn:
        store.append([_event(2)])
        raise AssertionError("unreachable")

    with pytest.raises(JournalError, match="would wait for itself"):
        store.append([_event(1)], then=then)
    assert store.append([_event(3)], then=lambda records, fresh: records[0].seq) == 2


def test_then_of_an_empty_append(store: JournalStore) -> None:
    got = store.append(
        [], then=lambda records, fresh: (records, fresh, threading.current_thread().name)
    )
    assert got == ([], [], "ranked-journal")
    assert store.append([]) == []
    assert store.last_seq() == 0


def test_append_keeps_its_types(journal_url: str) -> None:
    """append(events) is list[Event] and append(events, then) is then's type, for mypy
    too (this file is type-checked), on the protocol and on the concrete stores."""
    with open_journal(journal_url) as concrete:
        records: list[Event] = concrete.append([_event(1)])
        count: int = concrete.append([_event(2)], then=lambda r, f: len(r))
        protocol: JournalStore = concrete
        again: list[Event] = protocol.append([_event(3)])
        seq: int = protocol.append([_event(4)], lambda r, f: r[0].seq)
    assert ([e.seq for e in records], count, [e.seq for e in again], seq) == ([1], 1, [3], 4)


def test_batch_mode_a_failed_commit_after_acknowledgements_stops_the_journal(
    journal_url: str,
) -> None:
    """batch: an append is answered at its savepoint. When the COMMIT of that transaction
    fails, acknowledged events are lost: the journal says so and refuses every later
    append (a board must not apply events the journal no longer has), and an answer given
    before is never changed after the fact."""
    with open_journal(f"{journal_url}?durability=batch&max_delay_ms=1") as store:
        failing = fail_next(store, "COMMIT", insert_delay=0.005)
        answers = []
        with pytest.raises(JournalError, match="takes no more appends"):
            for i in range(50):
                answers.append(store.append([_event(i)], then=lambda records, fresh: len(records)))
        assert failing.prefix == ""  # the COMMIT did fail
        assert answers and all(answer == 1 for answer in answers)
        with pytest.raises(JournalError, match="takes no more appends"):
            store.append([_event(99)])
