"""ranked: real-time ranking engine on sorted sets, embedded or on Redis."""

from __future__ import annotations

from . import errors
from .backends.factory import open_async_backend, open_backend
from .engine import IMPLEMENTATION, Keyspace, SortedSet
from .errors import *  # noqa: F403  (every error, as errors.__all__ lists them)
from .leaderboard import AsyncLeaderboard, Leaderboard
from .ratelimit.decorator import RateLimited

__all__ = [
    "IMPLEMENTATION",
    "AsyncLeaderboard",
    "Keyspace",
    "Leaderboard",
    "RateLimited",
    "SortedSet",
    "open_async_backend",
    "open_backend",
]
__all__ += errors.__all__

__version__ = "0.1.0"
