"""The SQLite journal's member index: ``member_seqs``, written by the committer in sorted
runs, and the scan of the tail after the last run; and the migration of a version 1 file
to it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ranked.journal import NewEvent, SQLiteJournal, open_journal
from ranked.journal import sqlite as sqlite_store


def _event(i: int, member: str, *, board: str = "b") -> NewEvent:
    return NewEvent(
        board=board,
        operation="submit",
        member=member.encode(),
        value=i.to_bytes(4, "big"),
        at_us=1_700_000_000_000_000 + i,
    )


def _runs(path: Path) -> list[int]:
    with sqlite3.connect(path) as conn:
        return [int(row[0]) for row in conn.execute("SELECT upto FROM member_runs ORDER BY upto")]


def _mark(path: Path) -> int:
    return max(_runs(path), default=0)


def _indexed(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM member_seqs").fetchone()[0])


def _expected(store: SQLiteJournal, board: str, member: bytes) -> list[int]:
    return [e.seq for e in store.read(board=board) if e.member == member]


def test_history_spans_the_indexed_events_and_the_tail(
    journal_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "MEMBER_INDEX_EVERY", 5)
    store = open_journal(f"sqlite://{journal_path}")
    assert isinstance(store, SQLiteJournal)
    with store:
        for i in range(23):
            store.append([_event(i, f"m{i % 3}", board="b" if i % 4 else "c")])
        # a run every 5 events, and a tail of 3 after the last one
        assert _runs(journal_path) == [5, 10, 15, 20]
        mark = _mark(journal_path)
        assert _indexed(journal_path) == mark
        for board in ("b", "c"):
            for member in (b"m0", b"m1", b"m2", b"absent"):
                seqs = _expected(store, board, member)
                assert [e.seq for e in store.member_events(board, member)] == seqs
                assert [e.seq for e in store.member_events(board, member, limit=2)] == seqs[:2]
        assert any(e.seq > mark for e in store.member_events("b", b"m1"))
        assert any(e.seq <= mark for e in store.member_events("b", b"m1"))
    with open_journal(f"sqlite://{journal_path}") as reopened:
        assert isinstance(reopened, SQLiteJournal)
        seqs = _expected(reopened, "b", b"m2")
        assert [e.seq for e in reopened.member_events("b", b"m2")] == seqs


def test_a_long_history_pages_across_the_mark(
    journal_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "MEMBER_INDEX_EVERY", 700)
    with open_journal(f"sqlite://{journal_path}") as store:
        for start in range(0, 1500, 100):
            store.append([_event(i, "m" if i % 2 else f"o{i}") for i in range(start, start + 100)])
        assert _mark(journal_path) == 1400
        history = store.member_events("b", b"m")
        assert [e.seq for e in history] == list(range(2, 1501, 2))  # 750: two pages of 512


_V1_SCHEMA = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE events (seq INTEGER PRIMARY KEY, board_seq INTEGER NOT NULL,"
    " board TEXT NOT NULL, member BLOB, operation TEXT NOT NULL, score REAL,"
    " value BLOB NOT NULL, at_us INTEGER NOT NULL, key TEXT, actor TEXT, reason TEXT)",
    "CREATE UNIQUE INDEX events_board_key ON events (board, key) WHERE key IS NOT NULL",
    "CREATE INDEX events_board_seq ON events (board, seq)",
    "CREATE UNIQUE INDEX events_board_number ON events (board, board_seq)",
    "CREATE INDEX events_board_member ON events (board, member, seq, operation, score)",
    "INSERT INTO schema_version (version) VALUES (1)",
)


def test_a_version_1_file_is_migrated_when_opened(journal_path: Path) -> None:
    with sqlite3.connect(journal_path) as conn:
        for statement in _V1_SCHEMA:
            conn.execute(statement)
        conn.executemany(
            "INSERT INTO events (seq, board_seq, board, member, operation, score, value,"
            " at_us) VALUES (?, ?, 'b', ?, 'submit', NULL, x'00', 1700000000000000)",
            [(i, i, f"m{i % 4}".encode() if i % 10 else None) for i in range(1, 101)],
        )
    with open_journal(f"sqlite://{journal_path}") as store:
        assert isinstance(store, SQLiteJournal)
        assert [e.seq for e in store.member_events("b", b"m1")] == [
            i for i in range(1, 101) if i % 4 == 1 and i % 10
        ]
        store.append([_event(101, "m1")])
        assert store.member_events("b", b"m1")[-1].seq == 101
    with sqlite3.connect(journal_path) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(2,)]
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        assert "events_board_member" not in indexes
        assert conn.execute("SELECT count(*) FROM member_seqs").fetchone()[0] == 90
    assert _runs(journal_path) == [100]  # the whole journal in one run
