"""The limiters: :class:`RateLimiter` (sync) and :class:`AsyncRateLimiter` (asyncio).

Both are thin shells over one :class:`_Plan`, which validates a hit and turns it into the
procedure call (keys, arguments, instant); the shells only differ in awaiting
``backend.run``. Every decision is one procedure run: one Lua script (one round trip) on
Redis, one call under the lock on memory.

On ``memory://`` the limiter skips the generic procedure call: :func:`_memory_path` runs
the algorithm's core (the procedure's own twin, :mod:`._memory`) under the backend's lock
with one clock read and no argument tuple, so a decision costs about a microsecond; on the
C engine one C call (:mod:`._native`) does the same steps in about a third of that.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from time import time_ns
from typing import Final

from ..backends.base import AsyncBackend, Backend
from ..backends.memory import AsyncMemoryBackend, MemoryBackend
from ..backends.procedure import Procedure
from ._memory import CORES
from ._native import native_decider
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
# The memory path's share of the keyspace's active expiry: every 8 decisions, up to 16
# expired keys (at least one per decision, so keys of identities never seen again go).
_EXPIRY_EVERY_MASK: Final = 7
_EXPIRY_DELETES: Final = 16

Decide = Callable[[str | bytes, int, int], Decision]
"""``(identity, cost, consume 1|0) -> Decision``: the memory path."""


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


def _memory_path(plan: _Plan, backend: MemoryBackend, native: bool = True) -> Decide:
    """Decisions of ``plan`` on ``backend`` without the generic procedure call: the same
    core (so the same replies), validation first, then one call under the lock. On the C
    engine (unless ``native`` is False) one C call does all of it (:mod:`._native`)."""
    core = CORES[plan.policy.algorithm](plan.policy)
    if native:
        fast = native_decider(
            plan.policy, backend, core, plan._keys, plan.keys, plan.args, plan.clock
        )
        if fast is not None:
            return fast
    keyspace, clock = backend.keyspace, plan.clock
    acquire, release = backend.lock.acquire, backend.lock.release
    backend_clock, expire, floor = keyspace.clock, keyspace.expire_pending, math.floor
    system_clock = clock is None and backend_clock is time.time  # the same clock, read exactly
    identities, capacity = plan._keys, plan.capacity
    decisions = 0

    def decide(identity: str | bytes, cost: int, consume: int) -> Decision:
        nonlocal decisions
        try:
            keys = identities[identity]
        except (KeyError, TypeError):  # a new identity, or not even hashable
            keys = plan.keys(identity)
        if cost.__class__ is not int or cost < 0 or cost > capacity:
            plan.args(cost, consume)  # raises the typed error
        acquire()  # not `with lock`: the context protocol costs twice as much
        try:
            decisions += 1
            if not decisions & _EXPIRY_EVERY_MASK:
                expire(_EXPIRY_DELETES)
            if system_clock:  # integer nanoseconds: no float products to floor
                now_ns = time_ns()
                return core(keyspace, now_ns // 1000, now_ns // 1_000_000, keys, cost, consume)
            if clock is None:
                now = backend_clock()
                return core(keyspace, floor(now * 1e6), floor(now * 1e3), keys, cost, consume)
            now_us = round(clock() * 1_000_000)
            return core(keyspace, now_us, keyspace.now_ms(), keys, cost, consume)
        finally:
            release()

    return decide


class RateLimiter:
    """Decides hits of ``policy`` on ``backend``, per identity.

    ``prefix`` starts every key (no braces); ``clock``: None for the backend's clock (on
    Redis the server's ``TIME``, read inside the script, so every client agrees), or a
    callable returning Unix seconds (tests' fake clocks).
    """

    __slots__ = ("_memory", "_plan", "backend")

    def __init__(
        self, backend: Backend, policy: Policy, prefix: str = "rl", clock: Clock | None = None
    ) -> None:
        self.backend = backend
        self._plan = _Plan(policy, prefix, clock)
        self._memory = _memory_path(self._plan, backend) if type(backend) is MemoryBackend else None

    @property
    def policy(self) -> Policy:
        """The policy this limiter enforces."""
        return self._plan.policy

    def hit(self, identity: str | bytes, cost: int = 1) -> Decision:
        """Consume ``cost`` units of ``identity``'s quota if they fit; a denied hit consumes
        nothing, a cost of 0 only reports. One round trip on Redis (one script);
        O(1) for every algorithm but ``sliding_log`` (O(1) plus stale entries removed on
        memory, O(log n) plus them on Redis)."""
        if self._memory is not None:
            return self._memory(identity, cost, _HIT)
        plan = self._plan
        return self.backend.run(
            plan.procedure, plan.keys(identity), plan.args(cost, _HIT), plan.now_us()
        )

    def peek(self, identity: str | bytes, cost: int = 1) -> Decision:
        """The decision :meth:`hit` would make now, without writing anything."""
        if self._memory is not None:
            return self._memory(identity, cost, _PEEK)
        plan = self._plan
        return self.backend.run(
            plan.procedure, plan.keys(identity), plan.args(cost, _PEEK), plan.now_us()
        )

    def reset(self, identity: str | bytes) -> None:
        """Forget ``identity``'s state: its whole quota is available again. Redis: DEL."""
        self.backend.delete(self._plan.keys(identity))


class AsyncRateLimiter:
    """:class:`RateLimiter` for an :class:`~ranked.backends.base.AsyncBackend`."""

    __slots__ = ("_memory", "_plan", "backend")

    def __init__(
        self,
        backend: AsyncBackend,
        policy: Policy,
        prefix: str = "rl",
        clock: Clock | None = None,
    ) -> None:
        self.backend = backend
        self._plan = _Plan(policy, prefix, clock)
        self._memory = (
            _memory_path(self._plan, backend.sync) if type(backend) is AsyncMemoryBackend else None
        )

    @property
    def policy(self) -> Policy:
        """The policy this limiter enforces."""
        return self._plan.policy

    async def hit(self, identity: str | bytes, cost: int = 1) -> Decision:
        """See :meth:`RateLimiter.hit`."""
        if self._memory is not None:
            return self._memory(identity, cost, _HIT)
        plan = self._plan
        return await self.backend.run(
            plan.procedure, plan.keys(identity), plan.args(cost, _HIT), plan.now_us()
        )

    async def peek(self, identity: str | bytes, cost: int = 1) -> Decision:
        """See :meth:`RateLimiter.peek`."""
        if self._memory is not None:
            return self._memory(identity, cost, _PEEK)
        plan = self._plan
        return await self.backend.run(
            plan.procedure, plan.keys(identity), plan.args(cost, _PEEK), plan.now_us()
        )

    async def reset(self, identity: str | bytes) -> None:
        """See :meth:`RateLimiter.reset`."""
        await self.backend.delete(self._plan.keys(identity))
