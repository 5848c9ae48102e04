"""Blocked pops on the memory backend, woken by writes instead of polling.

A Lua script cannot block, so on Redis a waiting pop polls. In one process the writing
thread can wake the waiters itself: every queue step of one ready key on one keyspace
shares one :class:`Wakeup`, whose condition variable uses the backend's lock. A waiter
tries the step and starts waiting under that lock, and a write wakes it after its change
(see :func:`notify_after`), so no wake-up is lost. A write with nobody waiting pays one
attribute test.

Waiters still look again every ``cap`` seconds (the queue's ``POLL_CAP``): delayed items
falling due and leases expiring signal nobody.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Final

from ...engine.keyspace import Keyspace

__all__ = ["Wakeup", "wakeup_of"]

_REGISTRY: Final[weakref.WeakKeyDictionary[Keyspace, dict[bytes, Wakeup]]] = (
    weakref.WeakKeyDictionary()
)
_REGISTRY_LOCK: Final = threading.Lock()


class Wakeup:
    """The waiters of one queue on one keyspace. :meth:`notify` expects the backend's lock
    held (the condition's lock); the waits take it themselves."""

    __slots__ = ("condition", "futures", "waiting")

    def __init__(self, lock: threading.Lock) -> None:
        self.condition = threading.Condition(lock)
        self.futures: set[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = set()
        self.waiting = 0
        """Threads plus tasks waiting: what a write tests."""

    def notify(self) -> None:
        """Wake every waiter (they race for the items; losers wait again)."""
        self.condition.notify_all()
        for loop, future in self.futures:
            loop.call_soon_threadsafe(_resolve, future)
        self.futures.clear()

    def wait(self, attempt: Callable[[], Any], seconds: float, cap: float) -> Any:
        """Call ``attempt`` (under the lock) until it answers something other than None
        or ``seconds`` pass, waiting between tries until a notify, or ``cap`` seconds."""
        deadline = time.monotonic() + seconds
        with self.condition:
            while True:
                answer = attempt()
                left = deadline - time.monotonic()
                if answer is not None or left <= 0:
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
                if answer is not None or left <= 0:
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


def wakeup_of(keyspace: Keyspace, lock: threading.Lock, key: bytes) -> Wakeup:
    """The :class:`Wakeup` shared by every step on the queue whose ready set is ``key``."""
    with _REGISTRY_LOCK:
        found = _REGISTRY.setdefault(keyspace, {})
        wakeup = found.get(key)
        if wakeup is None:
            wakeup = found[key] = Wakeup(lock)
        return wakeup


def notify_after(
    run: Callable[..., Any], wakeup: Wakeup, lock: threading.Lock
) -> Callable[..., Any]:
    """``run`` (a step that takes the lock itself), then a wake-up of the queue's waiters
    if there are any. Reading ``waiting`` after the write, outside the lock, misses no
    one: a waiter counts itself under the lock in the same hold as its failed try, so a
    try before this write is counted by the time the write is done."""

    def step(*args: Any) -> Any:
        answer = run(*args)
        if wakeup.waiting:
            with lock:
                wakeup.notify()
        return answer

    return step
