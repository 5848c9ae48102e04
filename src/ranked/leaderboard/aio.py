"""``AsyncLeaderboard`` (written in :mod:`ranked.leaderboard._async.board`) and the asyncio
fan-out of one score to many boards."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from ..core._time import Instant
from ..core.models import Member
from ._async.board import AsyncLeaderboard
from ._plan import fan_out, run_async
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
    steps = fan_out([board._plan.writes for board in board_list], member, score, operator, at)
    done = await asyncio.gather(
        *(run_async(board._steps, each) for board, each in zip(board_list, steps, strict=True))
    )
    return [submissions[0] for submissions in done]
