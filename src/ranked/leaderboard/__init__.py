"""Leaderboards written once against the backend contract, sync and async.

:class:`Leaderboard` runs on a :class:`~ranked.backends.base.Backend` (``memory://``,
``redis://``, ``redis+cluster://``), :class:`AsyncLeaderboard` on its async twin; both
share every line of logic (:mod:`ranked.leaderboard._plan`). See ``docs/leaderboards.md``.
"""

from __future__ import annotations

from ..errors import BoardConfigError, MemberDataError, PageSizeError
from .aio import AsyncLeaderboard, asubmit_to_boards_nonatomic
from .batching import Flushed, IncrBatcher
from .config import BoardConfig, TieBreak, default_time_tiebreak
from .results import FriendsBoard, MemberData, Submission, WindowResult
from .sync import Leaderboard, submit_to_boards_nonatomic

__all__ = [
    "AsyncLeaderboard",
    "BoardConfig",
    "BoardConfigError",
    "Flushed",
    "FriendsBoard",
    "IncrBatcher",
    "Leaderboard",
    "MemberData",
    "MemberDataError",
    "PageSizeError",
    "Submission",
    "TieBreak",
    "WindowResult",
    "asubmit_to_boards_nonatomic",
    "default_time_tiebreak",
    "submit_to_boards_nonatomic",
]
