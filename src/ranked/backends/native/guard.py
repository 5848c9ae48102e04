"""The memory backend's native steps of the write guard: the check (``GuardCheck``,
``guard_check.c``) and the claim's count of a promoted score, on the guard's native tables
(``guard_tables.c``).

Registered as ``guard`` (the guard's check procedure) and ``guard_claim`` (its claim). The
factories build one per guarded board from the operation's ``native_args``; they know
nothing of the feature beyond them (no import from ``ranked.guard`` or
``ranked.ratelimit``):

- ``player`` and ``ip``: each limiter's own native arguments (what the limiter hands its
  C decider, see :mod:`.ratelimit`), or None without that limit; a ``RateDecider`` is
  built from each as the holder of its policy. A per-member limit of GCRA or the token
  bucket keeps its state in the tables (the limiter's own arithmetic on it); any other,
  and the IP's limit, run the limiter's C core on the keyspace (under the backend's lock
  the check already holds; the decider's own lock is unused);
- ``restored``: ``(value) -> (last, base, bt, n, mean, m2)``, the reader of a member's
  state found in the keyspace (a restore writes one there), WRONGTYPE for another value;
- ``tier``: the pending tier's read, ``(keyspace, now_ms, window key, member, score,
  high, operator, tier) -> (rank, held reason or None)``;
- ``decode``: the reply's decoder (None: the callable returns the raw reply);
- ``checked``: the decoded reply's type (a NamedTuple), or None: with it and a decoder,
  the C code decodes its own replies as the decoder does;
- the claim's ``reference``: its Python twin, which takes the held entry.

The check takes ``(keys, args, now_us=None)``, the operation's own call arguments, and
returns what the procedure's Python reference returns. The state it keeps is the twin's in
another place: the native tables of the board's keyspace, which ``guard_state(keyspace)``
shows as plain values.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from ...core.limits import MAX_INSTANT_S
from ...engine.keyspace import Keyspace
from ..procedure import Operation
from . import HOUSEKEEPING_DELETES, HOUSEKEEPING_EVERY
from ._native import GuardCheck, RateDecider, guard_promote

__all__ = ["claim_factory", "factory"]

_CLOCK_BACKEND: Final = 1
"""The decider's clock mode: unused here (the check hands the instant to the cores)."""

_BOUND: Final = 1 << 52


def _unused(*_args: Any) -> Any:  # pragma: no cover - the check never calls the decider
    raise AssertionError("the guard's check calls the limiter's core only")


def _decider(keyspace: Keyspace, limiter: dict[str, Any]) -> RateDecider:
    return RateDecider(
        limiter["algorithm"],
        _CLOCK_BACKEND,
        limiter["numbers"],
        limiter["floats"],
        limiter["policy"],
        limiter["decision"],
        keyspace,
        threading.Lock(),
        {},
        _unused,
        _unused,
        None,
        limiter["core"],
        limiter["cell"],
        limiter["fields"],
        limiter["wrongtype"],
        _unused,
        float(MAX_INSTANT_S),
    )


def _checked(given: Any) -> type | None:
    """The decoded reply's type when it is a NamedTuple of the six fields the C code
    fills (code, reason, player, ip, zscore, rank), else None (the decoder decodes)."""
    if not (isinstance(given, type) and issubclass(given, tuple)):
        return None
    fields: tuple[str, ...] = getattr(given, "_fields", ())
    return given if len(fields) == 6 else None


def factory(
    keyspace: Keyspace, lock: threading.Lock, operation: Operation[Any]
) -> Callable[..., Any] | None:
    """The C check of ``operation`` on ``keyspace`` under ``lock``, or None when the
    keyspace is not a plain :class:`Keyspace` (its tables are read directly) or a
    limiter's numbers reach 2**52 (the reference then runs)."""
    args = operation.native_args
    if type(keyspace) is not Keyspace:
        return None
    deciders: list[RateDecider | None] = []
    for limiter in (args["player"], args["ip"]):
        if limiter is not None and max(limiter["numbers"]) >= _BOUND:
            return None
        deciders.append(None if limiter is None else _decider(keyspace, limiter))
    check: Callable[..., Any] = GuardCheck(
        keyspace,
        lock,
        HOUSEKEEPING_EVERY,
        functools.partial(keyspace.expire_pending, HOUSEKEEPING_DELETES),
        keyspace.clock is time.time,
        deciders[0],
        deciders[1],
        args["restored"],
        args["tier"],
        args["decode"],
        _checked(args.get("checked")),
    )
    return check


def claim_factory(
    keyspace: Keyspace, lock: threading.Lock, operation: Operation[Any]
) -> Callable[..., Any] | None:
    """The claim of ``operation`` on ``keyspace`` under ``lock``: the twin takes the held
    entry (counting nothing), then a promoted score is counted in the member's history in
    the native tables, where the check reads it. None when the keyspace is not a plain
    :class:`Keyspace` (the check then runs the reference too)."""
    if type(keyspace) is not Keyspace:
        return None
    reference = operation.native_args["reference"]
    restored = operation.native_args["restored"]

    def claim(keys: Sequence[bytes], arguments: Sequence[Any], now_us: int | None = None) -> Any:
        with lock:
            now = keyspace.now_us() if now_us is None else now_us
            taken = reference(keyspace, now, keys, (arguments[0], b"0", arguments[2]))
            if taken is not None and arguments[1] in (b"1", 1):
                guard_promote(keyspace, keys[0], keys[1], float(arguments[2]), now, restored)
            return taken

    return claim
