"""The periodic snapshot of a journaled ``memory://`` board: dumped in the apply that
reaches ``snapshot_every``, its file written in a thread of its own, so that the applies
after it do not wait for the file; a failed write is logged, not raised. (pytest-asyncio
is not used: each asyncio test runs its coroutine with ``asyncio.run``.)"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from ranked.journal import SnapshotStore
from ranked.leaderboard import AsyncLeaderboard, Leaderboard

from .conftest import Index


class _HeldWrites:
    """Stands for a snapshot store's ``write``: records each call and blocks until
    released (or raises ``error``)."""

    def __init__(self, store: SnapshotStore, error: Exception | None = None) -> None:
        self.real = store.write
        self.calls: list[int] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.error = error

    def __call__(self, board: str, seq: int, payload: bytes | bytearray | memoryview) -> Path:
        self.calls.append(seq)
        if self.error is not None:
            raise self.error
        self.started.set()
        assert self.release.wait(30)
        return self.real(board, seq, payload)


def _snapshots(board: AsyncLeaderboard | Leaderboard) -> SnapshotStore:
    journal = board._journal
    assert journal is not None and journal.snapshots is not None
    return journal.snapshots


def _last(board: AsyncLeaderboard | Leaderboard) -> int:
    """The board's last journaled number (what a snapshot taken now covers)."""
    return int(_snapshots_journal(board).last_board_seq(board.name))


def _snapshots_journal(board: AsyncLeaderboard | Leaderboard) -> Any:
    journal = board._journal
    assert journal is not None
    return journal.store


def _files(path: Path, board: str) -> list[str]:
    return sorted(p.name for p in Path(f"{path}.snapshots").glob(f"{board}.*.snap"))


def test_applies_do_not_wait_for_the_file(tmp_path: Path) -> None:
    asyncio.run(_applies_do_not_wait_for_the_file(tmp_path))


async def _applies_do_not_wait_for_the_file(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    board = AsyncLeaderboard(
        "memory://", "periodic-async", journal=f"sqlite://{path}", snapshot_every=5
    )
    await board.submit("m0", 0)  # opens the board
    snapshots = _snapshots(board)
    held = _HeldWrites(snapshots)
    snapshots.write = held  # type: ignore[method-assign]
    for i in range(1, 5):
        await board.submit(f"m{i}", i)
    assert await asyncio.to_thread(held.started.wait, 10)
    first = list(held.calls)
    assert len(first) == 1
    # the file is still being written: later submits are applied all the same, and no
    # second periodic snapshot starts while the first one is written
    for i in range(5, 13):
        await asyncio.wait_for(board.submit(f"m{i}", i), 10)
    assert await board.score("m12") == 12
    assert held.calls == first
    last = _last(board)
    asked = asyncio.ensure_future(board.snapshot())
    await asyncio.sleep(0.05)
    assert not asked.done()  # its file waits behind the periodic one, never before it
    held.release.set()
    assert await asked == last
    assert held.calls == [*first, last]
    await board.close()
    assert _files(path, "periodic-async")[-1].startswith("periodic-async.")


def test_a_blocking_board_writes_behind_too(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    board = Leaderboard("memory://", "periodic-sync", journal=f"sqlite://{path}", snapshot_every=3)
    board.submit("m0", 0)
    snapshots = _snapshots(board)
    held = _HeldWrites(snapshots)
    snapshots.write = held  # type: ignore[method-assign]
    board.submit("m1", 1)
    board.submit("m2", 2)
    assert held.started.wait(10)
    first = list(held.calls)
    assert len(first) == 1
    for i in range(3, 9):
        board.submit(f"m{i}", i)  # applied on the committer thread while the file waits
    assert board.score("m8") == 8
    assert held.calls == first
    held.release.set()
    last = _last(board)
    board.close()
    assert held.calls == [*first, last]


def test_a_failed_write_is_logged_and_tried_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="ranked.journal"):
        asyncio.run(_a_failed_write_is_logged_and_tried_again(tmp_path))
    assert "was not written: No space left on device" in caplog.text


async def _a_failed_write_is_logged_and_tried_again(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    board = AsyncLeaderboard(
        "memory://", "periodic-fails", journal=f"sqlite://{path}", snapshot_every=4
    )
    await board.submit("m0", 0)
    snapshots = _snapshots(board)
    failing = _HeldWrites(snapshots, OSError("No space left on device"))
    snapshots.write = failing  # type: ignore[method-assign]
    for i in range(1, 12):
        await board.submit(f"m{i}", i)  # none of them raises
        await asyncio.sleep(0.01)  # lets the writer thread end before the next period
    assert len(failing.calls) >= 2  # each period tries again after a failure
    assert await board.score("m11") == 11
    board._journal.snapshots = None  # type: ignore[union-attr]
    await board.close()


def test_a_period_on_every_backend_keeps_writes_going(index: Index, tmp_path: Path) -> None:
    """On Redis (which persists its own keys) the board takes no snapshot, and the write
    that reaches the period succeeds like the others."""
    path = tmp_path / "journal.db"
    board = Leaderboard(
        index.backend(), "periodic-any", journal=f"sqlite://{path}", snapshot_every=2
    )
    try:
        for i in range(7):
            board.submit(f"m{i}", i)
        assert board.score("m6") == 6
        journal = board._journal
        assert journal is not None
        assert (journal.snapshots is None) == (index.kind != "memory")
    finally:
        board.close()
        board.backend.close()
    files = _files(path, "periodic-any")
    assert bool(files) == (index.kind == "memory")
