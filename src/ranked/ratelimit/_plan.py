"""What a hit means for a backend: one limiter's :class:`Plan`, shared by both APIs.

A plan validates a hit (identity, cost, the clock's reading) and describes its decision
once, as the :class:`~ranked.backends.procedure.Operation` every backend binds:

- ``encode(identity, cost, consume) -> (keys, args, now_us)``: the script's keys and
  arguments (both cached: recent identities, small costs) and the instant (None: the
  backend's clock; on Redis the server's ``TIME``);
- ``native_args``: everything the memory backend's C decider needs to make the same
  decision in one call (the policy's numbers, its Python core, the cell layout, and this
  plan's caches and checks, which it calls for whatever it does not decide itself);
- ``direct``: the same decision in call form, ``(keyspace, identity, cost, consume)``,
  on the same Python core (:func:`._memory.direct`): what memory runs without the C
  engine, with no encoding of script arguments and no reply to decode.

The limiters (:mod:`._async.limiter`, and :mod:`._sync.limiter` generated from it) only
call what ``backend.bind(plan.operation)`` hands back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ..backends.procedure import Operation
from ..core.limits import check_instant
from . import _memory
from ._procedures import limiter_procedure, policy_args
from .keys import KeyLayout
from .policy import Policy, RateLimitConfigError, RateLimitTypeError
from .result import Decision

__all__ = ["HIT", "PEEK", "Clock", "Plan", "check_clock"]

Clock = Callable[[], float]
"""Unix time in seconds; ``None`` means the backend's clock (on Redis, the server's)."""

HIT: Final = 1
"""``consume`` of a hit: an admitted cost is written."""
PEEK: Final = 0
"""``consume`` of a peek: nothing is written."""

_CACHED_COSTS: Final = 16
_CACHED_IDENTITIES: Final = 4096
_CLOCK: Final = "the limiter's clock reading"


def check_clock(reading: object) -> float:
    """A reading of a limiter's ``clock``, checked: an instant every backend holds
    exactly (:func:`~ranked.core.limits.check_instant`), else ``OutOfRangeError``."""
    return check_instant(reading, _CLOCK)


class Plan:
    """One limiter's hits as one operation: validation, key and argument caches, instant.

    ``prefix`` starts every key (no braces); ``clock``: None for the backend's clock, or
    a callable returning Unix seconds (tests' fake clocks). O(1) per hit.
    """

    __slots__ = ("_args", "_keys", "capacity", "clock", "layout", "operation", "params", "policy")

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
        # Hot-path caches: the keys of recent identities, the argument tuples of small costs.
        self._keys: dict[str | bytes, tuple[bytes, ...]] = {}
        self._args = {
            (cost, mode): (cost, mode if cost else PEEK, *self.params)
            for cost in range(min(self.capacity, _CACHED_COSTS) + 1)
            for mode in (HIT, PEEK)
        }
        native_args = self._native_args()
        self.operation: Operation[Decision] = Operation(
            limiter_procedure(policy),
            self.encode,
            native_args,
            direct=_memory.direct(
                native_args["core"],
                self.capacity,
                self._keys,
                self.keys,
                self.args,
                None if clock is None else self.now_us,
            ),
        )

    def keys(self, identity: str | bytes) -> tuple[bytes, ...]:
        """The keys of ``identity`` (cached for str and bytes), or ``RateLimitTypeError``."""
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
        """The limiter clock's instant in whole microseconds, None without a clock."""
        clock = self.clock
        if clock is None:
            return None
        now = clock()
        check_clock(now)
        # round, not floor: a float clock stepped by decimal seconds lands on the intended us
        return round(now * 1_000_000)

    def encode(
        self, identity: str | bytes, cost: int, consume: int
    ) -> tuple[tuple[bytes, ...], tuple[int, ...], int | None]:
        """One decision's ``(keys, args, now_us)``; a bad argument raises its typed error
        (identity first, then cost, then the clock) before anything runs."""
        return self.keys(identity), self.args(cost, consume), self.now_us()

    def _native_args(self) -> dict[str, Any]:
        """The policy's (:func:`._memory.native_args`), then this plan's: its identity ->
        keys cache (read directly), ``keys`` and ``args`` (called for what the cache does
        not answer, and for the typed errors), its ``clock`` and ``check_clock``."""
        return {
            **_memory.native_args(self.policy),
            "identities": self._keys,
            "keys": self.keys,
            "args": self.args,
            "clock": self.clock,
            "check_clock": check_clock,
        }
