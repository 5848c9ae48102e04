"""Rate limiters on every backend: five algorithms behind one interface and one result."""

from __future__ import annotations

from .limiter import AsyncRateLimiter, Clock, RateLimiter
from .policy import ALGORITHMS, Algorithm, Policy, RateLimitConfigError, RateLimitTypeError
from .result import Decision

__all__ = [
    "ALGORITHMS",
    "Algorithm",
    "AsyncRateLimiter",
    "Clock",
    "Decision",
    "Policy",
    "RateLimitConfigError",
    "RateLimitTypeError",
    "RateLimiter",
]
