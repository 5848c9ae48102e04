"""The journal stores (SQLite and PostgreSQL, through the ``journal`` fixture): append and
read, idempotency, refusals, reopening, concurrent appenders; then what is SQLite's own
(schema version, damaged files, URLs, durability modes, a failed commit)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from ranked.errors import (
    InvalidEventError,
    InvalidNameError,
    JournalConfigError,
    JournalError,
    JournalVersionError,
    OutOfRangeError,
    PageSizeError,
    UnsupportedURLError,
)
from ranked.journal import MAX_AT_US, Event, JournalStore, NewEvent, SQLiteJournal, open_journal

from .conftest import fail_next


def _event(i: int, *, board: str = "b", key: str | None = None) -> NewEvent:
    return NewEvent(
        board=board,
        operation="submit",
        member=f"m{i}".encode(),
        value=i.to_bytes(4, "big"),
        at_us=1_700_000_000_000_000 + i,
        key=key,
    )


def _rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])


def test_round_trip_in_seq_order(journal: JournalStore) -> None:
    assert journal.last_seq() == 0
    assert list(journal.read()) == []
    first = journal.append([_event(0), _event(1)])
    second = journal.append([_event(2, key="k2")])
    assert [e.seq for e in first + second] == [1, 2, 3]
    read = list(journal.read())
    assert read == first + second
    assert read[2] == Event(
        seq=3,
        board_seq=3,
        board="b",
        score=None,
        operation="submit",
        member=b"m2",
        value=(2).to_bytes(4, "big"),
        at_us=1_700_000_000_000_002,
        key="k2",
        actor=None,
        reason=None,
    )
    assert journal.last_seq() == 3
    assert [e.seq for e in journal.read(after_seq=1)] == [2, 3]
    assert [e.seq for e in journal.read(limit=2)] == [1, 2]
    assert list(journal.read(limit=0)) == []


def test_read_one_board_and_pages(journal: JournalStore) -> None:
    journal.append([_event(i, board="a" if i % 3 else "z") for i in range(1200)])
    a = list(journal.read(board="a"))
    assert len(a) == 800 and all(e.board == "a" for e in a)
    assert [e.seq for e in a] == sorted(e.seq for e in a)
    assert len(list(journal.read(board="z", after_seq=600))) == 200
    assert len(list(journal.read(limit=700))) == 700
    assert list(journal.read(board="none")) == []


def test_moderation_fields_and_board_wide_event(journal: JournalStore) -> None:
    (event,) = journal.append(
        [NewEvent(board="b", operation="clear", at_us=0, actor="mod", reason="cheat")]
    )
    assert (event.member, event.value, event.actor, event.reason) == (None, b"", "mod", "cheat")
    assert list(journal.read()) == [event]


def test_removed_after_names_the_members_removed_later(journal: JournalStore) -> None:
    def remove(member: bytes, board: str = "b") -> NewEvent:
        return NewEvent(board=board, operation="remove", member=member, at_us=5, actor="mod")

    journal.append([_event(1), remove(b"m1"), _event(2)])
    (mark,) = journal.append([_event(3)])
    journal.append([remove(b"m2"), remove(b"m2"), remove(b"m9", board="other"), _event(4)])
    assert journal.removed_after("b", 0) == {b"m1", b"m2"}
    assert journal.removed_after("b", mark.seq) == {b"m2"}
    assert journal.removed_after("other", 0) == {b"m9"}
    assert journal.removed_after("b", journal.last_seq()) == set()


def test_idempotent_retry_returns_the_first_record(journal: JournalStore) -> None:
    (first,) = journal.append([_event(1, key="retry")])
    journal.append([_event(2)])
    # a retry (even with other content) gets the first answer and appends nothing
    (again,) = journal.append([_event(99, key="retry")])
    assert again == first
    # the same key on another board is another event
    (other,) = journal.append([_event(1, board="c", key="retry")])
    assert other.seq == 3
    # twice in one append: one row
    pair = journal.append([_event(5, key="dup"), _event(6, key="dup")])
    assert pair[0] == pair[1] and pair[0].seq == 4
    assert [e.seq for e in journal.read()] == [1, 2, 3, 4]


def test_a_large_append_is_written_whole_and_in_order(journal: JournalStore) -> None:
    """341 events in one append: on SQLite, multi-row INSERTs of 256, 64, 16 and 4 rows
    and a single one. A keyed event in the middle of a large append whose key is taken
    answers the first record; the others are written around it."""
    journal.append([_event(0, key="taken")])
    count = 256 + 64 + 16 + 4 + 1
    records = journal.append([_event(i + 1, board=f"b{i % 3}") for i in range(count)])
    assert [r.seq for r in records] == list(range(2, count + 2))
    assert [r.at_us - 1_700_000_000_000_000 for r in records] == list(range(1, count + 1))
    for board in ("b0", "b1", "b2"):
        mine = [r for r in records if r.board == board]
        assert [r.board_seq for r in mine] == list(range(1, len(mine) + 1))
    assert list(journal.read(after_seq=1)) == records
    mixed = [_event(1000 + i) for i in range(100)]
    mixed[50] = _event(7, key="taken")  # answers the first record, writes nothing
    again = journal.append(mixed)
    assert again[50].seq == 1 and again[51].seq == again[49].seq + 1
    assert journal.last_seq() == count + 1 + 99


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"board": ""}, InvalidNameError),
        ({"board": "a{b}"}, InvalidNameError),
        ({"board": 5}, InvalidEventError),
        ({"operation": "Explode"}, InvalidEventError),
        ({"operation": "x" * 33}, InvalidEventError),
        ({"operation": ""}, InvalidEventError),
        ({"score": float("nan")}, InvalidEventError),
        ({"score": float("inf")}, InvalidEventError),
        ({"score": 3}, InvalidEventError),
        ({"value": "text"}, InvalidEventError),
        ({"member": "text"}, InvalidEventError),
        ({"at_us": -1}, OutOfRangeError),
        ({"at_us": MAX_AT_US + 1}, OutOfRangeError),
        ({"at_us": 1.5}, InvalidEventError),
        ({"at_us": True}, InvalidEventError),
        ({"key": ""}, InvalidEventError),
        ({"key": 3}, InvalidEventError),
        ({"actor": b"x"}, InvalidEventError),
        ({"reason": ""}, InvalidEventError),
    ],
)
def test_a_bad_event_is_refused_and_changes_nothing(
    journal: JournalStore, fields: dict[str, object], error: type[Exception]
) -> None:
    journal.append([_event(0)])
    good = {"board": "b", "operation": "submit", "at_us": 1, "value": b"v"}
    with pytest.raises(error):
        NewEvent(**{**good, **fields})  # type: ignore[arg-type]
    # a forged record (frozen dataclasses can be forged) is refused by append, with the
    # good events of the same append
    forged = _event(1, key="good")
    for name, value in fields.items():
        object.__setattr__(forged, name, value)
    with pytest.raises(error):
        journal.append([_event(2, key="also-good"), forged])
    assert journal.last_seq() == 1
    assert len(list(journal.read())) == 1


def test_not_an_event_is_refused(journal: JournalStore) -> None:
    with pytest.raises(InvalidEventError):
        journal.append([{"board": "b"}])  # type: ignore[list-item]
    assert journal.append([]) == []
    assert journal.last_seq() == 0


def test_bad_read_arguments(journal: JournalStore) -> None:
    with pytest.raises(OutOfRangeError):
        journal.read(after_seq=-1)
    with pytest.raises(PageSizeError):
        journal.read(limit=-1)
    with pytest.raises(JournalConfigError):
        journal.read(board=b"b")  # type: ignore[arg-type]


def test_reopen_keeps_events_and_continues_seqs(journal_url: str) -> None:
    with open_journal(journal_url) as store:
        store.append([_event(0, key="a"), _event(1)])
    with open_journal(journal_url) as store:
        assert [e.seq for e in store.read()] == [1, 2]
        assert store.append([_event(0, key="a")])[0].seq == 1
        assert store.append([_event(2)])[0].seq == 3


def test_schema_version_is_recorded_and_checked(journal_path: Path) -> None:
    open_journal(f"sqlite://{journal_path}").close()
    with sqlite3.connect(journal_path) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(2,)]
        conn.execute("UPDATE schema_version SET version = 7")
    with pytest.raises(JournalVersionError, match=r"schema version 7.*reads version 2"):
        open_journal(f"sqlite://{journal_path}")


def test_a_foreign_file_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "text.db"
    text.write_bytes(b"this is not a database, just some text" * 200)
    with pytest.raises(JournalError):
        open_journal(f"sqlite://{text}")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(JournalError, match="not a ranked journal"):
        open_journal(f"sqlite://{other}")


def test_a_row_that_does_not_parse_is_an_error(
    sqlite_journal: SQLiteJournal, journal_path: Path
) -> None:
    journal = sqlite_journal
    journal.append([_event(0), _event(1)])
    with sqlite3.connect(journal_path) as conn:
        conn.execute("UPDATE events SET value = 'text' WHERE seq = 2")
    with pytest.raises(JournalError, match="seq=2"):
        list(journal.read())


@pytest.mark.parametrize(
    "url", ["memory://", "mysql://host/db", "redis://localhost", "sqlite.db", ""]
)
def test_unsupported_url(url: str) -> None:
    with pytest.raises(UnsupportedURLError):
        open_journal(url)


@pytest.mark.parametrize(
    "query",
    ["durability=sometimes", "max_delay_ms=0", "max_delay_ms=x", "max_delay_ms=60001", "x=1"],
)
def test_bad_options(journal_path: Path, query: str) -> None:
    with pytest.raises(JournalConfigError):
        open_journal(f"sqlite://{journal_path}?{query}")
    assert not journal_path.exists()


def test_url_without_a_path_or_with_a_host(tmp_path: Path) -> None:
    with pytest.raises(JournalConfigError):
        open_journal("sqlite://")
    with pytest.raises(JournalConfigError):
        open_journal(f"sqlite://host{tmp_path}/j.db")


@pytest.mark.parametrize("durability", ["always", "batch", "none"])
def test_durability_modes(journal_path: Path, durability: str) -> None:
    store = open_journal(f"sqlite://{journal_path}?durability={durability}&max_delay_ms=50")
    with sqlite3.connect(journal_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    records = store.append([_event(i) for i in range(3)])
    assert [e.seq for e in records] == [1, 2, 3]
    store.flush()
    assert list(store.read()) == records
    store.append([_event(3)])
    store.close()  # commits what batch mode still holds
    with open_journal(f"sqlite://{journal_path}") as again:
        assert again.last_seq() == 4


def test_batch_mode_commits_within_the_delay(journal_path: Path) -> None:
    with open_journal(f"sqlite://{journal_path}?durability=batch&max_delay_ms=20") as store:
        store.append([_event(0)])
        deadline = threading.Event()
        for _ in range(100):  # committed by the timer, without a flush
            if _rows(journal_path) == 1:
                break
            deadline.wait(0.01)
        assert _rows(journal_path) == 1


def test_closed_journal_refuses_appends(journal_url: str) -> None:
    store = open_journal(journal_url)
    store.close()
    store.close()
    with pytest.raises(JournalError, match="closed"):
        store.append([_event(0)])


def test_concurrent_appenders_get_distinct_seqs(journal: JournalStore) -> None:
    threads, per_thread = 8, 150
    got: list[list[Event]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads)

    def work(t: int) -> None:
        start.wait()
        for i in range(per_thread):
            key = f"{t}-{i}"
            batch = [_event(i, board=f"b{t}", key=key)]
            if i % 10 == 0:  # some multi-event appends and retries
                batch.append(_event(i, board=f"b{t}"))
            records = journal.append(batch)
            got[t].extend(records)
            if i % 7 == 0:  # a retry returns the first record
                assert journal.append(batch[:1]) == records[:1]

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    acked = [e for records in got for e in records]
    seqs = [e.seq for e in acked]
    assert len(seqs) == len(set(seqs)) == threads * (per_thread + per_thread // 10)
    read = list(journal.read())
    assert [e.seq for e in read] == list(range(1, len(acked) + 1))
    assert sorted(read, key=lambda e: e.seq) == sorted(acked, key=lambda e: e.seq)
    for t, records in enumerate(got):  # each thread's appends are in its own order
        assert [e.seq for e in records] == sorted(e.seq for e in records)
        assert all(e.board == f"b{t}" for e in records)


def test_a_failed_commit_fails_its_appends_and_changes_nothing(
    sqlite_journal: SQLiteJournal, journal_path: Path
) -> None:
    journal = sqlite_journal
    journal.append([_event(0)])
    fail_next(journal, "COMMIT")
    with pytest.raises(JournalError, match="commit failed"):
        journal.append([_event(1, key="k")])
    assert journal.last_seq() == 1 and _rows(journal_path) == 1
    (retried,) = journal.append([_event(1, key="k")])  # the journal goes on
    assert retried.seq == 2
