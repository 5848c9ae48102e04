"""``Leaderboard`` (generated into :mod:`ranked.leaderboard._sync.board` from the asyncio
source) and the fan-out of one score to many boards."""

from __future__ import annotations

from collections.abc import Iterable

from ..core._time import Instant
from ..core.models import Member
from ._plan import fan_out, one_instant, run_sync
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

    First every board checks the arguments, at one instant for all (``at``, else the first
    board's now; :func:`~ranked.leaderboard._plan_write.fan_out`), so bad input changes
    no board. Then the boards are written one after another: if a board's backend fails,
    the boards before it keep their writes. A board with a journal journals its write
    (one event, at the same instant) and applies it once durable.
    """
    board_list = list(boards)
    when = one_instant([board._plan for board in board_list], at)
    steps = fan_out([board._plan.writes for board in board_list], member, score, operator, when)
    return [
        run_sync(board._steps, each)[0]
        if board._journal is None
        else board.submit(member, score, operator=operator, at=when)
        for board, each in zip(board_list, steps, strict=True)
    ]
