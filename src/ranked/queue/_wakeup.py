"""Blocked pops on the memory backend, woken by pushes instead of polling.

A Lua script cannot block, so on Redis a waiting pop polls (see :func:`._plan.pauses`).
In one process the pushing thread can wake the waiters itself: every queue object of one
name on one :class:`MemoryBackend` shares one :class:`Wakeup`, whose condition variable
uses the backend's lock. A waiter checks the queue and starts waiting under that lock,
and a push signals under it, so no wake-up is lost. A push with nobody waiting pays one
attribute test.

Waiters still look again every :data:`._plan.POLL_CAP` seconds: delayed items falling
due, leases expiring and writes that bypass the queue objects (raw keyspace commands, a
``ShardedQueue``) signal nobody.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Final

from ..backends.memory import MemoryBackend

__all__ = ["Wakeup", "wakeup_of"]

_REGISTRY: Final[weakref.WeakKeyDictionary[MemoryBackend, dict[bytes, Wakeup]]] = (
    weakref.WeakKeyDictionary()
)
_REGISTRY_LOCK: Final = threading.Lock()


class Wakeup:
    """The waiters of one queue on one backend. :meth:`notify` expects the backend's lock
    held (the condition's lock); the waits take it themselves."""

    __slots__ = ("condition", "futures", "waiting")

    def __init__(self, lock: threading.Lock) -> None:
        self.condition = threading.Condition(lock)
        self.futures: set[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = set()
        self.waiting = 0
        """Threads plus tasks waiting: what a push tests."""

    def notify(self) -> None:
        """Wake every waiter (they race for the items; losers wait again)."""
        self.condition.notify_all()
        for loop, future in self.futures:
            loop.call_soon_threadsafe(_resolve, future)
        self.futures.clear()

    def wait(self, attempt: Callable[[], Any], seconds: float, cap: float) -> Any:
        """Call ``attempt`` (under the lock) until it answers truthy or ``seconds`` pass,
        waiting between tries until a notify, or ``cap`` seconds at most."""
        deadline = time.monotonic() + seconds
        with self.condition:
            while True:
                answer = attempt()
                left = deadline - time.monotonic()
                if answer or left <= 0:
                    return answer
                self.waiting += 1
                try:
                    self.condition.wait(min(left, cap))
                finally:
                    self.waiting -= 1

    async def wait_async(self, attempt: Callable[[], Any], seconds: float, cap: float) -> Any:
        """:meth:`wait` for a task: it awaits a future that :meth:`notify` resolves."""
        deadline = time.monotonic() + seconds
        loop = asyncio.get_running_loop()
        while True:
            with self.condition:
                answer = attempt()
                left = deadline - time.monotonic()
                if answer or left <= 0:
                    return answer
                entry = (loop, loop.create_future())
                self.futures.add(entry)
                self.waiting += 1
            try:
                await asyncio.wait((entry[1],), timeout=min(left, cap))
            finally:
                with self.condition:
                    self.waiting -= 1
                    self.futures.discard(entry)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def wakeup_of(backend: MemoryBackend, key: bytes) -> Wakeup:
    """The :class:`Wakeup` shared by every queue object whose ready set is ``key``."""
    with _REGISTRY_LOCK:
        found = _REGISTRY.setdefault(backend, {})
        wakeup = found.get(key)
        if wakeup is None:
            wakeup = found[key] = Wakeup(backend.lock)
        return wakeup
