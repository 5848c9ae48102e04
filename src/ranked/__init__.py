"""ranked: real-time ranking engine on sorted sets, embedded or on Redis."""

from __future__ import annotations

from .backends.factory import open_async_backend, open_backend
from .engine import IMPLEMENTATION, Keyspace, SortedSet
from .errors import (
    BackendUnavailableError,
    InvalidScoreError,
    RankedError,
    ResponseError,
    SnapshotError,
)
from .leaderboard import AsyncLeaderboard, Leaderboard

__all__ = [
    "IMPLEMENTATION",
    "AsyncLeaderboard",
    "BackendUnavailableError",
    "InvalidScoreError",
    "Keyspace",
    "Leaderboard",
    "RankedError",
    "ResponseError",
    "SnapshotError",
    "SortedSet",
    "open_async_backend",
    "open_backend",
]

__version__ = "0.1.0"
