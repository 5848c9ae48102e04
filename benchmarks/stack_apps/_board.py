"""The board the rank-read apps serve, and the answer shape they share.

``RANKED_STACK_MEMBERS`` (default 1,000,000) members ``m0`` .. ``m<n-1>`` with distinct
pseudo-random scores, loaded with ``submit_many`` in chunks before the server answers.
"""

from __future__ import annotations

import os

import msgspec

from ranked import Leaderboard

__all__ = [
    "BOARD",
    "CONSTANT_PATH",
    "LIMITED_PATH",
    "MEMBERS_ENV",
    "RankOut",
    "constant",
    "loaded_board",
]

BOARD = "arena"
CONSTANT_PATH = "/const"
LIMITED_PATH = "/const-limited"
MEMBERS_ENV = "RANKED_STACK_MEMBERS"
_CHUNK = 100_000
_PRIME = 1_000_003


class RankOut(msgspec.Struct):
    """A member's score and 1-based rank (also the constant answer's shape)."""

    member: str
    score: float
    rank: int | None


def constant() -> RankOut:
    """The constant answer, built afresh as a real handler would build its result."""
    return RankOut("m1", 1, 1)


def loaded_board() -> Leaderboard:
    """A ``memory://`` board holding the members (O(n log n); ~9 s for 1,000,000)."""
    size = int(os.environ.get(MEMBERS_ENV, "1000000"))
    board = Leaderboard("memory://", BOARD)
    for start in range(0, size, _CHUNK):
        stop = min(start + _CHUNK, size)
        board.submit_many([(f"m{i}", float(i * 7919 % _PRIME)) for i in range(start, stop)])
    return board
