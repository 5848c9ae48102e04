"""What is PostgreSQL's own in the journal store: the URL, schema version, durability
settings, and several processes appending to one journal (the store-generic tests run on
PostgreSQL through the ``journal`` fixture in test_store.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from ranked.errors import JournalConfigError, JournalError, JournalVersionError
from ranked.journal import NewEvent, PostgresJournal, open_journal

HERE = Path(__file__).resolve().parent


def _event(i: int, key: str | None = None) -> NewEvent:
    return NewEvent(board="b", operation="submit", at_us=i, key=key)


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_both_schemes_and_options(pg_url: str, scheme: str) -> None:
    url = pg_url.replace("postgresql://", f"{scheme}://") + "?durability=none&connect_timeout=5"
    with open_journal(url) as journal:
        assert isinstance(journal, PostgresJournal)
        assert journal.durability == "none"
        assert journal.append([_event(1)])[0].seq == 1


@pytest.mark.parametrize(("durability", "setting"), [("always", "on"), ("none", "off")])
def test_durability_sets_synchronous_commit(pg_url: str, durability: str, setting: str) -> None:
    with open_journal(f"{pg_url}?durability={durability}") as journal:
        assert isinstance(journal, PostgresJournal)
        row = journal._writer.conn.execute("SHOW synchronous_commit").fetchone()
        assert row == (setting,)
        journal.append([_event(1)])
        assert journal.last_seq() == 1


def test_batch_mode_commits_on_flush_and_close(pg_url: str) -> None:
    with open_journal(f"{pg_url}?durability=batch&max_delay_ms=60000") as journal:
        records = journal.append([_event(1), _event(2)])
        assert [e.seq for e in records] == [1, 2]
        assert journal.last_seq() == 0  # acknowledged, not yet committed
        journal.flush()
        assert journal.last_seq() == 2
        journal.append([_event(3)])
    with open_journal(pg_url) as journal:
        assert journal.last_seq() == 3


@pytest.mark.parametrize("query", ["durability=sometimes", "max_delay_ms=0", "max_delay_ms=x"])
def test_bad_options(pg_url: str, query: str) -> None:
    with pytest.raises(JournalConfigError):
        open_journal(f"{pg_url}?{query}")


def test_an_unreachable_server_is_a_journal_error(pg_url: str) -> None:
    with pytest.raises(JournalError, match="cannot be opened"):
        open_journal(pg_url.rsplit("/", 1)[0] + "/no_such_database")


def test_schema_version_is_recorded_and_checked(pg_url: str) -> None:
    open_journal(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
        conn.execute("UPDATE schema_version SET version = 7")
    with pytest.raises(JournalVersionError, match=r"schema version 7.*reads version 1"):
        open_journal(pg_url)


def test_a_foreign_events_table_is_refused(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE events (x int)")
    with pytest.raises(JournalError, match="not a ranked journal"):
        open_journal(pg_url)


def test_two_journals_open_a_fresh_database_at_once(pg_url: str) -> None:
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            open_journal(pg_url).close()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_two_processes_append_to_one_journal(pg_url: str) -> None:
    """Two processes append at once while this one follows with read(after_seq): every
    event is read back once, seqs strictly increase, and following never misses one."""
    open_journal(pg_url).close()  # the schema, before the children race
    count = 300
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    children = [
        subprocess.Popen(
            [sys.executable, str(HERE / "pg_child.py"), pg_url, name, str(count)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in ("x", "y")
    ]
    followed: list[int] = []
    with open_journal(pg_url) as journal:
        while any(child.poll() is None for child in children):
            after = followed[-1] if followed else 0
            followed.extend(e.seq for e in journal.read(after_seq=after))
        acked = {
            name: [int(line) for line in child.communicate()[0].split()]
            for name, child in zip("xy", children, strict=True)
        }
        assert all(child.returncode == 0 for child in children)
        after = followed[-1] if followed else 0
        followed.extend(e.seq for e in journal.read(after_seq=after))
        read = list(journal.read())
    seqs = [e.seq for e in read]
    assert seqs == sorted(set(seqs))
    for name, records in acked.items():
        assert len(records) == count + count // 5
        assert records == sorted(records)
        assert [e.seq for e in read if e.board == f"p{name}"] == records
    assert len(read) == 2 * (count + count // 5)
    assert followed == seqs  # a follower saw every event, in order, none twice
