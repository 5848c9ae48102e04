"""Rate limiters on every backend: five algorithms behind one interface and one result."""

from __future__ import annotations

from .policy import ALGORITHMS, Algorithm, Policy, RateLimitConfigError
from .result import Decision

__all__ = ["ALGORITHMS", "Algorithm", "Decision", "Policy", "RateLimitConfigError"]
