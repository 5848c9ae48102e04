"""``AsyncLeaderboard`` (written in :mod:`ranked.leaderboard._async.board`) and the asyncio
fan-out of one score to many boards."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from ..core._time import Instant
from ..core.models import Member
from ._async.board import AsyncLeaderboard
from ._plan import from_ms, run_async
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

    One instant is used for every board (``at``, else the first board's now), so the
    windows agree. Every board checks the arguments first, so bad input changes no board;
    the boards are then written concurrently, and if one fails, the others keep their
    writes.
    """
    board_list = list(boards)
    if not board_list:
        return []
    when: Instant = at if at is not None else from_ms(board_list[0]._plan.core.now_ms())
    # Every board checks the arguments before any board writes (see the sync twin).
    prepared = [
        board._plan.writes.prepare(((member, score),), operator, when) for board in board_list
    ]
    done = await asyncio.gather(
        *(
            run_async(board._steps, board._plan.writes.submit_steps(ready))
            for board, ready in zip(board_list, prepared, strict=True)
        )
    )
    return [submissions[0] for submissions in done]
