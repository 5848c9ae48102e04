"""Fixtures of the journal tests: a fresh journal on each store, SQLite (a file in pytest's
tmp_path) and PostgreSQL (a fresh database on the session's server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ranked.journal import JournalStore, SQLiteJournal, open_journal
from servers import PostgresServer


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


@pytest.fixture(params=["sqlite", "postgresql"])
def journal_url(request: pytest.FixtureRequest, journal_path: Path) -> str:
    """The URL of a fresh, not yet created journal on each store."""
    if request.param == "sqlite":
        return f"sqlite://{journal_path}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.new_database()


@pytest.fixture
def journal(journal_url: str) -> Iterator[JournalStore]:
    store = open_journal(journal_url)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def pg_url(postgres_server: PostgresServer) -> str:
    """The URL of a fresh, empty PostgreSQL database."""
    return postgres_server.new_database()


@pytest.fixture
def sqlite_journal(journal_path: Path) -> Iterator[SQLiteJournal]:
    """A fresh SQLite journal, for the tests of what is SQLite's own."""
    store = open_journal(f"sqlite://{journal_path}")
    assert isinstance(store, SQLiteJournal)
    try:
        yield store
    finally:
        store.close()
