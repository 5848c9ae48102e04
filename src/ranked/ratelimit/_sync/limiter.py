# Generated from ranked/ratelimit/_async/limiter.py by scripts/generate_sync.py: do not edit.
"""The limiter: decides hits of one policy per identity, on any backend.

Written once, for asyncio (``AsyncRateLimiter``); ``ranked/ratelimit/_sync/limiter.py``
(``RateLimiter``) is generated from this file by ``scripts/generate_sync.py``. Both hold a
:class:`~.._plan.Plan` and call what ``backend.bind`` handed back for its operation: one
Lua script (one round trip, atomic) on Redis and Redis Cluster; on ``memory://`` the C
decider (one call under the backend's lock), or without the C engine the procedure's
Python reference under that lock.
"""

from __future__ import annotations

from ...backends.base import Backend
from ...backends.generic import DELETE
from ...backends.procedure import Bound
from .._plan import HIT, PEEK, Clock, Plan
from ..policy import Policy
from ..result import Decision

__all__ = ["RateLimiter"]


class RateLimiter:
    """Decides hits of ``policy`` on ``backend``, per identity.

    ``prefix`` starts every key (no braces); ``clock``: None for the backend's clock (on
    Redis the server's ``TIME``, read inside the script, so every client agrees), or a
    callable returning Unix seconds (tests' fake clocks; each reading must be an instant
    of :mod:`ranked.core.limits`, else the hit raises ``OutOfRangeError``).
    """

    __slots__ = ("_decide", "_delete", "_plan", "backend")

    _decide: Bound[Decision]
    _delete: Bound[int]

    def __init__(
        self,
        backend: Backend,
        policy: Policy,
        prefix: str = "rl",
        clock: Clock | None = None,
    ) -> None:
        self.backend = backend
        self._plan = Plan(policy, prefix, clock)
        self._decide = backend.bind(self._plan.operation)
        self._delete = backend.bind(DELETE)

    @property
    def policy(self) -> Policy:
        """The policy this limiter enforces."""
        return self._plan.policy

    def hit(self, identity: str | bytes, cost: int = 1) -> Decision:
        """Consume ``cost`` units of ``identity``'s quota if they fit; a denied hit consumes
        nothing, a cost of 0 only reports. Atomic on every backend; one round trip on
        Redis (one script); O(1) for every algorithm but ``sliding_log`` (O(1) plus stale
        entries removed on memory, O(log n) plus them on Redis)."""
        return self._decide(identity, cost, HIT)

    def peek(self, identity: str | bytes, cost: int = 1) -> Decision:
        """The decision :meth:`hit` would make now, without writing anything."""
        return self._decide(identity, cost, PEEK)

    def reset(self, identity: str | bytes) -> None:
        """Forget ``identity``'s state: its whole quota is available again. Redis: DEL."""
        self._delete(self._plan.keys(identity))
