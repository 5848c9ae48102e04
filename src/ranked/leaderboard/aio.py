"""``AsyncLeaderboard`` (written in :mod:`ranked.leaderboard._async.board`) and the asyncio
fan-out of one score to many boards."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable

from ..core._time import Instant
from ..core.models import Member
from ._async.board import AsyncLeaderboard
from ._plan import fan_out, one_instant, run_async
from ._requests import Operator
from .results import Submission

__all__ = ["AsyncLeaderboard", "asubmit_to_boards_nonatomic"]


async def asubmit_to_boards_nonatomic(
    boards: Iterable[AsyncLeaderboard],
    member: Member,
    score: float,
    *,
    operator: Operator | None = None,
    at: Instant | None = None,
) -> list[Submission]:
    """Submit one score to many async boards concurrently: atomic per board, NOT across.

    The arguments are checked by every board before any write, with one instant for all
    boards (``at``, else the first board's now; see
    :func:`~ranked.leaderboard._plan_write.fan_out`), so bad input changes no board; the
    boards are then written concurrently, and if one fails, the others keep their writes.
    """
    board_list = list(boards)
    when = one_instant([board._plan for board in board_list], at)
    steps = fan_out([board._plan.writes for board in board_list], member, score, operator, when)
    return list(
        await asyncio.gather(
            *(
                _first(run_async(board._steps, each))
                if board._journal is None
                else board.submit(member, score, operator=operator, at=when)
                for board, each in zip(board_list, steps, strict=True)
            )
        )
    )


async def _first(submissions: Awaitable[list[Submission]]) -> Submission:
    return (await submissions)[0]
