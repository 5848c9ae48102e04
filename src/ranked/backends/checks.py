"""Argument checks that both forms of a step share (the Redis call and the memory
reference), so a bad argument raises the same error, before anything changes, everywhere.
"""

from __future__ import annotations

import math
from typing import Final

from ..errors import InvalidScoreError
from ._scripts import Arg

__all__ = [
    "MAX_POSITION",
    "STYLES",
    "check_style",
    "flag",
    "not_negative",
    "range_bound",
    "ttl_arg",
]

MAX_POSITION: Final = 2**53 - 1
"""The largest 0-based position a step reads: positions travel through Lua numbers (exact
up to 2**53) and no sorted set holds that many members, so a read starting beyond it is
empty on every backend (no round trip), and counts past it are clamped to it."""

STYLES: Final = frozenset(("unique", "competition", "dense"))
"""The rank styles the engine and the scripts know."""


def not_negative(**values: int) -> None:
    """``ValueError`` naming the first negative value."""
    for name, value in values.items():
        if value < 0:
            raise ValueError(f"{name} must not be negative, not {value}")


def check_style(style: str) -> str:
    """The rank style as the engine and the scripts name it, else ``ValueError``."""
    if style not in STYLES:
        raise ValueError(f"unknown rank style {style!r}")
    return str(style)


def ttl_arg(ttl_ms: int | None) -> Arg:
    """A TTL in ms as a script argument (``b""``: none); ``ValueError`` unless positive."""
    if ttl_ms is None:
        return b""
    if ttl_ms <= 0:
        raise ValueError(f"ttl_ms must be positive, not {ttl_ms}")
    return int(ttl_ms)


def flag(value: bool) -> int:
    """A boolean as a script argument."""
    return 1 if value else 0


def range_bound(value: float) -> Arg:
    """A score bound as ZRANGE BYSCORE / ZCOUNT take it; ``InvalidScoreError`` for NaN."""
    if math.isnan(value):
        raise InvalidScoreError("a score range bound is NaN")
    if math.isinf(value):
        return b"+inf" if value > 0 else b"-inf"
    return value
