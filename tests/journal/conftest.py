"""Fixtures of the journal tests: a fresh journal file in pytest's tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ranked.journal import SQLiteJournal, open_journal


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


@pytest.fixture
def journal(journal_path: Path) -> Iterator[SQLiteJournal]:
    store = open_journal(f"sqlite://{journal_path}")
    try:
        yield store
    finally:
        store.close()
