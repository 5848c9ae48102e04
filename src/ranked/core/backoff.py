"""Retry delays of the project's webhooks (notifications, the write guard's validator):
exponential backoff with jitter. The delay before retry ``n`` (1: the first) is drawn
uniformly in ``[d/2, d]``, ``d = min(ceiling, base * 2**(n - 1))``."""

from __future__ import annotations

import asyncio
import math
import random

__all__ = ["backoff_bound", "backoff_sleep"]


def backoff_bound(base: float, retry: int, ceiling: float = math.inf) -> float:
    """The longest delay before retry number ``retry`` (seconds)."""
    return float(min(ceiling, base * 2 ** (retry - 1)))


async def backoff_sleep(base: float, retry: int, ceiling: float = math.inf) -> None:
    """Wait the jittered delay before retry number ``retry``."""
    bound = backoff_bound(base, retry, ceiling)
    await asyncio.sleep(random.uniform(bound / 2, bound))
