"""ranked: real-time ranking engine on sorted sets, embedded or on Redis."""

from __future__ import annotations

from .engine import IMPLEMENTATION, Keyspace, SortedSet
from .errors import InvalidScoreError, RankedError, ResponseError, SnapshotError

__all__ = [
    "IMPLEMENTATION",
    "InvalidScoreError",
    "Keyspace",
    "RankedError",
    "ResponseError",
    "SnapshotError",
    "SortedSet",
]

__version__ = "0.1.0"
