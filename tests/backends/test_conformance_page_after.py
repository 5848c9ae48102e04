"""Conformance: page_after around long tie runs, on every backend.

Redis reads the rows from the point's score on and skips those that do not come after
the point; a tie run longer than the page falls back to counting and a binary search.
Every point (on the board, off it, inside and at both ends of a tie run), page size,
style and direction must give exactly the slice of the whole board after the point.
"""

from __future__ import annotations

import pytest

from ranked.core.ranks import RankStyle
from ranked.leaderboard._requests import Row

from .conftest import STYLES, Steps, fill, same_rows

# A tie run of 20 at 50 between distinct scores, and a short run of 2 at 40.
SCORES = {b"t%02d" % n: 50.0 for n in range(20)}
SCORES |= {b"x": 70.0, b"y": 60.0, b"v": 40.0, b"w": 40.0, b"z": 30.0}
OFF_BOARD = [(50.0, b"t05x"), (50.0, b"zzz"), (50.0, b""), (55.0, b"q"), (40.0, b"vv")]


def after(whole: list[Row], score: float, member: bytes, high_first: bool) -> list[Row]:
    """The rows strictly after the point (score, member) in board order."""

    def is_after(row: Row) -> bool:
        if row[1] != score:
            return row[1] < score if high_first else row[1] > score
        return row[0] < member if high_first else row[0] > member

    return [row for row in whole if is_after(row)]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("high_first", [True, False])
def test_page_after_every_point_of_a_board_with_tie_runs(
    backend: Steps, high_first: bool, style: RankStyle
) -> None:
    board = fill(backend, SCORES, high_first=high_first)
    whole = backend.page(board, 0, 100, high_first, style)
    assert len(whole) == len(SCORES)
    points = [(row[1], row[0]) for row in whole] + OFF_BOARD
    for score, member in points:
        expected = after(whole, score, member, high_first)
        for count in (1, 2, 3, 25):
            rows = backend.page_after(board, score, member, count, high_first, style)
            same_rows(rows, expected[:count])
