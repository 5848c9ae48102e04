"""Rate limiters on every backend: five algorithms behind one interface and one result,
plus an ASGI middleware and a decorator that speak the IETF and legacy headers."""

from __future__ import annotations

from .asgi import RateLimitMiddleware, client_ip, forwarded_ip
from .decorator import RateLimited, rate_limited
from .headers import problem_details, rate_limit_headers
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
    "RateLimitMiddleware",
    "RateLimitTypeError",
    "RateLimited",
    "RateLimiter",
    "client_ip",
    "forwarded_ip",
    "problem_details",
    "rate_limit_headers",
    "rate_limited",
]
