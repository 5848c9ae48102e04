"""Positions, offsets and counts far past any board: the same answer on every backend.

Scripts hold positions in Lua numbers, which are exact, and which Redis reads back as
integers, only up to 2**53 (``1e+18`` is no integer to ZRANGE). Every backend reads
nothing from a position past ``MAX_POSITION`` and reads to the end for a count past it,
before any round trip, instead of leaking a script error (``value is not an integer``).
"""

from __future__ import annotations

import pytest

from ranked.backends.generic import ByteRange
from ranked.core.ranks import RankStyle
from ranked.leaderboard._requests import MAX_POSITION

from .conftest import Steps, fill, target

HUGE = (MAX_POSITION + 1, 10**17, 10**18, 10**30, 10**400)
ALL = [(b"c", 3.0, 1), (b"b", 2.0, 2), (b"a", 1.0, 3)]
UNIQUE = RankStyle.UNIQUE


@pytest.mark.parametrize("huge", HUGE)
def test_reads_from_far_positions_are_empty(backend: Steps, huge: int) -> None:
    board = fill(backend, {b"a": 1, b"b": 2, b"c": 3})
    assert backend.page(board, huge, huge + 5, True, UNIQUE) == []
    assert backend.by_score(board, 0, 10, huge, 5, True, UNIQUE) == []
    assert backend.lex_range(board.key, ByteRange(), huge, 5, False) == []


@pytest.mark.parametrize("huge", HUGE)
def test_far_counts_read_to_the_end(backend: Steps, huge: int) -> None:
    board = fill(backend, {b"a": 1, b"b": 2, b"c": 3})
    assert backend.page(board, 0, huge, True, UNIQUE) == ALL
    assert backend.page(board, 1, huge, True, UNIQUE) == ALL[1:]
    assert backend.by_score(board, 0, 10, 0, huge, True, UNIQUE) == ALL
    assert backend.page_after(board, 3.0, b"c", huge, True, UNIQUE) == ALL[1:]
    assert backend.around(board, b"b", huge, huge, True, UNIQUE) == (1, ALL)
    assert backend.lex_range(board.key, ByteRange(), 0, huge, False) == [
        b"a",
        b"b",
        b"c",
    ]


def test_positions_up_to_the_limit_still_read(backend: Steps) -> None:
    board = fill(backend, {b"a": 1})
    assert backend.page(board, MAX_POSITION, MAX_POSITION, True, UNIQUE) == []
    assert backend.by_score(board, 0, 10, MAX_POSITION, 1, True, UNIQUE) == []
    assert backend.page(target(), 0, MAX_POSITION, True, UNIQUE) == [(b"a", 1.0, 1)]
