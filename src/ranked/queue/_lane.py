"""The memory backend's direct lane for a queue's commonest calls.

On ``memory://`` a generic call pays a procedure dispatch, argument tuples, a reply list
and its decoding around the sorted-set work itself. :class:`MemoryQueue` (what
``Queue(memory_backend, name)`` builds when there is no ``max_age``) does the plain cases
itself, under the backend's lock, straight on the keyspace: a push visible now (the steps
of ``push.lua`` for one item: one clock read) and a pop with nothing delayed, leased or
retried (the steps of ``take.lua`` when there is nothing to settle: no clock read at all).

Whenever the queue's keys are in any other state (a delayed item, a lease, a retried
item, a TTL on a queue key, a wrong type, no ``ready`` set or sequence yet) it runs the
generic procedure instead, so every result is the Python twin's, which the conformance
suite checks against Redis and Redis Cluster.

It reads the keyspace's value and deadline dictionaries directly, fetched on every call
(``FLUSHALL`` replaces them), and caches the parsed sequence number keyed by the identity
of the bytes it stored: bytes are immutable and any other writer stores a new object, so
the same object means the same value.

With the C engine, a ``MemoryQueue``'s ``push``, ``pop`` and ``pop_with_priority`` are
the methods of a ``ranked.backends.native._native.QueueLane`` bound on the object: the same direct
paths in one C call, handing every other call to the Python methods below (see
``queue_lane.c`` and docs/queue.md). The lane and the queue refer to each other; the
lane takes part in garbage collection.
"""

from __future__ import annotations

import math
import struct
import threading
from collections.abc import Callable
from types import MethodType
from typing import Any

from ..backends.base import Backend
from ..backends.memory import MemoryBackend
from ..engine.keyspace import Keyspace
from ..engine.zset import IMPLEMENTATION, SortedSet
from ._plan import (
    POLL_CAP,
    Call,
    check_count,
    check_timeout,
    item_bytes,
    priority_of,
    seconds_to_us,
)
from ._wakeup import wakeup_of
from .keys import SEQ_BYTES
from .results import Item, Items, ItemT, Lease, NackOutcome
from .sync import Queue

__all__ = ["MemoryQueue"]

_pack_seq = struct.Struct(">Q").pack
_floor = math.floor

if IMPLEMENTATION == "c":
    from ..backends.native._native import QueueLane
else:  # the pure-Python engine: the Python direct paths below do the work
    QueueLane = None  # type: ignore[assignment,misc]


