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
from collections.abc import Callable
from typing import Any, Final

from ...engine.keyspace import Keyspace
from ...engine.zset import IMPLEMENTATION
from ..procedure import Operation

__all__ = ["Factory", "native_factory"]

Factory = Callable[[Keyspace, threading.Lock, Operation[Any]], Callable[..., Any] | None]
"""``(keyspace, lock, operation) -> native callable or None``."""

_MODULES: Final[dict[str, str]] = {
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
