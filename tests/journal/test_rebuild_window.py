"""Rebuilding one window of a journaled board: the window comes back as it was, with its
TTL, every other window is left alone, a write that comes in meanwhile makes the rebuild
start again (never lost), and the staging keys leave nothing behind. On memory://, Redis
and Redis Cluster, with SQLite."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ranked import Leaderboard
from ranked.errors import BoardConfigError

from .conftest import Index
from .test_board import url_of

# yesterday and today (UTC): a daily key is kept for its retention after its day ends,
# counted on the backend's own clock
T0 = (int(time.time()) // 86_400 - 1) * 86_400_000
DAY1, DAY2 = (
    datetime.fromtimestamp(ms / 1000, UTC).strftime("d%Y-%m-%d") for ms in (T0, T0 + 86_400_000)
)


class Clock:
    def __init__(self) -> None:
        self.now = T0 + 3_600_000

    def __call__(self) -> int:
        return self.now


def rows(board: Leaderboard, window: str) -> list[tuple[Any, ...]]:
    return [(e.member, e.score, e.rank) for e in board.top(100, window=window)]


def keys_of(board: Leaderboard, window: str) -> list[bytes]:
    keys = board._plan.core.keys
    return [keys.window(window), keys.dense(window), keys.dense_counts(window), keys.ties(window)]


def two_days(index: Index, path: Path, clock: Clock, **options: Any) -> Leaderboard:
    """A board of all-time and daily windows, ties broken by a secondary value (so every
    kind of window key exists), written over two days, with a removal on day two of a
    member who scored on day one."""
    board = Leaderboard(
        index.backend(),
        "arena",
        windows=("all", "daily"),
        operator="incr",
        tie_break="secondary",
        rank_style="dense",
        journal=url_of(path),
        clock=clock,
        **options,
    )
    for i in range(40):
        clock.now += 60_000
        board.submit(f"p{i % 9}", float(i % 4))
    board.submit_many({"x": 3.0, "y": 3.0, "z": 1.0})
    clock.now = T0 + 86_400_000 + 60_000  # day two
    for i in range(25):
        clock.now += 60_000
        board.submit(f"p{i % 6}", float(i % 5))
    board.remove("p2", actor="mod", reason="cheating")
    return board


def test_one_window_is_rebuilt_and_the_others_are_left_alone(index: Index, tmp_path: Path) -> None:
    clock = Clock()
    board = two_days(index, tmp_path / "journal.db", clock)
    before = {w: rows(board, w) for w in ("all", DAY1, DAY2)}
    assert before[DAY1] and before[DAY2] and ("p2", 4.0, 3) not in before[DAY1]
    assert all(m != "p2" for m, _, _ in before[DAY1])  # the removal reached day one too
    board._steps.delete(keys_of(board, DAY1) + keys_of(board, DAY2))
    board._steps.hash_set(keys_of(board, "all")[3], {b"p0": b"1"}, None)  # a mark
    assert rows(board, DAY2) == []

    assert board.rebuild_window(DAY2) == len(before[DAY2])
    assert rows(board, DAY2) == before[DAY2]
    assert board.rebuild_window(DAY1) == len(before[DAY1])
    assert rows(board, DAY1) == before[DAY1]
    assert rows(board, "all") == before["all"]
    mark = board._steps.hash_get(keys_of(board, "all")[3], [b"p0"])
    assert mark == [b"1"]  # the all-time window was not touched
    if index.client is not None:  # the rebuilt key keeps the TTL a daily key has
        ttl = index.client().pttl(keys_of(board, DAY2)[0])
        assert 0 < ttl <= 8 * 86_400_000

    assert board.rebuild_window("all") == len(before["all"])
    assert rows(board, "all") == before["all"]
    assert board.rebuild_window() == len(before["all"])  # the primary window by default
    board.submit("p0", 1.0)  # the board goes on as before
    assert board.score("p0", window=DAY2) == dict((m, s) for m, s, _ in before[DAY2])["p0"] + 1
    staging = Leaderboard(
        board.backend, "arena", windows=("all", "daily"), namespace="rk~rebuild", clock=clock
    )
    assert [staging.count(window=w) for w in ("all", DAY1, DAY2)] == [0, 0, 0]
    board.close()


def test_a_write_during_the_rebuild_makes_it_start_again(index: Index, tmp_path: Path) -> None:
    clock = Clock()
    board = two_days(index, tmp_path / "journal.db", clock)
    make_staging = board._staging
    calls = []

    def staging(source: Any) -> Any:
        calls.append(source.up_to_seq)
        if len(calls) == 1:  # after the rebuild read the index's number
            board.submit("late", 50.0)
        return make_staging(source)

    board._staging = staging  # type: ignore[method-assign]
    board._steps.delete(keys_of(board, DAY2))
    assert board.rebuild_window(DAY2) > 0
    assert len(calls) == 2 and calls[1] > calls[0]
    assert rows(board, DAY2)[0] == ("late", 50.0, 1)
    board.close()


def test_a_board_without_a_journal_cannot_rebuild_a_window() -> None:
    with pytest.raises(BoardConfigError, match="no journal"):
        Leaderboard("memory://", "plain").rebuild_window("all")


def test_an_unknown_window_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    clock = Clock()
    board = Leaderboard(
        "memory://", "arena", windows=("all", "daily"), journal=url_of(tmp_path / "j.db"),
        clock=clock,
    )  # fmt: skip
    board.submit("ann", 3)
    from ranked.errors import WindowError

    with pytest.raises(WindowError):
        board.rebuild_window("w2026-W01")
    assert rows(board, "all") == [("ann", 3.0, 1)]
    board.close()


def test_a_rebuild_reads_the_journal_not_a_snapshot_of_the_damage(tmp_path: Path) -> None:
    """A snapshot is a copy of the index: damage written to the index and then
    snapshotted must not come back from a rebuild."""
    board = Leaderboard(
        "memory://", "arena", operator="incr", journal=url_of(tmp_path / "j.db"),
    )  # fmt: skip
    board.submit("alice", 100)
    board.submit("bob", 50)
    board._steps.delete([keys_of(board, "all")[0]])  # a bad release's damage: alice gone
    assert board.snapshot() is not None  # ... and a snapshot taken of it
    assert [e.member for e in board.top(5)] == []
    board.rebuild()
    assert [(e.member, e.score) for e in board.top(5)] == [("alice", 100.0), ("bob", 50.0)]
    board.close()
