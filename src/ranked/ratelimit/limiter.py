"""The limiters: :class:`RateLimiter` (blocking) and :class:`AsyncRateLimiter` (asyncio).

``AsyncRateLimiter`` is written in :mod:`._async.limiter`; ``RateLimiter`` is generated
from it (:mod:`._sync.limiter`). This module gathers both under their public names.
"""

from __future__ import annotations

from ._async.limiter import AsyncRateLimiter
from ._plan import Clock
from ._sync.limiter import RateLimiter

__all__ = ["AsyncRateLimiter", "Clock", "RateLimiter"]
