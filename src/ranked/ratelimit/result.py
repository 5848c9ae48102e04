"""The one result every limiter decision returns, whatever the algorithm and backend."""

from __future__ import annotations

from typing import NamedTuple

from .policy import Policy

__all__ = ["Decision"]


class Decision(NamedTuple):
    """What one hit decided.

    - ``allowed``: the hit was admitted (and consumed ``cost`` units). A denied hit
      consumes nothing.
    - ``limit``: the policy's quota (``Policy.limit``).
    - ``remaining``: units still available right after this decision (never negative).
    - ``reset_after``: seconds until the quota is whole again if no further hit arrives
      (0.0 when it already is).
    - ``retry_after``: None when allowed; else seconds until a hit of the same cost would
      be admitted (always > 0).
    - ``policy``: the policy that decided (its name and window feed the HTTP headers).
    """

    allowed: bool
    limit: int
    remaining: int
    reset_after: float
    retry_after: float | None
    policy: Policy
