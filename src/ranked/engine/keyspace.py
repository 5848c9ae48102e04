"""An embedded keyspace: named values with TTLs and a Redis-syntax ``execute()``.

Values are Redis types: strings (``bytes``), sorted sets (:class:`SortedSet`
with ``raw=True``), sets (``set[bytes]``) and hashes (``dict[bytes, bytes]``).
Deadlines are absolute Unix times in milliseconds from an injectable clock.
A key expires lazily whenever it is touched, and a min-heap of (deadline, key)
lets every :meth:`Keyspace.execute` call delete a few expired keys too (stale
heap entries, left behind when a deadline changes, are skipped).

Replies are RESP2-shaped like a raw redis-py ``execute_command``: bulk strings
and status replies as ``bytes``, integers as ``int``, arrays as ``list``, nil as
``None``; error replies raise :class:`ranked.errors.ResponseError`.

BZPOPMIN, BZPOPMAX and BZMPOP block the calling thread until another thread's write
serves it (see ``commands/blocked.py`` and the class docstring for how threads share a
keyspace).

Small sorted sets are "listpack-encoded" in Redis, which has one visible side
effect in 7.0: they store ``-0`` as ``0``. The keyspace keeps a per-key flag
with Redis's rules (see ``commands/zset_common.py``) so replies match.
"""

from __future__ import annotations

import heapq
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Final

from ..errors import ResponseError
from .commands import COMMAND_TABLE
from .commands.blocked import Queues, serve
from .commands.common import WRONGTYPE, Reply, Value, arity_error, unknown_command
from .zset import SortedSet, keys_with_prefix

__all__ = ["Keyspace", "Reply", "Value"]

Key = str | bytes
Arg = bytes | str | int | float | memoryview

# Active expiry work per execute() call: a fixed bound keeps every call cheap.
ACTIVE_EXPIRE_DELETES: Final = 4
ACTIVE_EXPIRE_POPS: Final = 32


def _key(key: Key) -> bytes:
    return key.encode("utf-8", "surrogateescape") if isinstance(key, str) else key