class MemoryQueue(Queue[ItemT]):
    """:class:`Queue` on a :class:`MemoryBackend`, with direct paths (see the module)."""

    __slots__ = (
        "__dict__",  # push, pop and pop_with_priority of the C lane, when it is built
        "_acquire",
        "_clock",
        "_keyspace",
        "_lock",
        "_quiet",
        "_ready",
        "_release",
        "_seq",
        "_seq_key",
        "_seq_text",
        "_text",
        "_wakeup",
    )

    def __init__(
        self,
        backend: Backend,
        name: str,
        *,
        max_attempts: int | None = None,
        max_age: float | None = None,
        text: bool = False,
    ) -> None:
        super().__init__(backend, name, max_attempts=max_attempts, max_age=max_age, text=text)  # type: ignore[call-overload,misc]
        if not isinstance(backend, MemoryBackend) or max_age is not None:
            raise TypeError("a MemoryQueue needs a MemoryBackend and no max_age")
        keys = self._plan.keys
        self._keyspace: Keyspace = backend.keyspace
        self._lock: threading.Lock = backend.lock
        self._acquire = self._lock.acquire
        self._release = self._lock.release
        self._clock: Callable[[], float] = self._keyspace.clock
        self._ready = keys.ready
        self._seq_key = keys.seq
        # Keys whose absence means a pop has nothing to settle first.
        self._quiet = (keys.delayed, keys.leases, keys.attempts)
        self._text = text
        self._seq_text: bytes | None = None
        self._seq = 0
        self._wakeup = wakeup_of(backend, keys.ready)
        if QueueLane is not None and type(self) is MemoryQueue:
            # The C lane does the direct paths below in one C call and hands any other
            # call to them, arguments untouched; as instance attributes its methods are
            # what ``queue.push`` finds, with no Python frame in between.
            lane = QueueLane(
                self._keyspace,
                self._lock,
                self._wakeup,
                (keys.ready, keys.seq, *self._quiet),
                text,
                (
                    MethodType(MemoryQueue.push, self),
                    MethodType(MemoryQueue.pop, self),
                    MethodType(MemoryQueue.pop_with_priority, self),
                ),
            )
            vars(self).update(
                push=lane.push, pop=lane.pop, pop_with_priority=lane.pop_with_priority
            )

    def push(
        self,
        item: Item,
        priority: float = 0.0,
        *,
        delay: float | None = None,
        at: float | None = None,
        now_us: int | None = None,
    ) -> None:
        if delay is None and at is None and now_us is None:
            if type(priority) is float and priority - priority == 0.0:
                value = priority + 0.0  # -0.0 is stored as 0.0
            else:
                value = priority_of(priority)
            data = item if type(item) is bytes else item_bytes(item)
            ready_key, seq_key = self._ready, self._seq_key
            self._acquire()
            try:
                keyspace = self._keyspace
                values = keyspace.raw_values
                ready = values.get(ready_key)
                raw = values.get(seq_key)
                if raw is self._seq_text:
                    last = self._seq
                else:
                    last = int(raw) if type(raw) is bytes else -1  # -1: let the twin decide
                deadlines = keyspace.raw_deadlines
                if (
                    last >= 0
                    and type(ready) is SortedSet
                    and not (deadlines and (ready_key in deadlines or seq_key in deadlines))
                ):
                    now = _floor(self._clock() * 1_000_000)
                    last = last + 1 if last >= now else now
                    ready.add(_pack_seq(last) + data, value)
                    self._seq_text = values[seq_key] = b"%d" % last
                    self._seq = last
                    if self._wakeup.waiting:
                        self._wakeup.notify()
                    return
            finally:
                self._release()
        super().push(item, priority, delay=delay, at=at, now_us=now_us)
        self.signal()

    push.__doc__ = Queue.push.__doc__

    def push_many(
        self,
        items: Items,
        *,
        delay: float | None = None,
        at: float | None = None,
        now_us: int | None = None,
    ) -> int:
        if delay is None and at is None and now_us is None:
            pairs = self._plan.pairs_of(items)
            if not pairs:
                return 0
            ready_key, seq_key = self._ready, self._seq_key
            with self._lock:
                values = self._keyspace.raw_values
                ready = values.get(ready_key)
                raw = values.get(seq_key)
                deadlines = self._keyspace.raw_deadlines
                if (
                    type(raw) is bytes
                    and type(ready) is SortedSet
                    and not (deadlines and (ready_key in deadlines or seq_key in deadlines))
                ):
                    last = self._seq if raw is self._seq_text else int(raw)
                    if last >= 0:
                        now = _floor(self._clock() * 1_000_000)
                        members = []
                        for data, value in pairs:
                            last = last + 1 if last >= now else now
                            members.append((_pack_seq(last) + data, value))
                        ready.add_many(members)
                        self._seq_text = values[seq_key] = b"%d" % last
                        self._seq = last
                        if self._wakeup.waiting:
                            self._wakeup.notify()
                        return len(pairs)
            items = pairs
        pushed = super().push_many(items, delay=delay, at=at, now_us=now_us)
        self.signal()
        return pushed

    push_many.__doc__ = Queue.push_many.__doc__

    def _heads(self, count: int) -> list[tuple[bytes, float]] | None:
        """Pop up to ``count`` (id, priority) heads when nothing needs settling, else
        None (run the generic take)."""
        delayed, leases, attempts = self._quiet
        ready_key = self._ready
        lock = self._lock
        lock.acquire()
        try:
            keyspace = self._keyspace
            values = keyspace.raw_values
            if delayed in values or leases in values or attempts in values:
                return None
            ready = values.get(ready_key)
            if type(ready) is SortedSet:
                deadlines = keyspace.raw_deadlines
                if deadlines and ready_key in deadlines:
                    return None
                return ready.pop_min(count)  # type: ignore[return-value]
            return [] if ready is None else None  # another type: the twin raises WRONGTYPE
        finally:
            lock.release()

    def pop(self, timeout: float | None = None, *, now_us: int | None = None) -> ItemT | None:
        check_timeout(timeout)
        if now_us is None:  # _heads(1), inlined: this is the hot path
            delayed, leases, attempts = self._quiet
            ready_key = self._ready
            empty = False
            self._acquire()
            try:
                keyspace = self._keyspace
                values = keyspace.raw_values
                if delayed not in values and leases not in values and attempts not in values:
                    ready = values.get(ready_key)
                    deadlines = keyspace.raw_deadlines
                    if type(ready) is SortedSet and not (deadlines and ready_key in deadlines):
                        if ready:
                            data = ready.pop_min(1)[0][0][SEQ_BYTES:]
                            if self._text:
                                return data.decode("utf-8", "surrogateescape")  # type: ignore[union-attr,return-value]
                            return data  # type: ignore[return-value]
                        empty = True
                    else:
                        empty = ready is None
            finally:
                self._release()
            if empty and not timeout:
                return None
        return Queue.pop(self, timeout, now_us=now_us)

    pop.__doc__ = Queue.pop.__doc__

    def pop_with_priority(
        self, timeout: float | None = None, *, now_us: int | None = None
    ) -> tuple[ItemT, float] | None:
        check_timeout(timeout)
        if now_us is None:
            heads = self._heads(1)
            if heads:
                item_id, priority = heads[0]
                return self._plan.item(item_id[SEQ_BYTES:]), priority
            if heads is not None and not timeout:
                return None
        return Queue.pop_with_priority(self, timeout, now_us=now_us)

    pop_with_priority.__doc__ = Queue.pop_with_priority.__doc__

    def pop_many(self, count: int, *, now_us: int | None = None) -> list[ItemT]:
        if now_us is None and check_count(count):
            heads = self._heads(count)
            if heads is not None:
                item = self._plan.item
                return [item(item_id[SEQ_BYTES:]) for item_id, _ in heads]
        return Queue.pop_many(self, count, now_us=now_us)

    pop_many.__doc__ = Queue.pop_many.__doc__

    def nack(
        self, lease: Lease[ItemT], *, delay: float = 0.0, now_us: int | None = None
    ) -> NackOutcome:
        outcome = Queue.nack(self, lease, delay=delay, now_us=now_us)
        self.signal()
        return outcome

    nack.__doc__ = Queue.nack.__doc__

    def retry_dead(self, count: int | None = None, *, now_us: int | None = None) -> int:
        retried = Queue.retry_dead(self, count, now_us=now_us)
        self.signal()
        return retried

    retry_dead.__doc__ = Queue.retry_dead.__doc__

    # -- waiting -----------------------------------------------------------------------

    def signal(self) -> None:
        """Wake the pops waiting on this queue, if any (after a write that may have made
        items ready)."""
        with self._lock:
            if self._wakeup.waiting:
                self._wakeup.notify()

    def _run_locked(self, call: Call) -> Any:
        """``backend.run(*call)`` for a caller already holding the backend's lock."""
        procedure, keys, args, now_us = call
        keyspace = self._keyspace
        now = keyspace.now_us() if now_us is None else now_us
        return procedure.decode(procedure.local(keyspace, now, keys, args))

    def _wait(self, call: Call, timeout: float | None) -> Any:
        """Run ``call`` until it answers (an item came back) or ``timeout``, sleeping on
        the queue's :class:`Wakeup` between tries: a push wakes the waiter at once."""
        check_timeout(timeout)
        if not timeout:
            return self._run(*call)
        seconds = seconds_to_us(timeout, "timeout") / 1e6
        return self._wakeup.wait(lambda: self._run_locked(call), seconds, POLL_CAP)

    async def wait_async(self, call: Call, timeout: float | None) -> Any:
        """:meth:`_wait` for an event loop: the task awaits a future a push resolves."""
        check_timeout(timeout)
        if not timeout:
            return self._run(*call)
        seconds = seconds_to_us(timeout, "timeout") / 1e6
        return await self._wakeup.wait_async(lambda: self._run_locked(call), seconds, POLL_CAP)


def lane_of(backend: Any, name: str, **options: Any) -> MemoryQueue[Any] | None:
    """A :class:`MemoryQueue` on the memory backend under an async memory backend, or
    None (another backend, or ``max_age`` given)."""
    sync = getattr(backend, "sync", None)
    if type(sync) is not MemoryBackend or options.get("max_age") is not None:
        return None
    return MemoryQueue(sync, name, **options)
