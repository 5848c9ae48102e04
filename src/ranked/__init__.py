"""ranked: real-time ranking engine on sorted sets, embedded or on Redis."""

from __future__ import annotations

from .backends.factory import open_async_backend, open_backend
from .engine import IMPLEMENTATION, Keyspace, SortedSet
from .errors import (
    BackendUnavailableError,
    BoardConfigError,
    CrossSlotError,
    InvalidCursorError,
    InvalidItemError,
    InvalidNameError,
    InvalidPriorityError,
    InvalidScoreError,
    LayoutError,
    MemberDataError,
    OutOfRangeError,
    PageSizeError,
    QueueArgumentError,
    RankedError,
    RateLimitConfigError,
    RateLimitTypeError,
    ResponseError,
    SnapshotError,
    UnknownRankStyleError,
    UnsupportedURLError,
    WindowError,
)
from .leaderboard import AsyncLeaderboard, Leaderboard
from .ratelimit.decorator import RateLimited

__all__ = [
    "IMPLEMENTATION",
    "AsyncLeaderboard",
    "BackendUnavailableError",
    "BoardConfigError",
    "CrossSlotError",
    "InvalidCursorError",
    "InvalidItemError",
    "InvalidNameError",
    "InvalidPriorityError",
    "InvalidScoreError",
    "Keyspace",
    "LayoutError",
    "Leaderboard",
    "MemberDataError",
    "OutOfRangeError",
    "PageSizeError",
    "QueueArgumentError",
    "RankedError",
    "RateLimitConfigError",
    "RateLimitTypeError",
    "RateLimited",
    "ResponseError",
    "SnapshotError",
    "SortedSet",
    "UnknownRankStyleError",
    "UnsupportedURLError",
    "WindowError",
    "open_async_backend",
    "open_backend",
]

__version__ = "0.1.0"
