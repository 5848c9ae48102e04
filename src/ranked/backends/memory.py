"""The ``memory://`` backend: the in-process engine behind the backend contract.

Boards are :class:`~ranked.engine.zset.SortedSet` values of a :class:`ranked.Keyspace`
(sets are ``set[bytes]``, hashes ``dict[bytes, bytes]``, as ``Keyspace.execute`` stores
them, so Redis-syntax commands see the same data). One ``threading.Lock`` guards the
keyspace: every operation runs whole under it, so every operation is atomic.

Stores: a URL names a process-wide store, as a Redis URL names a server. Every
:meth:`MemoryBackend.from_url` (and ``open_backend``, ``Leaderboard("memory://", ...)``)
of one URL in one process shares one keyspace and one lock, like two clients of one
server: ``memory://`` is the default store, ``memory://<name>`` a store of its own
(``memory://a`` and ``memory://b`` are separate; the same name is the same store). A
store lives as long as the process, as a server's data outlives its clients:
:meth:`MemoryBackend.close` releases nothing, and :meth:`MemoryBackend.flushall` empties
it. ``MemoryBackend()`` built directly has a private store no URL reaches (tests, and
anything that must be isolated).

Operations call the engine directly (no command strings): a submission to one target is
a score lookup, one ``add`` and a rank or two, each O(log n). The dense-rank companion
keys of a :class:`~ranked.backends.base.Target` are ignored (the engine answers dense
ranks itself); in particular they never exist here, so ``delete`` does not count them.

Choices the contract leaves open, made the least surprising way:

- a submitted value that is not a finite int or float, or an ``incr``/``decr`` whose
  result is not finite, raises ``InvalidScoreError``; a composite value that is not a
  whole number raises ``OutOfRangeError``; a composite layout wider than 53 bits (or
  with a non-positive unit) raises ``LayoutError``;
- negative ``keep``, ``start``/``stop``, ``count``, ``offset``, ``limit``, and a
  non-positive ``ttl_ms`` raise ``ValueError``; an unknown rank style or operator too;
- positions past :data:`~.base.MAX_POSITION` (any int) read nothing, and counts past it
  read to the end, as on Redis (no board holds that many members);
- TTLs count from the backend's clock at the moment of the write (like PEXPIRE), not
  from ``request.now_ms`` (which only stamps composite scores);
- a target key given twice in one request is written twice, in order;
- ``hash_set`` with no fields only refreshes the TTL of an existing hash.
"""

from __future__ import annotations

import inspect
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ..engine.keyspace import Keyspace
from ..engine.zset import SortedSet
from ..errors import InvalidScoreError, ResponseError
from ._memory_rows import rows
from ._memory_submit import (
    STYLES,
    WRONGTYPE,
    BoardWrite,
    Journal,
    apply_submit,
    board_writer,
    submit_single,
    ties_hash,
)
from ._scripts import Arg
from .base import (
    MAX_POSITION,
    LexOperator,
    LexOutcome,
    Row,
    SubmitOutcome,
    SubmitRequest,
    Target,
)
from .native import awaitable, native_factory
from .procedure import AsyncBound, Bound, Operation, Procedure

T = TypeVar("T")
S = TypeVar("S", bound=tuple[Any, ...])

__all__ = ["AsyncMemoryBackend", "MemoryBackend", "store_name"]

_WRONGTYPE = WRONGTYPE
# Every this many writes, delete a few expired keys (the keyspace's active expiry).
_HOUSEKEEPING_EVERY = 32
_HOUSEKEEPING_DELETES = 4


def _check_style(style: str) -> None:
    if style not in STYLES:
        raise ValueError(f"unknown rank style {style!r}")


def _not_negative(**values: int) -> None:
    for name, value in values.items():
        if value < 0:
            raise ValueError(f"{name} must not be negative, not {value}")


def _positive_ttl(ttl_ms: int) -> None:
    if ttl_ms <= 0:
        raise ValueError(f"ttl_ms must be positive, not {ttl_ms}")


def _check_bounds(low: float, high: float) -> None:
    if math.isnan(low) or math.isnan(high):
        raise InvalidScoreError("a score bound must not be NaN")


class _Store:
    """One named store: the keyspace and the lock every handle on it shares."""

    __slots__ = ("clock", "keyspace", "lock")

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.keyspace = Keyspace(clock=clock)
        self.lock = threading.Lock()


