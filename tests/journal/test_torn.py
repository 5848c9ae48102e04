"""A journal file damaged at its end: a torn -wal tail is recovered to the last complete
commit (SQLite's WAL recovery); a database file cut inside or at a page raises
JournalError on open. Never a crash, never a silently wrong answer."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from ranked.errors import JournalError
from ranked.journal import Event, JournalStore, NewEvent, open_journal


def _fill(store: JournalStore, count: int) -> list[Event]:
    records: list[Event] = []
    for i in range(count):  # one commit per append: many WAL frames
        records += store.append(
            [NewEvent(board="b", operation="submit", at_us=i, value=b"v" * 300, key=f"k{i}")]
        )
    return records


@pytest.mark.parametrize("cut", [1, 100, 4000, 20_000])
def test_torn_wal_tail_recovers_to_the_last_complete_commit(tmp_path: Path, cut: int) -> None:
    live = tmp_path / "live.db"
    store = open_journal(f"sqlite://{live}")
    try:
        records = _fill(store, 60)
        # a copy of the files as a crash leaves them: the WAL not yet checkpointed
        torn = tmp_path / "torn.db"
        shutil.copy(live, torn)
        shutil.copy(f"{live}-wal", f"{torn}-wal")
    finally:
        store.close()
    wal = Path(f"{torn}-wal")
    with wal.open("r+b") as handle:
        handle.truncate(wal.stat().st_size - cut)
    with open_journal(f"sqlite://{torn}") as journal:
        read = list(journal.read())
        # a prefix of what was appended: the torn commits are gone, nothing else
        assert 0 < len(read) < len(records)
        assert read == records[: len(read)]
        assert journal.last_seq() == len(read)
        # and it goes on from there
        (new,) = journal.append([NewEvent(board="b", operation="clear", at_us=0)])
        assert new.seq == len(read) + 1


@pytest.mark.parametrize("cut", [1, 100, 4095, 4096, 4097])
def test_a_cut_database_file_is_refused(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "j.db"
    with open_journal(f"sqlite://{path}") as store:
        _fill(store, 60)
    assert not Path(f"{path}-wal").exists()  # a clean close checkpoints the WAL away
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size - cut)
    with pytest.raises(JournalError):
        open_journal(f"sqlite://{path}")


def test_garbage_over_the_last_page_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with open_journal(f"sqlite://{path}") as store:
        _fill(store, 60)
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(size - 4096)
        handle.write(b"\xa5" * 4096)
    with pytest.raises(JournalError, match="malformed"):
        open_journal(f"sqlite://{path}")


def test_a_damaged_page_is_a_journal_error_when_read(tmp_path: Path) -> None:
    """No full integrity check on open (it would cost O(n)): a damaged page elsewhere is
    found when it is read, as a JournalError, never as wrong events."""
    path = tmp_path / "j.db"
    with open_journal(f"sqlite://{path}") as store:
        _fill(store, 60)
    with sqlite3.connect(path) as conn:
        (first_leaf,) = conn.execute(
            "SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf'"
            " ORDER BY pageno LIMIT 1"
        ).fetchone()
    with path.open("r+b") as handle:
        handle.seek((first_leaf - 1) * 4096)
        handle.write(b"\xa5" * 4096)
    with open_journal(f"sqlite://{path}") as journal, pytest.raises(JournalError):
        list(journal.read())
