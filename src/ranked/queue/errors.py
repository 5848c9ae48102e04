"""Typed errors of the queue: bad input is refused before anything is written."""

from __future__ import annotations

from ..errors import RankedError

__all__ = ["InvalidItemError", "InvalidPriorityError", "QueueArgumentError"]


class InvalidPriorityError(RankedError, ValueError):
    """A priority is not a finite number (NaN, infinity, a bool, a string), or an integer
    too large to be stored exactly in a float64 (beyond +-2**53)."""


class InvalidItemError(RankedError, TypeError):
    """An item is neither ``bytes`` nor ``str`` (items are opaque payloads)."""


class QueueArgumentError(RankedError, ValueError):
    """A count, delay, lease, timeout, shard count or attempt limit is out of range."""
