"""The memory backend's native implementations of features' procedures.

``memory://`` answers :meth:`~ranked.backends.memory.MemoryBackend.bind` with a native
callable when one is registered here under the procedure's ``native`` name and the C engine
is loaded, else with the procedure's Python reference run under the backend's lock. A
native factory takes the backend's keyspace, its lock and the operation (whose
``native_args`` carry the feature's static data and result constructors) and returns the
callable, or None when this operation's parameters are outside what the native code
handles (the reference then runs).

The factories are imported on first use, so ``memory://`` on the pure-Python engine loads
no native code.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from ...engine.keyspace import Keyspace
from ...engine.zset import IMPLEMENTATION
from ..procedure import Bindable

__all__ = [
    "HOUSEKEEPING_DELETES",
    "HOUSEKEEPING_EVERY",
    "Factory",
    "awaitable",
    "locked",
    "native_factory",
]

T = TypeVar("T")

Factory = Callable[[Keyspace, threading.Lock, Bindable[Any]], Callable[..., Any] | None]
"""``(keyspace, lock, operation) -> native callable or None``."""

HOUSEKEEPING_EVERY: Final = 32
HOUSEKEEPING_DELETES: Final = 4
"""The memory backend's active expiry: every ``HOUSEKEEPING_EVERY`` writes (counted per
backend handle, or per native writer) delete up to ``HOUSEKEEPING_DELETES`` expired keys."""

_FACTORIES: Final[dict[str, tuple[str, str]]] = {
    "board": ("board", "factory"),
    "board_method": ("board", "method_factory"),
    "board_entry": ("board", "reader_factory"),
    "guard": ("guard", "factory"),
    "guard_claim": ("guard", "claim_factory"),
    "queue": ("queue", "factory"),
    "ratelimit": ("ratelimit", "factory"),
}
"""Native name -> (the module of this package, the factory's name in it)."""


def native_factory(name: str | None) -> Factory | None:
    """The factory registered for ``name``, or None (no name, none registered, or the
    pure-Python engine: ``RANKED_PUREPYTHON=1``)."""
    if name is None or IMPLEMENTATION != "c":
        return None
    found = _FACTORIES.get(name)
    if found is None:
        return None
    module, attribute = found
    factory: Factory = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    return factory


def locked(
    reference: Callable[..., T], keyspace: Keyspace, lock: threading.Lock, writes: bool
) -> Callable[..., T] | None:
    """``reference(keyspace, *args)`` run holding ``lock``, called with ``*args``: a native
    ``Locked`` on the C engine (no Python frame of its own), which on a step that
    ``writes`` first runs the active expiry every :data:`HOUSEKEEPING_EVERY` calls; None
    on the pure-Python engine (the backend wraps the reference itself)."""
    if IMPLEMENTATION != "c":
        return None
    from ._native import Locked

    every = HOUSEKEEPING_EVERY if writes else 0
    expire = functools.partial(keyspace.expire_pending, HOUSEKEEPING_DELETES)
    run: Callable[..., T] = Locked(reference, keyspace, lock, every, expire)
    return run


def awaitable(call: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """``call`` for the asyncio memory backend: called the same way, it runs at once and
    returns an awaitable of the result (an exception is raised at the await); a result
    that is a coroutine (a step that must wait) is awaited in its place. On the C engine
    that awaitable is a native ``Ready`` (no coroutine per call), or the coroutine itself;
    otherwise the call is wrapped in ``async def``."""
    if IMPLEMENTATION == "c":
        from ._native import AwaitNow

        wrapped: Callable[..., Awaitable[T]] = AwaitNow(call)
        return wrapped

    async def run(*args: Any, **kwargs: Any) -> T:
        result = call(*args, **kwargs)
        if inspect.iscoroutine(result):
            waited: T = await result
            return waited
        return result

    return run
