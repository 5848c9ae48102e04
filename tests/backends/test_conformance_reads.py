"""Conformance: reads. Rank styles with ties in both directions, ranks of lists, pages,
cursor pages, around-me, score ranges, counts, ZMSCORE and plain ranges."""

from __future__ import annotations

import math
import random

import pytest

from ranked.core.ranks import RankStyle, ranks
from ranked.leaderboard._requests import Target

from .conftest import STYLES, Steps, fill, same_rows, submit, target

SEED = {b"a": 100.0, b"b": 100.0, b"c": 90.0, b"d": 80.0}
# Board order of SEED: high first, ties by descending member (ZREVRANK); low first, ascending.
HIGH_ORDER = [b"b", b"a", b"c", b"d"]
LOW_ORDER = [b"d", b"c", b"a", b"b"]
EXPECTED = {
    (True, RankStyle.UNIQUE): [1, 2, 3, 4],
    (True, RankStyle.COMPETITION): [1, 1, 3, 4],
    (True, RankStyle.DENSE): [1, 1, 2, 3],
    (False, RankStyle.UNIQUE): [1, 2, 3, 4],
    (False, RankStyle.COMPETITION): [1, 2, 3, 3],
    (False, RankStyle.DENSE): [1, 2, 3, 3],
}


def board_rows(high_first: bool, style: RankStyle) -> list[tuple[bytes, float, int]]:
    order = HIGH_ORDER if high_first else LOW_ORDER
    return [
        (member, SEED[member], rank)
        for member, rank in zip(order, EXPECTED[(high_first, style)], strict=True)
    ]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("high_first", [True, False])
def test_seed_rank_styles(backend: Steps, high_first: bool, style: RankStyle) -> None:
    board = fill(backend, SEED, high_first=high_first)
    expected = board_rows(high_first, style)
    same_rows(backend.page(board, 0, 9, high_first, style), expected)
    assert [row[2] for row in expected] == ranks([row[1] for row in expected], style)
    members = [row[0] for row in expected]
    assert backend.ranks(board, members, high_first, style) == [
        (score, rank) for _, score, rank in expected
    ]


def test_the_seed_examples(backend: Steps) -> None:
    board = fill(backend, SEED)
    members = [b"b", b"a", b"c", b"d"]
    competition = backend.ranks(board, members, True, RankStyle.COMPETITION)
    dense = backend.ranks(board, members, True, RankStyle.DENSE)
    assert [pair[1] for pair in competition if pair] == [1, 1, 3, 4]
    assert [pair[1] for pair in dense if pair] == [1, 1, 2, 3]


def test_seed000_tie_order_is_charlie_bob_alice(backend: Steps) -> None:
    board = fill(backend, {b"alice": 100, b"bob": 100, b"charlie": 100})
    rows = backend.page(board, 0, 9, True, RankStyle.UNIQUE)
    assert [row[0] for row in rows] == [b"charlie", b"bob", b"alice"]


def test_ranks_of_a_list_keep_its_order_and_report_missing(backend: Steps) -> None:
    board = fill(backend, SEED)
    found = backend.ranks(board, [b"d", b"zz", b"a", b"d"], True, RankStyle.DENSE)
    assert found == [(80.0, 3), None, (100.0, 1), (80.0, 3)]
    assert backend.ranks(board, [], True, RankStyle.DENSE) == []
    assert backend.ranks(target(board="empty"), [b"a"], True, RankStyle.UNIQUE) == [None]


