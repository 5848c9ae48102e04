"""The memory backend's native rate-limit decision: ``RateDecider`` (``rl_fast.c``).

Registered as ``ratelimit``: the native name of the limiter's procedures. The factory
builds one decider per limiter from the operation's ``native_args``; it knows nothing of
the feature beyond them (no import from ``ranked.ratelimit``):

- ``algorithm`` (0-4: fixed window, sliding log, sliding counter, token bucket, GCRA),
  ``numbers`` = ``(limit, window_us, window_ms, capacity)``, ``floats`` = ``(rate,
  interval, tolerance)``;
- ``policy`` (the last field of every result) and ``decision`` (the result's type, a
  6-tuple);
- ``core``: the algorithm's Python core, ``core(keyspace, now_us, now_ms, keys, cost,
  consume)``, which decides what the C code does not take (numbers beyond +-2**52, a
  clock stepped back under the log, fields of unusual types);
- ``cell`` and ``fields``: the state's type (a dict subclass with ``__slots__``) and the
  slot names in the order the C cores read them; ``wrongtype``: the WRONGTYPE error's
  factory;
- ``identities`` (identity -> keys, read directly), ``keys(identity)`` and ``args(cost,
  consume)``: the feature's caches and checks, called for what the dict does not answer
  and for their typed errors;
- ``clock``: the limiter's clock or None, and ``check_clock(reading)``, called on a
  reading that is not a float within ``[0, MAX_INSTANT_S]`` (it raises the typed error).

The decider takes ``(identity, cost, consume)``, the operation's own call arguments, and
returns the decision the procedure's Python reference returns, with the same state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Final

from ...core.limits import MAX_INSTANT_S
from ...engine.keyspace import Keyspace
from ..procedure import Operation
from ._native import RateDecider

__all__ = ["CLOCK_BACKEND", "CLOCK_LIMITER", "CLOCK_SYSTEM", "factory"]

CLOCK_SYSTEM: Final = 0
"""``time.time_ns()``: no clock injected anywhere."""
CLOCK_BACKEND: Final = 1
"""The keyspace's clock (the limiter has none)."""
CLOCK_LIMITER: Final = 2
"""The limiter's ``clock``; deadlines still count from the keyspace's clock."""

_BOUND: Final = 1 << 52
"""Integers the C code takes: sums of a few of them stay exact in int64 and as doubles."""


def factory(
    keyspace: Keyspace, lock: threading.Lock, operation: Operation[Any]
) -> Callable[..., Any] | None:
    """The C decider of ``operation`` on ``keyspace`` under ``lock``, or None when the
    keyspace is not a plain :class:`Keyspace` (its tables are read directly) or the
    policy's numbers reach 2**52 (the Python reference decides those)."""
    args = operation.native_args
    numbers: tuple[int, int, int, int] = args["numbers"]
    if type(keyspace) is not Keyspace or max(numbers) >= _BOUND:
        return None
    clock = args["clock"]
    if clock is not None:
        mode = CLOCK_LIMITER
    else:
        mode = CLOCK_SYSTEM if keyspace.clock is time.time else CLOCK_BACKEND
    decide: Callable[..., Any] = RateDecider(
        args["algorithm"],
        mode,
        numbers,
        args["floats"],
        args["policy"],
        args["decision"],
        keyspace,
        lock,
        args["identities"],
        args["keys"],
        args["args"],
        clock,
        args["core"],
        args["cell"],
        args["fields"],
        args["wrongtype"],
        args["check_clock"],
        float(MAX_INSTANT_S),
    )
    return decide
