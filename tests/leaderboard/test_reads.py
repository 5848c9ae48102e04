"""Reads: top, cursor pages, page_at, around at the edges, ranges, percentile."""

from __future__ import annotations

import pytest

from ranked.errors import InvalidCursorError, InvalidScoreError
from ranked.leaderboard import Leaderboard, PageSizeError

from .conftest import Env


def filled(env: Env, count: int = 10, name: str = "reads", **options: object) -> Leaderboard:
    board = Leaderboard(env.backend, name, operator="set", **options)  # type: ignore[arg-type]
    board.submit_many([(f"p{i:02d}", float(i)) for i in range(count)])
    return board


def test_top_is_best_first(env: Env) -> None:
    board = filled(env)
    assert [(e.member, e.score, e.rank) for e in board.top(3)] == [
        ("p09", 9.0, 1),
        ("p08", 8.0, 2),
        ("p07", 7.0, 3),
    ]
    assert len(board.top(100)) == 10
    assert Leaderboard(env.backend, "empty").top(5) == []


def test_cursor_pages_cover_the_board_once_despite_writes(env: Env) -> None:
    board = filled(env, 10)
    first = board.page(size=4)
    assert [e.member for e in first.entries] == ["p09", "p08", "p07", "p06"]
    assert first.next_cursor is not None
    board.submit("p99", 100)  # lands before the cursor: must not shift the next page
    board.submit("p055", 5.5)  # lands after it: must appear
    second = board.page(first.next_cursor)
    assert [e.member for e in second.entries] == ["p055", "p05", "p04", "p03"]
    assert [e.rank for e in second.entries] == [6, 7, 8, 9]
    third = board.page(second.next_cursor)
    assert [e.member for e in third.entries] == ["p02", "p01", "p00"]
    assert third.next_cursor is None


def test_page_ranks_are_board_ranks(env: Env) -> None:
    board = filled(env, 6)
    page = board.page(size=2)
    second = board.page(page.next_cursor)
    assert [e.rank for e in second.entries] == [3, 4]


def test_exact_last_page_has_no_cursor(env: Env) -> None:
    board = filled(env, 4)
    page = board.page(size=2)
    last = board.page(page.next_cursor)
    assert len(last.entries) == 2 and last.next_cursor is None
    assert board.page(size=4).next_cursor is None


def test_page_at_offsets(env: Env) -> None:
    board = filled(env, 10)
    page = board.page_at(8, 5)
    assert [e.member for e in page.entries] == ["p01", "p00"]
    assert page.next_cursor is None
    middle = board.page_at(2, 3)
    assert [e.rank for e in middle.entries] == [3, 4, 5]
    after = board.page(middle.next_cursor)
    assert after.entries[0].member == "p04"
    assert board.page_at(50, 3).entries == ()


def test_bad_cursors(env: Env) -> None:
    board = filled(env, 5)
    token = board.page(size=2).next_cursor
    assert token is not None
    with pytest.raises(InvalidCursorError):
        board.page(token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1])
    with pytest.raises(InvalidCursorError):
        Leaderboard(env.backend, "other").page(token)
    with pytest.raises(InvalidCursorError):
        Leaderboard(env.backend, "reads", higher_is_better=False).page(token)
    with pytest.raises(InvalidCursorError):
        board.page("not a cursor")


def test_page_sizes_are_bounded(env: Env) -> None:
    board = filled(env, 5, max_page_size=3)
    for call in (
        lambda: board.top(4),
        lambda: board.page(size=4),
        lambda: board.page_at(0, 4),
        lambda: board.around("p01", 2, 2),
        lambda: board.between(0, 10, count=4),
        lambda: board.ranks_of(["a", "b", "c", "d"]),
        lambda: board.top(0),
        lambda: board.page_at(-1, 2),
        lambda: board.around("p01", -1, 1),
    ):
        with pytest.raises(PageSizeError):
            call()
    assert len(board.between(0, 10)) == 3  # the default count is the cap


def test_around_is_shifted_at_the_edges(env: Env) -> None:
    board = filled(env, 10)  # order: p09 (index 0) ... p00 (index 9)
    top = board.around("p09", 2, 2)
    assert [e.member for e in top.entries] == ["p09", "p08", "p07", "p06", "p05"]
    assert top.member_index == 0 and top.member is not None and top.member.member == "p09"
    near_top = board.around("p08", 2, 2)
    assert near_top.entries[0].member == "p09" and near_top.member_index == 1
    assert len(near_top.entries) == 5
    bottom = board.around("p00", 2, 2)
    assert [e.member for e in bottom.entries] == ["p04", "p03", "p02", "p01", "p00"]
    assert bottom.member_index == 4
    middle = board.around("p05", 1, 2)
    assert [e.member for e in middle.entries] == ["p06", "p05", "p04", "p03"]
    assert [e.rank for e in middle.entries] == [4, 5, 6, 7]
    absent = board.around("nobody")
    assert absent.entries == () and absent.member_index is None and absent.member is None
    small = filled(env, 3, "small")
    assert len(small.around("p01", 5, 5).entries) == 3


def test_counts_and_score_ranges(env: Env) -> None:
    board = filled(env, 10)
    assert board.count() == 10
    assert board.count_between(2, 4) == 3
    assert board.count_between(4, 2) == 0
    assert board.count_between(float("-inf"), float("inf")) == 10
    got = board.between(2, 6, offset=1, count=2)
    assert [(e.member, e.rank) for e in got] == [("p05", 5), ("p04", 6)]
    assert board.between(7, 3) == []
    with pytest.raises(InvalidScoreError):
        board.count_between(float("nan"), 3)
    low = Leaderboard(env.backend, "reads", operator="set", higher_is_better=False)
    assert [e.member for e in low.between(2, 4)] == ["p02", "p03", "p04"]
    assert low.top(1)[0].rank == 1


def test_percentile(env: Env) -> None:
    board = Leaderboard(env.backend, "pct", operator="set")
    board.submit_many([("a", 10), ("b", 20), ("c", 20), ("d", 30), ("e", 40)])
    assert board.percentile("a") == 0.0
    assert board.percentile("b") == 20.0
    assert board.percentile("c") == 20.0
    assert board.percentile("d") == 60.0
    assert board.percentile("e") == 80.0
    assert board.percentile("zz") is None
    low = Leaderboard(env.backend, "pct", operator="set", higher_is_better=False)
    assert low.percentile("a") == 80.0
    assert low.percentile("e") == 0.0


def test_entry_and_score(env: Env) -> None:
    board = filled(env, 5)
    entry = board.entry("p03")
    assert entry is not None and (entry.member, entry.score, entry.rank) == ("p03", 3.0, 2)
    assert board.entry("p03", style="unique") == entry
    assert board.score("p04") == 4.0