def test_many_ties_and_distinct_scores(backend: Steps) -> None:
    scores = {b"m%03d" % n: float(n // 7) for n in range(100)}
    board = fill(backend, scores)
    for style in STYLES:
        rows = backend.page(board, 0, 99, True, style)
        assert [row[2] for row in rows] == ranks([row[1] for row in rows], style)
        assert backend.ranks(board, [row[0] for row in rows], True, style) == [
            (row[1], row[2]) for row in rows
        ]


@pytest.mark.parametrize("style", STYLES)
def test_page_slices_keep_the_ranks_of_the_whole_board(backend: Steps, style: RankStyle) -> None:
    board = fill(backend, SEED)
    whole = board_rows(True, style)
    for start in range(5):
        for stop in range(start, 6):
            same_rows(backend.page(board, start, stop, True, style), whole[start : stop + 1])


def test_page_is_clamped_to_the_board(backend: Steps) -> None:
    board = fill(backend, SEED)
    assert len(backend.page(board, 0, 1_000_000, True, RankStyle.UNIQUE)) == 4
    assert backend.page(board, 4, 10, True, RankStyle.UNIQUE) == []
    assert backend.page(board, 2, 1, True, RankStyle.UNIQUE) == []
    assert backend.page(target(board="empty"), 0, 10, True, RankStyle.UNIQUE) == []


@pytest.mark.parametrize("high_first", [True, False])
def test_page_after_resumes_strictly_after_the_point(backend: Steps, high_first: bool) -> None:
    board = fill(backend, SEED, high_first=high_first)
    whole = board_rows(high_first, RankStyle.COMPETITION)
    for position, (member, score, _) in enumerate(whole):
        rows = backend.page_after(board, score, member, 10, high_first, RankStyle.COMPETITION)
        same_rows(rows, whole[position + 1 :])
        limited = backend.page_after(board, score, member, 1, high_first, RankStyle.COMPETITION)
        same_rows(limited, whole[position + 1 : position + 2])


def test_page_after_a_point_that_left_the_board(backend: Steps) -> None:
    board = fill(backend, {b"a": 50, b"b": 40, b"c": 30, b"d": 20, b"e": 10})
    first = backend.page(board, 0, 1, True, RankStyle.UNIQUE)
    last_member, last_score, _ = first[-1]
    assert last_member == b"b"
    backend.remove([board], [b"b"])
    rows = backend.page_after(board, last_score, last_member, 2, True, RankStyle.UNIQUE)
    same_rows(rows, [(b"c", 30.0, 2), (b"d", 20.0, 3)])
    submit(backend, b"c", 60, "set")  # c moves ahead of the cursor: not seen again
    rows = backend.page_after(board, 30.0, b"c", 5, True, RankStyle.UNIQUE)
    same_rows(rows, [(b"d", 20.0, 3), (b"e", 10.0, 4)])


def test_page_after_a_point_never_on_the_board(backend: Steps) -> None:
    board = fill(backend, SEED)
    same_rows(
        backend.page_after(board, 95.0, b"zz", 10, True, RankStyle.DENSE),
        [(b"c", 90.0, 2), (b"d", 80.0, 3)],
    )
    # Same score, member between the tied ones: b > ab > a in descending member order.
    same_rows(
        backend.page_after(board, 100.0, b"ab", 10, True, RankStyle.COMPETITION),
        [(b"a", 100.0, 1), (b"c", 90.0, 3), (b"d", 80.0, 4)],
    )
    same_rows(
        backend.page_after(board, math.inf, b"", 2, True, RankStyle.UNIQUE),
        [(b"b", 100.0, 1), (b"a", 100.0, 2)],
    )
    assert backend.page_after(board, -math.inf, b"", 2, True, RankStyle.UNIQUE) == []
    assert backend.page_after(board, 100.0, b"a", 0, True, RankStyle.UNIQUE) == []
    assert backend.page_after(target(board="empty"), 1.0, b"a", 5, True, "unique") == []


def ten(backend: Steps, high_first: bool = True) -> Target:
    return fill(backend, {b"m%d" % n: float(n) for n in range(10)}, high_first=high_first)


def order(high_first: bool) -> list[bytes]:
    members = [b"m%d" % n for n in range(10)]
    return members[::-1] if high_first else members


@pytest.mark.parametrize("high_first", [True, False])
def test_around_in_the_middle(backend: Steps, high_first: bool) -> None:
    board = ten(backend, high_first)
    members = order(high_first)
    found = backend.around(board, members[5], 2, 3, high_first, RankStyle.UNIQUE)
    assert found is not None
    index, rows = found
    assert index == 2
    same_rows(
        rows,
        [(m, float(m[1] - 48), n + 1) for n, m in enumerate(members) if 3 <= n <= 8],
    )


@pytest.mark.parametrize("high_first", [True, False])
def test_around_is_shifted_not_shrunk_at_the_edges(backend: Steps, high_first: bool) -> None:
    board = ten(backend, high_first)
    members = order(high_first)
    top = backend.around(board, members[0], 2, 2, high_first, RankStyle.UNIQUE)
    assert top is not None
    assert top[0] == 0
    assert [row[0] for row in top[1]] == members[:5]
    second = backend.around(board, members[1], 3, 1, high_first, RankStyle.UNIQUE)
    assert second is not None
    assert second[0] == 1
    assert [row[0] for row in second[1]] == members[:5]
    bottom = backend.around(board, members[9], 2, 2, high_first, RankStyle.UNIQUE)
    assert bottom is not None
    assert bottom[0] == 4
    assert [row[0] for row in bottom[1]] == members[5:]
    assert [row[2] for row in bottom[1]] == [6, 7, 8, 9, 10]
    near = backend.around(board, members[8], 1, 4, high_first, RankStyle.UNIQUE)
    assert near is not None
    assert near[0] == 4
    assert [row[0] for row in near[1]] == members[4:]


def test_around_a_board_smaller_than_the_window(backend: Steps) -> None:
    board = fill(backend, SEED)
    found = backend.around(board, b"c", 5, 5, True, RankStyle.COMPETITION)
    assert found is not None
    assert found[0] == 2
    same_rows(found[1], board_rows(True, RankStyle.COMPETITION))
    alone = backend.around(board, b"b", 0, 0, True, RankStyle.DENSE)
    assert alone == (0, [(b"b", 100.0, 1)])


def test_around_ranks_with_ties(backend: Steps) -> None:
    board = fill(backend, SEED)
    found = backend.around(board, b"a", 0, 1, True, RankStyle.COMPETITION)
    assert found == (0, [(b"a", 100.0, 1), (b"c", 90.0, 3)])
    dense = backend.around(board, b"d", 1, 0, True, RankStyle.DENSE)
    assert dense == (1, [(b"c", 90.0, 2), (b"d", 80.0, 3)])


def test_around_a_missing_member_is_none(backend: Steps) -> None:
    board = fill(backend, SEED)
    assert backend.around(board, b"zz", 2, 2, True, RankStyle.UNIQUE) is None
    assert backend.around(target(board="empty"), b"a", 2, 2, True, RankStyle.UNIQUE) is None


@pytest.mark.parametrize("style", STYLES)
def test_by_score_in_board_order_with_ranks(backend: Steps, style: RankStyle) -> None:
    board = fill(backend, SEED)
    whole = board_rows(True, style)
    same_rows(backend.by_score(board, 80, 100, 0, 10, True, style), whole)
    same_rows(backend.by_score(board, 85, 100, 1, 2, True, style), whole[1:3])
    same_rows(backend.by_score(board, 80, 90, 0, 10, True, style), whole[2:])
    same_rows(backend.by_score(board, 90, 90, 0, 10, True, style), whole[2:3])
    assert backend.by_score(board, 91, 99, 0, 10, True, style) == []
    assert backend.by_score(board, 100, 80, 0, 10, True, style) == []
    assert backend.by_score(board, 80, 100, 4, 10, True, style) == []
    assert backend.by_score(board, 80, 100, 0, 0, True, style) == []


@pytest.mark.parametrize("style", STYLES)
def test_by_score_on_a_lower_is_better_board(backend: Steps, style: RankStyle) -> None:
    board = fill(backend, SEED, high_first=False)
    whole = board_rows(False, style)
    same_rows(backend.by_score(board, -math.inf, math.inf, 0, 10, False, style), whole)
    same_rows(backend.by_score(board, 85, 100, 1, 1, False, style), whole[2:3])


def test_count_ranges(backend: Steps) -> None:
    board = fill(backend, SEED)
    assert backend.count(board.key) == 4
    assert backend.count(board.key, 90, 100) == 3
    assert backend.count(board.key, 100, 100) == 2
    assert backend.count(board.key, -math.inf, 85) == 1
    assert backend.count(board.key, 101, math.inf) == 0
    assert backend.count(board.key, 100, 80) == 0
    assert backend.count(target(board="empty").key) == 0


@pytest.mark.parametrize("high_first", [True, False])
def test_percentile_counts_strictly_worse_members(backend: Steps, high_first: bool) -> None:
    board = fill(backend, SEED, high_first=high_first)
    # SEED: a, b at 100; c at 90; d at 80. Ties are never "worse".
    worse = (
        {b"a": 2, b"b": 2, b"c": 1, b"d": 0} if high_first else {b"a": 0, b"b": 0, b"c": 2, b"d": 3}
    )
    for member, expected in worse.items():
        assert backend.percentile(board, member, high_first) == (SEED[member], 4, expected)
    assert backend.percentile(board, b"x", high_first) is None
    assert backend.percentile(target(board="empty"), b"a", high_first) is None


def test_percentile_of_extreme_and_fractional_scores(backend: Steps) -> None:
    scores = {b"big": 2.0**53 + 2, b"tiny": 5e-324, b"neg": -1.5, b"frac": 0.1, b"frac2": 0.1}
    board = fill(backend, scores)
    assert backend.percentile(board, b"big", True) == (2.0**53 + 2, 5, 4)
    assert backend.percentile(board, b"tiny", True) == (5e-324, 5, 1)
    assert backend.percentile(board, b"frac", True) == (0.1, 5, 2)
    assert backend.percentile(board, b"frac2", False) == (0.1, 5, 1)
    assert backend.percentile(board, b"neg", False) == (-1.5, 5, 4)


def test_scores_like_zmscore(backend: Steps) -> None:
    board = fill(backend, SEED)
    assert backend.scores(board.key, [b"d", b"x", b"a"]) == [80.0, None, 100.0]
    assert backend.scores(target(board="empty").key, [b"a", b"b"]) == [None, None]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("high_first", [True, False])
def test_random_boards_match_the_reference(backend: Steps, high_first: bool, seed: int) -> None:
    rng = random.Random(seed)
    scores = {b"m%d" % rng.randrange(10_000): float(rng.randrange(12)) for _ in range(80)}
    board = fill(backend, scores, high_first=high_first)
    order = sorted(scores, key=lambda m: (scores[m], m), reverse=high_first)
    for style in STYLES:
        values = [scores[m] for m in order]
        expected = list(zip(order, values, ranks(values, style), strict=True))
        same_rows(backend.page(board, 0, len(order), high_first, style), expected)
        assert backend.ranks(board, order, high_first, style) == [(s, r) for _, s, r in expected]
        start = rng.randrange(len(order))
        same_rows(backend.page(board, start, start + 9, high_first, style), expected[start:][:10])
        member, score, _ = expected[start]
        same_rows(
            backend.page_after(board, score, member, 7, high_first, style),
            expected[start + 1 : start + 8],
        )
        low, high = sorted((float(rng.randrange(12)), float(rng.randrange(12))))
        in_range = [row for row in expected if low <= row[1] <= high]
        same_rows(backend.by_score(board, low, high, 2, 5, high_first, style), in_range[2:7])
        assert backend.count(board.key, low, high) == len(in_range)
