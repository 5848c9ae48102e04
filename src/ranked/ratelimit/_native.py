"""The C memory path: :class:`ranked.backends.native._native.RateDecider`, one call per decision.

It makes the decision the Python path of :func:`.limiter._memory_path` makes, with the same
steps in the same order (identity -> keys, cost check, lock, housekeeping, clock, the core
of :mod:`._memory` with the same float operations), on the same state (the keyspace's
tables and the :class:`._memory.Cell` objects), so the two are interchangeable even on
one keyspace. Whatever is unusual (numbers beyond +-2**52, a clock stepped back under the
log, an expired or foreign value) goes to the Python core from inside the call.

Only on the C engine: with ``RANKED_PUREPYTHON=1`` (or no C build) :func:`native_decider`
returns None and the Python path runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from math import ceil
from typing import Final

from ..backends.memory import MemoryBackend
from ..engine.keyspace import Keyspace
from ..engine.zset import IMPLEMENTATION
from ._memory import BucketCell, Cell, Core, CounterCell, LogCell, TatCell, WindowCell, _wrongtype
from .policy import ALGORITHMS, Algorithm, Policy
from .result import Decision

__all__ = ["CLOCK_BACKEND", "CLOCK_LIMITER", "CLOCK_SYSTEM", "native_decider"]

CLOCK_SYSTEM: Final = 0
"""``time.time_ns()``: no clock injected anywhere."""
CLOCK_BACKEND: Final = 1
"""The keyspace's clock, as the limiter's Python path reads it when its own is None."""
CLOCK_LIMITER: Final = 2
"""The limiter's ``clock=``; deadlines still count from the keyspace's clock."""

# The cell of each algorithm and its fields in the order rl_fast.c reads them.
_CELLS: Final[dict[Algorithm, tuple[type[Cell], tuple[str, ...]]]] = {
    "fixed_window": (WindowCell, ("start", "count")),
    "sliding_log": (LogCell, ("entries", "total")),
    "sliding_counter": (CounterCell, ("index", "cur", "prev")),
    "token_bucket": (BucketCell, ("tokens", "last")),
    "gcra": (TatCell, ("tat",)),
}
# Integers the C code takes (sums of a few of them stay exact in int64 and as doubles).
_BOUND: Final = 1 << 52

Decide = Callable[[str | bytes, int, int], Decision]

try:
    from ..backends.native._native import RateDecider
except ImportError:  # pragma: no cover - only on a machine without a C build
    RateDecider = None  # type: ignore[assignment, misc]


def native_decider(
    policy: Policy,
    backend: MemoryBackend,
    core: Core,
    identities: dict[str | bytes, tuple[bytes, ...]],
    plan_keys: Callable[[str | bytes], tuple[bytes, ...]],
    plan_args: Callable[[int, int], tuple[int, ...]],
    clock: Callable[[], float] | None,
) -> Decide | None:
    """The C decision of ``policy`` on ``backend`` (the same ``core`` decides its rare
    cases), or None when the C engine is not loaded, the keyspace is not a plain
    :class:`Keyspace`, or the policy's numbers reach 2**52 (the Python path takes those).
    ``clock`` is the limiter's (None: the backend's; the system clock read as integer
    nanoseconds when that is ``time.time``)."""
    keyspace = backend.keyspace
    if IMPLEMENTATION != "c" or RateDecider is None or type(keyspace) is not Keyspace:
        return None
    limit, window, burst = policy.limit, policy.window_us, policy.capacity
    numbers = (limit, window, ceil(window / 1000), burst)
    if max(numbers) >= _BOUND:
        return None
    if clock is not None:
        mode = CLOCK_LIMITER
    else:
        mode = CLOCK_SYSTEM if keyspace.clock is time.time else CLOCK_BACKEND
    interval = window / limit  # the expressions of _memory.token_bucket and _memory.gcra
    cell, fields = _CELLS[policy.algorithm]
    decide: Decide = RateDecider(
        ALGORITHMS.index(policy.algorithm),
        mode,
        numbers,
        (limit / window, interval, interval * burst),
        policy,
        Decision,
        keyspace,
        backend.lock,
        identities,
        plan_keys,
        plan_args,
        clock,
        core,
        cell,
        fields,
        _wrongtype,
    )
    return decide
