"""Reads: top, cursor pages, page_at, around at the edges, ranges, percentile."""

from __future__ import annotations

import math

import pytest

from ranked.core.cursors import Cursor, Direction
from ranked.core.lex import LexLayout
from ranked.core.models import Entry, Page
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


BOARD_KINDS: list[dict[str, object]] = [
    {},
    {"higher_is_better": False},
    {"tie_break": "time"},
    {"tie_break": "time", "higher_is_better": False},
    {"tie_break": "secondary"},
    {"tie_break": LexLayout(descending=(True,))},
]


def kinds_board(env: Env, options: dict[str, object]) -> Leaderboard:
    board = Leaderboard(env.backend, "kinds", operator="set", **options)  # type: ignore[arg-type]
    for member, score in [("a", 1), ("b", 2), ("c", 2), ("d", 3)]:
        if board.config.lex is not None:
            board.submit_lex(member, score)
        else:
            board.submit(member, score)
    return board


@pytest.mark.parametrize("options", BOARD_KINDS)
@pytest.mark.parametrize("offset", [2**53 - 1, 2**53, 10**17, 10**18, 10**30, 10**400])
def test_far_offsets_read_an_empty_page(env: Env, options: dict[str, object], offset: int) -> None:
    board = kinds_board(env, options)
    # Before: Redis answered a ResponseError with the Lua script's error text.
    assert board.page_at(offset, 10) == Page((), None)
    assert board.between(0, 10, offset=offset) == []
    assert len(board.page_at(3, 10).entries) == 1


@pytest.mark.parametrize("options", BOARD_KINDS)
def test_infinite_and_huge_bounds(env: Env, options: dict[str, object]) -> None:
    board = kinds_board(env, options)
    inf = math.inf
    # inf means unbounded; an int past the float64 range is the infinity beyond it.
    for low, high, count in [
        (-inf, inf, 4),
        (0, 10**400, 4),
        (-(10**400), 10**400, 4),
        (2, inf, 3),
        (-inf, 2, 3),
        (inf, inf, 0),
        (-inf, -inf, 0),
        (10**400, inf, 0),
        (-(10**400), -1e300, 0),
        (1e300, 10**400, 0),
        (3, 2, 0),
    ]:
        assert board.count_between(low, high) == count, (low, high)
        assert len(board.between(low, high)) == count, (low, high)
    with pytest.raises(InvalidScoreError):
        board.count_between(math.nan, 1)


def test_int_bounds_are_exact_beyond_2_53(env: Env) -> None:
    board = Leaderboard(env.backend, "wide", operator="set")
    board.submit_many([("lo", 2**53), ("hi", 2**53 + 2)])
    assert board.count_between(2**53 + 1, 2**53 + 1) == 0  # float(2**53 + 1) is 2**53
    assert board.count_between(2**53 + 1, 2**53 + 3) == 1
    assert board.count_between(2**53 - 1, 2**53 + 1) == 1
    assert [e.member for e in board.between(2**53 + 1, 10**400)] == ["hi"]


@pytest.mark.parametrize("options", BOARD_KINDS)
@pytest.mark.parametrize("score", [1e300, -1e300, 2.0**60, 2.0**53 + 2, math.inf, -math.inf])
def test_forged_cursors_far_away_answer_alike(
    env: Env, options: dict[str, object], score: float
) -> None:
    board = kinds_board(env, options)
    high_first = board._plan.core.high_first
    direction = Direction.DESC if high_first else Direction.ASC
    everyone = board.top(10)
    for member in ("b", "zzz", ""):
        cursor = Cursor(board.name, "all", direction, score, member, 2).encode()
        page = board.page(cursor)
        assert len(page.entries) <= 2
        assert [e.rank for e in page.entries] == sorted(e.rank for e in page.entries)
        if options in ({}, {"higher_is_better": False}):  # stored scores are the scores
            point = (score, member.encode())

            def after(entry: Entry, point: tuple[float, bytes] = point) -> bool:
                key = (entry.score, str(entry.member).encode())
                return key < point if high_first else key > point

            assert list(page.entries) == [e for e in everyone if after(e)][:2]
