"""The in-process engine: sorted sets and an embedded Redis-syntax keyspace."""

from __future__ import annotations

from .keyspace import Keyspace
from .zset import IMPLEMENTATION, SortedSet

__all__ = ["IMPLEMENTATION", "Keyspace", "SortedSet"]
