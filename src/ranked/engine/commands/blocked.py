"""Threads blocked in BZPOPMIN / BZPOPMAX / BZMPOP, and how writers serve them.

Redis serves a blocked client right after the command that made one of its keys
non-empty, popping for the clients blocked on that key in the order they blocked. The
keyspace does the same across threads, with :attr:`Keyspace.lock` (an ``RLock``):

* :func:`block` takes the lock (the caller may hold it already), queues a :class:`Waiter`
  on each of its keys, then looks at the keys once, in order: WRONGTYPE and an immediate
  pop happen here, as in Redis. With nothing to pop it waits on the waiter's own
  condition variable, which releases the lock entirely (every level of the ``RLock``), so
  a blocked thread holds nothing any other caller needs.
* :meth:`Keyspace.execute` tests after every command whether anyone waits at all (a dict
  that stays empty unless a thread is blocked: one truthiness test on the hot path). If
  someone does, :func:`serve` runs under the lock: for each key with waiters that now
  holds a non-empty sorted set, it pops for them in arrival order until the set is empty
  (a key of another type serves nobody, as in Redis 7.0), stores each reply in its
  waiter and wakes that one thread. Callers that write through the typed API instead of
  ``execute`` call :meth:`Keyspace.serve_blocked` after their write.
* A waiter queues itself *before* its first look, both under the lock, so a write that
  lands after that look always finds it queued: no wake-up is lost. When its time runs
  out it leaves its queues under the lock; a reply stored before that wins.

So the pops run in the writing thread, inside the writer's call like any other part of
its command, and a waiting thread never touches the data.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ..zset import SortedSet
from .common import Reply
from .zset_common import Pop, first_pop

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["Pop", "Queues", "Waiter", "block", "serve"]

# One wait() call never asks for more than this (threading.TIMEOUT_MAX is finite).
_LONGEST_WAIT: Final = 3600.0


class Waiter:
    """One blocked call: its distinct keys, how to pop for it, and where its reply goes."""

    __slots__ = ("condition", "keys", "pop", "reply", "served")

    def __init__(self, lock: threading.RLock, keys: list[bytes], pop: Pop) -> None:
        self.condition = threading.Condition(lock)
        self.keys = keys
        self.pop = pop
        self.reply: Reply = None
        self.served = False


Queues = dict[bytes, deque[Waiter]]
"""Key -> the waiters blocked on it, first come first; a key leaves when nobody waits."""


def _leave(queues: Queues, waiter: Waiter) -> None:
    for key in waiter.keys:
        queue = queues.get(key)
        if queue is None:
            continue
        with contextlib.suppress(ValueError):  # served through this key: already out
            queue.remove(waiter)
        if not queue:
            del queues[key]


def block(ks: Keyspace, keys: Sequence[bytes], pop: Pop, timeout_ms: int) -> Reply:
    """Pop at once if one of ``keys`` holds a non-empty sorted set, else wait until a
    writer pops for this call or ``timeout_ms`` (0: no limit) passes; None on timeout.

    Raises WRONGTYPE when a key of another type comes before any non-empty sorted set.
    Takes ``ks.lock``, and releases it while waiting. O(keys) plus the pop.
    """
    deadline = None if timeout_ms == 0 else time.monotonic() + timeout_ms / 1000
    queues = ks.blocked
    with ks.lock:
        waiter = Waiter(ks.lock, list(dict.fromkeys(keys)), pop)
        for key in waiter.keys:
            queues.setdefault(key, deque()).append(waiter)
        try:
            reply = first_pop(ks, keys, pop)  # Redis's look before blocking
            if reply is not None:
                return reply
            while not waiter.served:
                left = _LONGEST_WAIT if deadline is None else deadline - time.monotonic()
                if left <= 0:
                    return None
                waiter.condition.wait(min(left, _LONGEST_WAIT))
            return waiter.reply
        finally:
            if not waiter.served:
                _leave(queues, waiter)


def serve(ks: Keyspace) -> int:
    """Pop for the waiters whose keys now hold a non-empty sorted set, first come first
    served on each key, and wake them; returns how many were served. The caller holds
    ``ks.lock``. O(keys with waiters) plus the pops."""
    queues = ks.blocked
    served = 0
    for key in list(queues):
        queue = queues.get(key)
        if not queue:
            continue
        zset = ks.get(key)
        if not isinstance(zset, SortedSet):
            continue  # still missing, or now another type: Redis wakes nobody either
        while queue and len(zset):
            waiter = queue.popleft()
            _leave(queues, waiter)
            waiter.reply = waiter.pop(ks, key, zset)
            waiter.served = True
            waiter.condition.notify()
            served += 1
    return served