def _arg(value: Arg) -> bytes:
    """Encode one argument as redis-py does: str as UTF-8, int and float via repr."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bool):  # redis-py refuses bools too: True is not "1"
        raise TypeError("Invalid input of type: 'bool'; use bytes, str, int or float")
    if isinstance(value, int | float):
        return repr(value).encode("ascii")
    if isinstance(value, memoryview):
        return value.tobytes()
    raise TypeError(f"Invalid input of type: {type(value).__name__!r}")


class Keyspace:
    """Named Redis values with TTLs; ``execute()`` speaks Redis command syntax.

    Threads: the keyspace does not lock its data, so callers on several threads take
    one lock around every call. The memory backend uses its own lock; a program using
    the keyspace directly holds :attr:`lock`. Non-blocking commands take :attr:`lock`
    only to serve blocked threads, so with none blocked it costs them nothing. The
    blocking commands (BZPOPMIN, BZPOPMAX, BZMPOP) take it themselves, re-entrantly, so
    they may be called with or without it held; while they wait they release it
    entirely, and the write that serves them pops for them inside its own ``execute``
    call, under the lock. Never run a blocking command while holding another lock that
    writers need (such as the memory backend's): it would keep that lock while it
    waits. Writes made through the typed API rather than ``execute`` are followed by
    :meth:`serve_blocked`.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        """``clock`` returns the current Unix time in seconds (``time.time`` by default)."""
        self._clock = clock
        self._values: dict[bytes, Value] = {}
        self._deadlines: dict[bytes, int] = {}
        self._heap: list[tuple[int, bytes]] = []
        self._listpack: set[bytes] = set()
        # Keys whose deadline moved later without a new heap entry (keep_deadline).
        self._late: set[bytes] = set()
        self._lock = threading.RLock()
        # Key -> threads blocked on it, in arrival order; empty unless one waits.
        self._blocked: Queues = {}

    # -- typed API ------------------------------------------------------------
    def now_ms(self) -> int:
        """Current clock time in whole milliseconds. O(1)."""
        return math.floor(self._clock() * 1000)

    def now_us(self) -> int:
        """Current clock time in whole microseconds. O(1)."""
        return math.floor(self._clock() * 1_000_000)

    def execute(self, *args: Arg) -> Reply:
        """Run one Redis command, e.g. ``execute("ZADD", "board", 10, "ann")``.

        Names are case-insensitive; arguments may be bytes, str, int or float.
        Raises :class:`ResponseError` with Redis's error text. Also deletes up
        to a few expired keys (active expiry), and when threads are blocked in
        BZPOP* pops for those whose keys the command filled (:meth:`serve_blocked`).
        Cost: that of the command (a blocking one may wait for its timeout).
        """
        argv = [_arg(arg) for arg in args]
        self.expire_pending(ACTIVE_EXPIRE_DELETES)
        if not argv:
            raise ResponseError(unknown_command([b""]))
        command = COMMAND_TABLE.get(argv[0].lower())
        if command is None:
            raise ResponseError(unknown_command(argv))
        arity = command.arity
        if (arity > 0 and len(argv) != arity) or len(argv) < -arity:
            raise ResponseError(arity_error(command.name))
        reply = command.handler(self, argv)
        if self._blocked:
            self.serve_blocked()
        return reply

    @property
    def lock(self) -> threading.RLock:
        """The lock that threads sharing this keyspace hold around their calls (see the
        class docstring); blocking commands release it while they wait."""
        return self._lock

    @property
    def blocked(self) -> Queues:
        """Key -> the waiters blocked on it, first come first (``commands/blocked.py``
        keeps it; it is empty while no thread waits). Read or change it under :attr:`lock`."""
        return self._blocked

    def serve_blocked(self) -> int:
        """Pop for threads blocked in BZPOPMIN / BZPOPMAX / BZMPOP whose keys now hold a
        non-empty sorted set, in the order they blocked, and wake them; returns how many.

        :meth:`execute` calls it after every command; call it after writing to a key
        through the typed API (:meth:`zset` with ``create``, :meth:`store`), or such a
        write waits for the next :meth:`execute` call of any thread. Takes
        :attr:`lock`. O(1) when no thread waits, else O(keys waited on) plus the pops.
        Redis: handleClientsBlockedOnKeys.
        """
        if not self._blocked:
            return 0
        with self._lock:
            return serve(self)

    def get(self, key: Key) -> Value | None:
        """The live value at ``key`` (expired or empty means absent). O(1). Redis: lookupKey."""
        raw = _key(key)
        value = self._values.get(raw)
        if value is None:
            return None
        deadline = self._deadlines.get(raw)
        if deadline is not None and self.now_ms() > deadline:
            self.delete(raw)
            return None
        if not isinstance(value, bytes) and len(value) == 0:
            # A container emptied through the typed API: Redis never keeps those.
            self.delete(raw)
            return None
        return value

    def zset(self, key: Key, *, create: bool = False) -> SortedSet | None:
        """The sorted set at ``key``; with ``create`` an empty one is stored if missing.

        Raises ``ResponseError`` WRONGTYPE when the key holds another type. A set
        emptied by the caller is removed on the next access. O(1).
        """
        raw = _key(key)
        value = self.get(raw)
        if value is None:
            if not create:
                return None
            zset = SortedSet(raw=True)
            self._values[raw] = zset
            return zset
        if not isinstance(value, SortedSet):
            raise ResponseError(WRONGTYPE)
        return value

    def zset_fast(self, key: bytes) -> SortedSet | None:
        """The sorted set at ``key`` when it is non-empty and has no deadline, else None.

        A hot-path peek for callers holding ``key`` as bytes: None does not mean absent,
        it means "call :meth:`zset`" (the key may be missing, expiring, emptied or of
        another type; :meth:`zset` settles those). Never changes the keyspace. O(1).
        """
        value = self._values.get(key)
        if isinstance(value, SortedSet) and value and key not in self._deadlines:
            return value
        return None

    def delete(self, key: Key) -> bool:
        """Remove the key and its TTL; True if it existed (even expired). O(1). Redis: DEL."""
        raw = _key(key)
        self._deadlines.pop(raw, None)
        self._listpack.discard(raw)
        self._late.discard(raw)
        return self._values.pop(raw, None) is not None

    def deadline(self, key: Key) -> int | None:
        """The key's absolute deadline in Unix ms, or None (no TTL, or no key). O(1)."""
        raw = _key(key)
        if self.get(raw) is None:
            return None
        return self._deadlines.get(raw)

    def set_deadline(self, key: Key, deadline_ms: int | None) -> bool:
        """Set (or with None remove) the key's deadline; False when the key is absent.

        A deadline already past deletes the key at once. O(log n). Redis: PEXPIREAT / PERSIST.
        """
        raw = _key(key)
        if self.get(raw) is None:
            return False
        if deadline_ms is None:
            self._deadlines.pop(raw, None)
        elif deadline_ms <= self.now_ms():
            self.delete(raw)
        else:
            self._set_deadline(raw, deadline_ms)
        return True

    def expire_pending(self, limit: int | None = None) -> int:
        """Delete up to ``limit`` expired keys (all when None); returns how many.

        O(k log n) for k heap entries popped; stale entries are skipped.
        """
        now = self.now_ms()
        heap = self._heap
        deleted = 0
        pops = 0
        while heap and heap[0][0] < now and (limit is None or deleted < limit):
            deadline, key = heapq.heappop(heap)
            current = self._deadlines.get(key)
            if current == deadline:
                self.delete(key)
                deleted += 1
            elif key in self._late:  # moved later by keep_deadline: follow it
                self._late.discard(key)
                if current is not None and current > deadline:
                    heapq.heappush(heap, (current, key))
            pops += 1
            if limit is not None and pops >= ACTIVE_EXPIRE_POPS:
                break
        return deleted

    def iter_keys(self) -> Iterator[bytes]:
        """Every live key, in insertion order. O(n) over the iteration."""
        self.expire_pending()
        for key in list(self._values):
            if self.get(key) is not None:
                yield key

    def keys_with_prefix(self, prefix: bytes) -> list[bytes]:
        """Every live key starting with ``prefix``, in insertion order. O(n) over every key,
        in C with the C engine (a board's snapshot takes its keys from among every key of
        the process, a guard's nonces among them), plus O(k) for the k keys found."""
        return [key for key in keys_with_prefix(self._values, prefix) if self.get(key) is not None]

    def __len__(self) -> int:
        """Number of live keys. O(expired keys) amortised. Redis: DBSIZE."""
        self.expire_pending()
        return len(self._values)

    def flush(self) -> None:
        """Remove every key. O(1). Redis: FLUSHALL."""
        self._values = {}
        self._deadlines = {}
        self._heap = []
        self._listpack = set()
        self._late = set()

    # -- used by the command modules ------------------------------------------
    def store(self, key: bytes, value: Value, *, keep_ttl: bool = False) -> None:
        """Put ``value`` at ``key``, replacing any value (and its TTL unless ``keep_ttl``)."""
        if not keep_ttl:
            self._deadlines.pop(key, None)
        self._listpack.discard(key)
        self._values[key] = value

    def is_listpack(self, key: bytes) -> bool:
        """True while the zset at ``key`` would be listpack-encoded in Redis 7.0."""
        return key in self._listpack

    def set_listpack(self, key: bytes, listpack: bool) -> None:
        """Record the Redis encoding the zset at ``key`` would have."""
        if listpack:
            self._listpack.add(key)
        else:
            self._listpack.discard(key)

    def raw_deadline(self, key: bytes) -> int | None:
        """The deadline of a key the caller has just looked up (no expiry check)."""
        return self._deadlines.get(key)

    def _set_deadline(self, key: bytes, deadline_ms: int) -> None:
        self._deadlines[key] = deadline_ms
        heapq.heappush(self._heap, (deadline_ms, key))
        if len(self._heap) > 2 * len(self._deadlines) + 64:
            # Deadlines rewritten again and again leave stale entries: rebuild.
            self._heap = [(when, name) for name, when in self._deadlines.items()]
            heapq.heapify(self._heap)
            self._late = set()

    def put_deadline(self, key: bytes, deadline_ms: int) -> None:
        """Set the deadline of an existing key, even one already past (Redis SET PXAT)."""
        self._set_deadline(key, deadline_ms)

    # -- hot paths of callers that read the clock themselves -------------------
    @property
    def raw_values(self) -> dict[bytes, Value]:
        """The key -> value table itself, for hot paths that hold the memory backend's
        lock (the queue's direct push and pop): no expiry check, no copy. FLUSHALL
        replaces the table, so read it again for every operation. Writers keep Redis's
        rules: no empty container left behind, deadlines only through
        :meth:`put_deadline`."""
        return self._values

    @property
    def raw_deadlines(self) -> dict[bytes, int]:
        """The key -> deadline (Unix ms) table itself; read only (see :attr:`raw_values`)."""
        return self._deadlines

    @property
    def clock(self) -> Callable[[], float]:
        """The clock (Unix seconds) behind :meth:`now_ms` and every deadline."""
        return self._clock

    def get_at(self, key: bytes, now_ms: int) -> Value | None:
        """:meth:`get` for a bytes key at an instant the caller has just read from
        :attr:`clock` (``floor(clock() * 1000)``): one clock read per operation, not one
        per key. Same expiry and emptiness rules. O(1)."""
        value = self._values.get(key)
        if value is None:
            return None
        deadline = self._deadlines.get(key)
        if (deadline is not None and now_ms > deadline) or (
            not value and not isinstance(value, bytes)  # an emptied container: absent
        ):
            self.delete(key)
            return None
        return value

    def keep_deadline(self, key: bytes, deadline_ms: int) -> None:
        """:meth:`put_deadline` for a deadline that mostly moves later (a limiter's key
        after each hit). A later deadline only replaces the recorded one: the key's heap
        entry, now early, is pushed again at the new deadline when active expiry reaches
        it (see :meth:`expire_pending`), so a key hit again and again costs no heap push
        per hit. An earlier or first deadline is pushed at once. O(1), else O(log n)."""
        current = self._deadlines.get(key)
        if current is not None and deadline_ms >= current:
            if deadline_ms != current:
                self._deadlines[key] = deadline_ms
                self._late.add(key)
        else:
            self._set_deadline(key, deadline_ms)