_STORES: dict[str, _Store] = {}
"""Store name -> store, for the life of the process (see the module docstring)."""
_STORES_LOCK = threading.Lock()


def store_name(url: str) -> str:
    """The store a ``memory://`` URL names: what follows ``memory://`` (``""``: the
    default store). ``ValueError`` for another scheme."""
    scheme, separator, name = url.partition("://") if isinstance(url, str) else ("", "", "")
    if not separator or scheme.lower() != "memory":
        raise ValueError(f"not a memory:// URL: {url!r}")
    return name


def _shared_store(url: str, clock: Callable[[], float] | None) -> _Store:
    name = store_name(url)
    with _STORES_LOCK:
        store = _STORES.get(name)
        if store is None:
            store = _STORES[name] = _Store(time.time if clock is None else clock)
        elif clock is not None and clock is not store.clock:
            raise ValueError(
                f"memory store {name!r} is already open with another clock: a store has "
                "one clock (its TTLs count on it); open it without clock=, or use another "
                "store name"
            )
        return store


class MemoryBackend:
    """Backend on an in-process :class:`~ranked.Keyspace`; every operation atomic.

    ``MemoryBackend()`` has a private store; :meth:`from_url` opens the process-wide
    store a URL names (see the module docstring). ``clock`` returns Unix time in seconds
    (``time.time`` by default); tests inject a fake one. Thread safe: one lock (the
    store's) serialises every operation of every handle on the store.
    """

    cross_slot = True

    def __init__(self, url: str = "memory://", clock: Callable[[], float] | None = None) -> None:
        self._attach(url, Keyspace(clock=time.time if clock is None else clock), threading.Lock())

    def _attach(self, url: str, keyspace: Keyspace, lock: threading.Lock) -> None:
        self.url = url
        self._keyspace = keyspace
        self._lock = lock
        self._writes = 0

    @classmethod
    def from_url(
        cls, url: str = "memory://", clock: Callable[[], float] | None = None
    ) -> MemoryBackend:
        """A handle on the process-wide store ``url`` names (created empty on first use):
        ``memory://`` is the default store, ``memory://<name>`` another. ``clock`` sets
        the clock of a store this call creates; a store already open keeps its own, and
        another ``clock`` for it is a ``ValueError``. O(1)."""
        store = _shared_store(url, clock)
        backend = cls.__new__(cls)
        backend._attach(url, store.keyspace, store.lock)
        return backend

    @property
    def keyspace(self) -> Keyspace:
        """The keyspace holding the data (take :attr:`lock` to touch it from threads)."""
        return self._keyspace

    @property
    def lock(self) -> threading.Lock:
        """The lock every operation holds."""
        return self._lock

    def now_ms(self) -> int:
        """The clock in Unix ms. O(1)."""
        return self._keyspace.now_ms()

    def _housekeeping(self) -> None:
        self._writes += 1
        if self._writes % _HOUSEKEEPING_EVERY == 0:
            self._keyspace.expire_pending(_HOUSEKEEPING_DELETES)

    def _zset(self, key: bytes) -> SortedSet | None:
        return self._keyspace.zset(key)

    def _expire_some(self) -> None:
        """The housekeeping step of :meth:`board_writer`'s writers, under the lock."""
        with self._lock:
            self._keyspace.expire_pending(_HOUSEKEEPING_DELETES)

    def board_writer(
        self,
        key: bytes,
        window: str,
        high_first: bool,
        style: str,
        operator: str,
        result_type: type[tuple[Any, ...]],
        submission_type: type[S],
    ) -> BoardWrite[S] | None:
        """A one-call submit to the sorted set at ``key`` for a board with one window
        and plain scores (no keep, TTL or tie values): ``write(member, score, operator)``
        returns the ``submission_type`` of a submission, or None having changed nothing
        when the general path must run (see :func:`._memory_submit.board_writer`). None
        on the pure-Python engine."""
        return board_writer(
            vars(self._keyspace),
            self._lock,
            self._expire_some,
            _HOUSEKEEPING_EVERY,
            (key, window, high_first, style, operator),
            result_type,
            submission_type,
        )

    # -- writes -------------------------------------------------------------------

    def submit(self, request: SubmitRequest) -> tuple[SubmitOutcome, ...]:
        """One submission to all its targets, atomically. O(targets * log n)."""
        with self._lock:
            self._housekeeping()
            if request.composite is None and len(request.targets) == 1:
                return submit_single(self._keyspace, request)
            return apply_submit(self._keyspace, request, None)

    def submit_batch(self, requests: Sequence[SubmitRequest]) -> list[tuple[SubmitOutcome, ...]]:
        """Submissions in order, all or nothing: a failing one undoes the ones before it."""
        with self._lock:
            self._housekeeping()
            journal = Journal()
            try:
                return [apply_submit(self._keyspace, request, journal) for request in requests]
            except BaseException:
                journal.rollback(self._keyspace)
                raise

    def remove(self, targets: Sequence[Target], members: Sequence[bytes]) -> int:
        """ZREM the members from every target, HDEL them from its ties hash; removals
        summed. O(targets * k log n)."""
        with self._lock:
            keyspace = self._keyspace
            for target in targets:  # WRONGTYPE before any change
                if target.ties_key is not None:
                    ties_hash(keyspace, target.ties_key, create=False)
            removed = 0
            for target in targets:
                zset = self._zset(target.key)
                if zset is not None and members:
                    removed += zset.remove(*members)
                if target.ties_key is not None:
                    ties = ties_hash(keyspace, target.ties_key, create=False)
                    if ties is not None:
                        for member in members:
                            ties.pop(member, None)
            return removed

    def delete(self, keys: Sequence[bytes]) -> int:
        """DEL: how many of the keys existed (companion keys never do here). O(k)."""
        with self._lock:
            keyspace = self._keyspace
            return sum(1 for key in keys if keyspace.get(key) is not None and keyspace.delete(key))

    def expire_at(self, keys: Sequence[bytes], deadline_ms: int) -> None:
        """PEXPIREAT on the keys that exist; a deadline already past deletes them."""
        with self._lock:
            for key in keys:
                self._keyspace.set_deadline(key, deadline_ms)

    # -- reads ---------------------------------------------------------------------

    def ranks(
        self, target: Target, members: Sequence[bytes], high_first: bool, style: str
    ) -> list[tuple[float, int] | None]:
        """(score, rank) per member, None when absent. O(k log n)."""
        _check_style(style)
        with self._lock:
            zset = self._zset(target.key)
            if zset is None:
                return [None] * len(members)
            # One C call for every score; only members present pay a rank descent.
            rank = zset.rank
            return [
                None if score is None else (score, rank(member, style=style, reverse=high_first))  # type: ignore[arg-type,misc]
                for member, score in zip(members, zset.scores(members), strict=True)
            ]

    def page(
        self, target: Target, start: int, stop: int, high_first: bool, style: str
    ) -> list[Row]:
        """Rows at positions start..stop (inclusive, clamped). O(log n + k)."""
        _not_negative(start=start, stop=stop)
        _check_style(style)
        if stop > MAX_POSITION:  # positions past MAX_POSITION: on no board
            stop = MAX_POSITION
        with self._lock:
            zset = self._zset(target.key)
            if zset is None or start > stop:
                return []
            pairs = zset.range_by_index(start, stop, reverse=high_first)
            return rows(zset, pairs, start, high_first, style)

    def page_after(
        self,
        target: Target,
        score: float,
        member: bytes,
        count: int,
        high_first: bool,
        style: str,
    ) -> list[Row]:
        """Up to ``count`` rows strictly after (score, member) in board order. O(log n + k)."""
        if count < 0:
            _not_negative(count=count)
        if count > MAX_POSITION:
            count = MAX_POSITION
        if style not in STYLES:
            _check_style(style)
        if score != score:  # NaN: the one float unequal to itself
            _check_bounds(score, score)
        with self._lock:
            zset = self._keyspace.zset(target.key)
            if zset is None or count == 0:
                return []
            pairs = zset.items_after(score, member, count, reverse=high_first)
            return rows(zset, pairs, None, high_first, style)

    def around(
        self,
        target: Target,
        member: bytes,
        before: int,
        after: int,
        high_first: bool,
        style: str,
    ) -> tuple[int, list[Row]] | None:
        """The member's window (shifted at the edges) and its index in it. O(log n + k)."""
        _not_negative(before=before, after=after)
        _check_style(style)
        if before > MAX_POSITION or after > MAX_POSITION:
            before, after = min(before, MAX_POSITION), min(after, MAX_POSITION)
        with self._lock:
            zset = self._zset(target.key)
            if zset is None:
                return None
            found = zset.range_around(member, before, after, reverse=high_first)
            if found is None:
                return None
            index, pairs = found
            first = max(0, min(index - before, len(zset) - len(pairs)))
            return index - first, rows(zset, pairs, first, high_first, style)

    def by_score(
        self,
        target: Target,
        low: float,
        high: float,
        offset: int,
        count: int,
        high_first: bool,
        style: str,
    ) -> list[Row]:
        """Rows with low <= score <= high in board order, LIMIT offset count.
        O(log n + offset + k)."""
        _not_negative(offset=offset, count=count)
        _check_style(style)
        _check_bounds(low, high)
        if count > MAX_POSITION:
            count = MAX_POSITION
        with self._lock:
            zset = self._zset(target.key)
            if zset is None or count == 0 or offset > MAX_POSITION:
                return []
            pairs = zset.range_by_score(low, high, reverse=high_first, offset=offset, count=count)
            return rows(zset, pairs, None, high_first, style)

    def count(self, target: Target, low: float = -math.inf, high: float = math.inf) -> int:
        """Members with low <= score <= high. O(log n)."""
        _check_bounds(low, high)
        with self._lock:
            zset = self._zset(target.key)
            if zset is None:
                return 0
            if low == -math.inf and high == math.inf:
                return len(zset)
            return zset.count_by_score(low, high)

    def percentile(
        self, target: Target, member: bytes, high_first: bool
    ) -> tuple[float, int, int] | None:
        """(score, members, members strictly worse), None when absent. O(log n)."""
        with self._lock:
            zset = self._zset(target.key)
            if zset is None:
                return None
            score = zset.score(member)
            if score is None:
                return None
            if high_first:
                worse = zset.count_by_score(max=score, max_exclusive=True)
            else:
                worse = zset.count_by_score(min=score, min_exclusive=True)
            return score, len(zset), worse

    def scores(self, target: Target, members: Sequence[bytes]) -> list[float | None]:
        """ZMSCORE. O(k)."""
        with self._lock:
            zset = self._zset(target.key)
            if zset is None:
                return [None] * len(members)
            return zset.scores(members)

    def range_all(self, key: bytes, high_first: bool, limit: int) -> list[tuple[bytes, float]]:
        """Up to ``limit`` (member, score) pairs in board order. O(log n + limit)."""
        _not_negative(limit=limit)
        if limit > MAX_POSITION:
            limit = MAX_POSITION
        with self._lock:
            zset = self._zset(key)
            if zset is None or limit == 0:
                return []
            return zset.range_by_index(0, limit - 1, reverse=high_first)  # type: ignore[return-value]

    # -- hashes and sets ---------------------------------------------------------

    def _hash(self, key: bytes, create: bool) -> dict[bytes, bytes] | None:
        value = self._keyspace.get(key)
        if value is None:
            if not create:
                return None
            fresh: dict[bytes, bytes] = {}
            self._keyspace.store(key, fresh)
            return fresh
        if not isinstance(value, dict):
            raise ResponseError(_WRONGTYPE)
        return value

    def _set(self, key: bytes, create: bool) -> set[bytes] | None:
        value = self._keyspace.get(key)
        if value is None:
            if not create:
                return None
            fresh: set[bytes] = set()
            self._keyspace.store(key, fresh)
            return fresh
        if not isinstance(value, set):
            raise ResponseError(_WRONGTYPE)
        return value

    def hash_set(self, key: bytes, fields: Mapping[bytes, bytes], ttl_ms: int | None) -> None:
        """HSET, then PEXPIRE when ``ttl_ms`` is set. O(k)."""
        if ttl_ms is not None:
            _positive_ttl(ttl_ms)
        with self._lock:
            self._housekeeping()
            if fields:
                stored = self._hash(key, create=True)
                assert stored is not None
                stored.update(fields)
            elif self._hash(key, create=False) is None:
                return
            if ttl_ms is not None:
                self._keyspace.put_deadline(key, self._keyspace.now_ms() + ttl_ms)

    def hash_get(self, key: bytes, fields: Sequence[bytes]) -> list[bytes | None]:
        """HMGET. O(k)."""
        with self._lock:
            stored = self._hash(key, create=False)
            if stored is None:
                return [None] * len(fields)
            return [stored.get(field) for field in fields]

    def hash_delete(self, key: bytes, fields: Sequence[bytes]) -> int:
        """HDEL: how many fields existed. O(k)."""
        with self._lock:
            stored = self._hash(key, create=False)
            if stored is None:
                return 0
            return sum(1 for field in fields if stored.pop(field, None) is not None)

    def set_add(self, key: bytes, members: Sequence[bytes]) -> int:
        """SADD: how many were new. O(k)."""
        with self._lock:
            self._housekeeping()
            if not members:
                return 0
            stored = self._set(key, create=True)
            assert stored is not None
            before = len(stored)
            stored.update(members)
            return len(stored) - before

    def set_remove(self, key: bytes, members: Sequence[bytes]) -> int:
        """SREM: how many existed. O(k)."""
        with self._lock:
            stored = self._set(key, create=False)
            if stored is None:
                return 0
            before = len(stored)
            stored.difference_update(members)
            return before - len(stored)

    def set_members(self, key: bytes) -> set[bytes]:
        """SMEMBERS (a copy). O(n)."""
        with self._lock:
            stored = self._set(key, create=False)
            return set() if stored is None else set(stored)

    def intersect_store(self, dest: bytes, board: bytes, members_set: bytes, ttl_ms: int) -> int:
        """dest = board ∩ set with the board's scores, expiring in ``ttl_ms``; its size.
        O(k log k) for k members of the set."""
        _positive_ttl(ttl_ms)
        with self._lock:
            self._housekeeping()
            keyspace = self._keyspace
            zset = keyspace.zset(board)
            members = keyspace.get(members_set)
            if members is not None and not isinstance(members, set | SortedSet):
                raise ResponseError(_WRONGTYPE)
            pairs: list[tuple[bytes, float]] = []
            if zset is not None and members is not None:
                for member in members:
                    score = zset.score(member)
                    if score is not None:
                        pairs.append((member, score + 0.0))  # type: ignore[arg-type]
            keyspace.delete(dest)
            if not pairs:
                return 0
            keyspace.store(dest, SortedSet(pairs, raw=True))
            keyspace.put_deadline(dest, keyspace.now_ms() + ttl_ms)
            return len(pairs)

    # -- member-encoded (lexicographic) boards ----------------------------------------

    def lex_replace(
        self,
        target: Target,
        index_key: bytes,
        member: bytes,
        encoded: bytes,
        operator: LexOperator,
        high_first: bool,
    ) -> LexOutcome:
        """Replace the member's entry (score 0) and its index field in one step. O(log n)."""
        if operator not in ("set", "best"):
            raise ValueError(f"a lexicographic replace takes 'set' or 'best', not {operator!r}")
        if target.ttl_ms is not None:
            _positive_ttl(target.ttl_ms)
        encoded = bytes(encoded)
        with self._lock:
            self._housekeeping()
            keyspace = self._keyspace
            index = ties_hash(keyspace, index_key, create=False)  # WRONGTYPE before writes
            zset = keyspace.zset(target.key)
            old = None if index is None else index.get(member)
            new = encoded
            if operator == "best" and old is not None:
                better = encoded > old if high_first else encoded < old
                new = encoded if better else old
            previous_rank = None
            if old is not None and zset is not None:
                found = zset.index(old, reverse=high_first)
                previous_rank = None if found is None else found + 1
            if zset is None:
                zset = keyspace.zset(target.key, create=True)
                assert zset is not None
            if new != old:
                if old is not None:
                    zset.remove(old)
                index = ties_hash(keyspace, index_key, create=True)
                assert index is not None
                index[member] = new
            if zset.score(new) is None:  # a new entry, or one whose index outlived it
                zset.add(new, 0.0)
            if target.ttl_ms is not None:
                deadline = keyspace.now_ms() + target.ttl_ms
                keyspace.put_deadline(target.key, deadline)
                if keyspace.get(index_key) is not None:
                    keyspace.put_deadline(index_key, deadline)
            rank = zset.index(new, reverse=high_first)
            assert rank is not None
            return LexOutcome(old, new, previous_rank, rank + 1, new != old)

    def lex_count(
        self,
        target: Target,
        low: bytes | None,
        high: bytes | None,
        low_exclusive: bool = False,
        high_exclusive: bool = False,
    ) -> int:
        """ZLEXCOUNT. O(log n)."""
        with self._lock:
            zset = self._zset(target.key)
            if zset is None:
                return 0
            return zset.count_by_lex(
                low, high, min_exclusive=low_exclusive, max_exclusive=high_exclusive
            )

    def lex_range(
        self,
        target: Target,
        low: bytes | None,
        high: bytes | None,
        low_exclusive: bool,
        high_exclusive: bool,
        offset: int,
        count: int,
        reverse: bool,
    ) -> list[bytes]:
        """ZRANGE BYLEX [REV] LIMIT. O(log n + offset + count)."""
        _not_negative(offset=offset, count=count)
        if count > MAX_POSITION:
            count = MAX_POSITION
        with self._lock:
            zset = self._zset(target.key)
            if zset is None or count == 0 or offset > MAX_POSITION:
                return []
            pairs = zset.range_by_lex(
                low,
                high,
                min_exclusive=low_exclusive,
                max_exclusive=high_exclusive,
                reverse=reverse,
                offset=offset,
                count=count,
            )
            return [member for member, _ in pairs]  # type: ignore[misc]

    def run(
        self,
        procedure: Procedure[T],
        keys: Sequence[bytes],
        args: Sequence[Arg],
        now_us: int | None = None,
    ) -> T:
        """A feature's step: its Python twin under the lock (see :mod:`.procedure`)."""
        with self._lock:
            self._housekeeping()
            keyspace = self._keyspace
            now = keyspace.now_us() if now_us is None else now_us
            return procedure.decode(procedure.local(keyspace, now, keys, args))

    def bind(self, operation: Operation[T]) -> Bound[T]:
        """The callable running ``operation``: its native implementation when the C engine
        has one for it, else its Python reference under the lock (see :mod:`.native`)."""
        factory = native_factory(operation.procedure.native)
        if factory is not None:
            native = factory(self._keyspace, self._lock, operation)
            if native is not None:
                return native
        procedure, encode, lock = operation.procedure, operation.encode, self._lock
        local, decode, keyspace, housekeeping = (
            procedure.local,
            procedure.decode,
            self._keyspace,
            self._housekeeping,
        )

        def reference(*args: Any) -> T:
            keys, arguments, now_us = encode(*args)
            with lock:
                housekeeping()
                now = keyspace.now_us() if now_us is None else now_us
                return decode(local(keyspace, now, keys, arguments))

        return reference

    def flushall(self) -> None:
        """FLUSHALL: delete every key of this backend's store, for every handle on it.
        O(keys)."""
        with self._lock:
            self._keyspace.flush()

    def close(self) -> None:
        """Nothing to release: the store's data stays, for every other handle on it (and
        for the next ``from_url`` of its URL). Idempotent."""


