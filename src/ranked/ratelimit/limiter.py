"""The limiters: :class:`RateLimiter` (sync) and :class:`AsyncRateLimiter` (asyncio).

Both are thin shells over one :class:`_Plan`, which validates a hit and turns it into the
procedure call (keys, arguments, instant); the shells only differ in awaiting
``backend.run``. Every decision is one procedure run: one Lua script (one round trip) on
Redis, one call under the lock on memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ..backends.base import AsyncBackend, Backend
from ..backends.procedure import Procedure
from ._procedures import limiter_procedure, policy_args
from .keys import KeyLayout
from .policy import Policy, RateLimitConfigError, RateLimitTypeError
from .result import Decision

__all__ = ["AsyncRateLimiter", "RateLimiter"]

Clock = Callable[[], float]
"""Unix time in seconds; ``None`` means the backend's clock (on Redis, the server's)."""

_HIT: Final = 1
_PEEK: Final = 0
_CACHED_COSTS: Final = 16
_CACHED_IDENTITIES: Final = 4096


class _Plan:
    """What a hit means for the backend, shared by the sync and the async limiter."""

    __slots__ = ("_args", "_keys", "capacity", "clock", "layout", "params", "policy", "procedure")

    def __init__(self, policy: Policy, prefix: str, clock: Clock | None) -> None:
        if not isinstance(policy, Policy):
            raise RateLimitTypeError(f"policy must be a Policy, not {type(policy).__name__}")
        if clock is not None and not callable(clock):
            raise RateLimitTypeError("clock must be a callable returning Unix seconds, or None")
        self.policy = policy
        self.capacity = policy.capacity
        self.layout = KeyLayout(prefix, policy)
        self.params = policy_args(policy)
        self.clock = clock
        self.procedure: Procedure[Decision] = limiter_procedure(policy)
        # Hot-path caches: the keys of recent identities, the argument tuples of small costs.
        self._keys: dict[str | bytes, tuple[bytes, ...]] = {}
        self._args = {
            (cost, mode): (cost, mode if cost else _PEEK, *self.params)
            for cost in range(min(self.capacity, _CACHED_COSTS) + 1)
            for mode in (_HIT, _PEEK)
        }

    def keys(self, identity: str | bytes) -> tuple[bytes, ...]:
        kind = identity.__class__
        if kind is str or kind is bytes:
            keys = self._keys.get(identity)
            if keys is None:
                raw = identity.encode() if isinstance(identity, str) else identity
                keys = self.layout.keys(raw)
                if len(self._keys) >= _CACHED_IDENTITIES:
                    self._keys.clear()
                self._keys[identity] = keys
            return keys
        if isinstance(identity, bytes):  # a bytes subclass: not cached
            return self.layout.keys(bytes(identity))
        raise RateLimitTypeError(f"identity must be str or bytes, not {type(identity).__name__}")

    def args(self, cost: int, mode: int) -> tuple[int, ...]:
        """``cost, consume`` then the policy's parameters. A cost of 0 writes nothing."""
        if cost.__class__ is not int:  # exact check: bool is an int subclass
            raise RateLimitTypeError(f"cost must be an int, not {type(cost).__name__}")
        cached = self._args.get((cost, mode))
        if cached is not None:
            return cached
        if cost < 0:
            raise RateLimitConfigError(f"cost must not be negative, not {cost}")
        if cost > self.capacity:
            raise RateLimitConfigError(
                f"cost {cost} exceeds the policy's capacity {self.capacity}: it could never pass"
            )
        return (cost, mode, *self.params)

    def now_us(self) -> int | None:
        clock = self.clock
        # round, not floor: a float clock stepped by decimal seconds lands on the intended us
        return None if clock is None else round(clock() * 1_000_000)


class RateLimiter:
    """Decides hits of ``policy`` on ``backend``, per identity.

    ``prefix`` starts every key (no braces); ``clock``: None for the backend's clock (on
    Redis the server's ``TIME``, read inside the script, so every client agrees), or a
    callable returning Unix seconds (tests' fake clocks).
    """

    __slots__ = ("_plan", "backend")

    def __init__(
        self, backend: Backend, policy: Policy, prefix: str = "rl", clock: Clock | None = None
    ) -> None:
        self.backend = backend
        self._plan = _Plan(policy, prefix, clock)

    @property
    def policy(self) -> Policy:
        """The policy this limiter enforces."""
        return self._plan.policy

    def hit(self, identity: str | bytes, cost: int = 1) -> Decision:
        """Consume ``cost`` units of ``identity``'s quota if they fit; a denied hit consumes
        nothing, a cost of 0 only reports. One round trip on Redis (one script);
        O(1) for every algorithm but ``sliding_log`` (O(log n) plus stale entries removed)."""
        plan = self._plan
        return self.backend.run(
            plan.procedure, plan.keys(identity), plan.args(cost, _HIT), plan.now_us()
        )

    def peek(self, identity: str | bytes, cost: int = 1) -> Decision:
        """The decision :meth:`hit` would make now, without writing anything."""
        plan = self._plan
        return self.backend.run(
            plan.procedure, plan.keys(identity), plan.args(cost, _PEEK), plan.now_us()
        )

    def reset(self, identity: str | bytes) -> None:
        """Forget ``identity``'s state: its whole quota is available again. Redis: DEL."""
        self.backend.delete(self._plan.keys(identity))


class AsyncRateLimiter:
    """:class:`RateLimiter` for an :class:`~ranked.backends.base.AsyncBackend`."""

    __slots__ = ("_plan", "backend")

    def __init__(
        self,
        backend: AsyncBackend,
        policy: Policy,
        prefix: str = "rl",
        clock: Clock | None = None,
    ) -> None:
        self.backend = backend
        self._plan = _Plan(policy, prefix, clock)

    @property
    def policy(self) -> Policy:
        """The policy this limiter enforces."""
        return self._plan.policy

    async def hit(self, identity: str | bytes, cost: int = 1) -> Decision:
        """See :meth:`RateLimiter.hit`."""
        plan = self._plan
        return await self.backend.run(
            plan.procedure, plan.keys(identity), plan.args(cost, _HIT), plan.now_us()
        )

    async def peek(self, identity: str | bytes, cost: int = 1) -> Decision:
        """See :meth:`RateLimiter.peek`."""
        plan = self._plan
        return await self.backend.run(
            plan.procedure, plan.keys(identity), plan.args(cost, _PEEK), plan.now_us()
        )

    async def reset(self, identity: str | bytes) -> None:
        """See :meth:`RateLimiter.reset`."""
        await self.backend.delete(self._plan.keys(identity))
