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

import importlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from ...engine.keyspace import Keyspace
from ...engine.zset import IMPLEMENTATION
from ..procedure import Operation

__all__ = ["Factory", "awaitable", "native_factory"]

T = TypeVar("T")

Factory = Callable[[Keyspace, threading.Lock, Operation[Any]], Callable[..., Any] | None]
"""``(keyspace, lock, operation) -> native callable or None``."""

_MODULES: Final[dict[str, str]] = {
    "queue": "queue",
    "ratelimit": "ratelimit",
}
"""Native name -> the module of this package defining ``factory``."""


def native_factory(name: str | None) -> Factory | None:
    """The factory registered for ``name``, or None (no name, none registered, or the
    pure-Python engine: ``RANKED_PUREPYTHON=1``)."""
    if name is None or IMPLEMENTATION != "c":
        return None
    module = _MODULES.get(name)
    if module is None:
        return None
    factory: Factory = importlib.import_module(f"{__name__}.{module}").factory
    return factory


def awaitable(call: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """``call`` for the asyncio memory backend: called the same way, it runs at once and
    returns an awaitable of the result (an exception is raised at the await). On the C
    engine that awaitable is a native ``Ready`` (no coroutine per call); otherwise the
    call is wrapped in ``async def``."""
    if IMPLEMENTATION == "c":
        from ._native import AwaitNow

        wrapped: Callable[..., Awaitable[T]] = AwaitNow(call)
        return wrapped

    async def run(*args: Any, **kwargs: Any) -> T:
        return call(*args, **kwargs)

    return run
