"""Rank styles: parsing, the reference computation, and the O(log n) count formula."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ranked.core.ranks import RankStyle, rank_from_counts, ranks
from ranked.errors import RankedError, UnknownRankStyleError

SEED = [100, 100, 90, 80]


@pytest.mark.parametrize(
    ("style", "expected"),
    [("unique", [1, 2, 3, 4]), ("competition", [1, 1, 3, 4]), ("dense", [1, 1, 2, 3])],
)
def test_seed_examples(style: str, expected: list[int]) -> None:
    assert ranks(SEED, style) == expected
    assert ranks(SEED, RankStyle(style)) == expected


def test_more_shapes() -> None:
    assert ranks([], "dense") == []
    assert ranks([5.0], "competition") == [1]
    assert ranks([3, 3, 3], "competition") == [1, 1, 1]
    assert ranks([3, 3, 3], "dense") == [1, 1, 1]
    assert ranks([9, 8, 8, 8, 7, 7, 1], "competition") == [1, 2, 2, 2, 5, 5, 7]
    assert ranks([9, 8, 8, 8, 7, 7, 1], "dense") == [1, 2, 2, 2, 3, 3, 4]
    # Ascending boards (lower is better) tie the same way.
    assert ranks([1.5, 1.5, 2.0], "competition") == [1, 1, 3]
    assert ranks([float("inf"), float("inf"), -0.0, 0.0], "dense") == [1, 1, 2, 2]


def test_parse() -> None:
    assert RankStyle.parse("dense") is RankStyle.DENSE
    assert RankStyle.parse(" Competition ") is RankStyle.COMPETITION
    assert RankStyle.parse("sparse") is RankStyle.COMPETITION
    assert RankStyle.parse(RankStyle.UNIQUE) is RankStyle.UNIQUE
    assert isinstance(RankStyle.DENSE, str) and f"{RankStyle.DENSE}" == "dense"  # wire format
    assert [style.value for style in RankStyle] == ["unique", "competition", "dense"]


@pytest.mark.parametrize("bad", ["", "row_number", "densest", 1, None])
def test_unknown_styles(bad: object) -> None:
    with pytest.raises(UnknownRankStyleError, match="unique, competition, dense"):
        RankStyle.parse(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ranks([1], bad)  # type: ignore[arg-type]
    assert issubclass(UnknownRankStyleError, RankedError)


@given(st.lists(st.integers(0, 5), max_size=30), st.sampled_from(list(RankStyle)))
def test_counts_formula_matches_brute_force(values: list[int], style: RankStyle) -> None:
    board = sorted(values, reverse=True)
    expected = ranks(board, style)
    for index, score in enumerate(board):
        better = sum(1 for other in board if other > score)
        distinct_better = len({other for other in board if other > score})
        got = rank_from_counts(style, index=index, better=better, distinct_better=distinct_better)
        assert got == expected[index]


@given(st.lists(st.integers(0, 5), max_size=30))
def test_style_relations(values: list[int]) -> None:
    board = sorted(values, reverse=True)
    unique, competition, dense = (ranks(board, style) for style in RankStyle)
    assert unique == list(range(1, len(board) + 1))
    for u, c, d in zip(unique, competition, dense, strict=True):
        assert d <= c <= u
