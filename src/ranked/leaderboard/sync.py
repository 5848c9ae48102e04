"""``Leaderboard`` (generated into :mod:`ranked.leaderboard._sync.board` from the asyncio
source) and the fan-out of one score to many boards."""

from __future__ import annotations

from collections.abc import Iterable

from ..core._time import Instant
from ..core.models import Member
from ._plan import from_ms, run_sync
from ._requests import Operator
from ._sync.board import Leaderboard
from .results import Submission

__all__ = ["Leaderboard", "submit_to_boards_nonatomic"]


def submit_to_boards_nonatomic(
    boards: Iterable[Leaderboard],
    member: Member,
    score: float,
    *,
    operator: Operator | None = None,
    at: Instant | None = None,
) -> list[Submission]:
    """Submit one score to many boards (fan-out): atomic per board, NOT across boards.

    One instant is used for every board (``at``, else the first board's now), so the
    windows agree. Every board checks the arguments first, so bad input changes no board;
    if a board's backend then fails, the boards before it keep their writes.
    """
    board_list = list(boards)
    if not board_list:
        return []
    when: Instant = at if at is not None else from_ms(board_list[0]._plan.core.now_ms())
    # Every board checks the arguments before any board writes: a value one board refuses
    # (a bad operator, a score outside its time tie-break budget) changes no board.
    prepared = [
        board._plan.writes.prepare(((member, score),), operator, when) for board in board_list
    ]
    return [
        run_sync(board._steps, board._plan.writes.submit_steps(ready))[0]
        for board, ready in zip(board_list, prepared, strict=True)
    ]