class AsyncMemoryBackend:
    """The awaitable twin: each method runs the synchronous one (there is no I/O to await)."""

    cross_slot = True

    def __init__(
        self,
        url: str = "memory://",
        clock: Callable[[], float] | None = None,
        *,
        sync: MemoryBackend | None = None,
    ) -> None:
        self.sync = MemoryBackend(url, clock) if sync is None else sync
        self.url = self.sync.url

    @classmethod
    def from_url(
        cls, url: str = "memory://", clock: Callable[[], float] | None = None
    ) -> AsyncMemoryBackend:
        """A handle on the process-wide store ``url`` names (see
        :meth:`MemoryBackend.from_url`): the same data as every sync handle on it."""
        return cls(sync=MemoryBackend.from_url(url, clock))

    @property
    def keyspace(self) -> Keyspace:
        """The keyspace of the synchronous backend underneath."""
        return self.sync.keyspace

    def now_ms(self) -> int:
        return self.sync.now_ms()

    async def submit(self, request: SubmitRequest) -> tuple[SubmitOutcome, ...]:
        return self.sync.submit(request)

    async def run(
        self,
        procedure: Procedure[T],
        keys: Sequence[bytes],
        args: Sequence[Arg],
        now_us: int | None = None,
    ) -> T:
        return self.sync.run(procedure, keys, args, now_us)

    def bind(self, operation: Operation[T]) -> AsyncBound[T]:
        """:meth:`MemoryBackend.bind`, awaitable (nothing to wait for: it runs at once). A
        native step that awaits (a blocking pop waiting for a push) comes back as it is."""
        bound = self.sync.bind(operation)
        if inspect.iscoroutinefunction(bound):
            return bound
        return awaitable(bound)

    async def submit_batch(
        self, requests: Sequence[SubmitRequest]
    ) -> list[tuple[SubmitOutcome, ...]]:
        return self.sync.submit_batch(requests)

    async def ranks(
        self, target: Target, members: Sequence[bytes], high_first: bool, style: str
    ) -> list[tuple[float, int] | None]:
        return self.sync.ranks(target, members, high_first, style)

    async def page(
        self, target: Target, start: int, stop: int, high_first: bool, style: str
    ) -> list[Row]:
        return self.sync.page(target, start, stop, high_first, style)

    async def page_after(
        self,
        target: Target,
        score: float,
        member: bytes,
        count: int,
        high_first: bool,
        style: str,
    ) -> list[Row]:
        return self.sync.page_after(target, score, member, count, high_first, style)

    async def around(
        self,
        target: Target,
        member: bytes,
        before: int,
        after: int,
        high_first: bool,
        style: str,
    ) -> tuple[int, list[Row]] | None:
        return self.sync.around(target, member, before, after, high_first, style)

    async def by_score(
        self,
        target: Target,
        low: float,
        high: float,
        offset: int,
        count: int,
        high_first: bool,
        style: str,
    ) -> list[Row]:
        return self.sync.by_score(target, low, high, offset, count, high_first, style)

    async def count(self, target: Target, low: float = -math.inf, high: float = math.inf) -> int:
        return self.sync.count(target, low, high)

    async def percentile(
        self, target: Target, member: bytes, high_first: bool
    ) -> tuple[float, int, int] | None:
        return self.sync.percentile(target, member, high_first)

    async def remove(self, targets: Sequence[Target], members: Sequence[bytes]) -> int:
        return self.sync.remove(targets, members)

    async def delete(self, keys: Sequence[bytes]) -> int:
        return self.sync.delete(keys)

    async def expire_at(self, keys: Sequence[bytes], deadline_ms: int) -> None:
        self.sync.expire_at(keys, deadline_ms)

    async def hash_set(self, key: bytes, fields: Mapping[bytes, bytes], ttl_ms: int | None) -> None:
        self.sync.hash_set(key, fields, ttl_ms)

    async def hash_get(self, key: bytes, fields: Sequence[bytes]) -> list[bytes | None]:
        return self.sync.hash_get(key, fields)

    async def hash_delete(self, key: bytes, fields: Sequence[bytes]) -> int:
        return self.sync.hash_delete(key, fields)

    async def set_add(self, key: bytes, members: Sequence[bytes]) -> int:
        return self.sync.set_add(key, members)

    async def set_remove(self, key: bytes, members: Sequence[bytes]) -> int:
        return self.sync.set_remove(key, members)

    async def set_members(self, key: bytes) -> set[bytes]:
        return self.sync.set_members(key)

    async def scores(self, target: Target, members: Sequence[bytes]) -> list[float | None]:
        return self.sync.scores(target, members)

    async def intersect_store(
        self, dest: bytes, board: bytes, members_set: bytes, ttl_ms: int
    ) -> int:
        return self.sync.intersect_store(dest, board, members_set, ttl_ms)

    async def range_all(
        self, key: bytes, high_first: bool, limit: int
    ) -> list[tuple[bytes, float]]:
        return self.sync.range_all(key, high_first, limit)

    async def lex_replace(
        self,
        target: Target,
        index_key: bytes,
        member: bytes,
        encoded: bytes,
        operator: LexOperator,
        high_first: bool,
    ) -> LexOutcome:
        return self.sync.lex_replace(target, index_key, member, encoded, operator, high_first)

    async def lex_count(
        self,
        target: Target,
        low: bytes | None,
        high: bytes | None,
        low_exclusive: bool = False,
        high_exclusive: bool = False,
    ) -> int:
        return self.sync.lex_count(target, low, high, low_exclusive, high_exclusive)

    async def lex_range(
        self,
        target: Target,
        low: bytes | None,
        high: bytes | None,
        low_exclusive: bool,
        high_exclusive: bool,
        offset: int,
        count: int,
        reverse: bool,
    ) -> list[bytes]:
        return self.sync.lex_range(
            target, low, high, low_exclusive, high_exclusive, offset, count, reverse
        )

    async def close(self) -> None:
        self.sync.close()
