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

Operations: :meth:`MemoryBackend.bind` hands a feature's step back as a callable that runs
its native implementation (registered in :mod:`.native`, on the C engine) or its Python
reference on the keyspace under the lock, so every step is atomic. Writes also count
towards the active expiry: every few writes a few expired keys are deleted.
"""

from __future__ import annotations

import inspect
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ..engine.keyspace import Keyspace
from ..engine.zset import IMPLEMENTATION
from .native import HOUSEKEEPING_DELETES, HOUSEKEEPING_EVERY, awaitable, locked, native_factory
from .procedure import AsyncBound, Bindable, Bound

T = TypeVar("T")

__all__ = ["AsyncMemoryBackend", "MemoryBackend", "store_name"]


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


_LOCKED = """\
def make(reference, keyspace, acquire, release, writes, expire, deletes):
    {kind}def locked({parameters}):
        acquire()
        try:
            {share}
            return reference(keyspace, {parameters})
        finally:
            release()
    return locked
"""
"""The callable :meth:`MemoryBackend.bind` hands back for a Python reference. Made from
this text once per shape (see :func:`_locker`) rather than written with ``*args``: a call
forwarded with ``*args`` is one the interpreter does not inline, a call of fixed arity is.
``acquire`` and ``release`` rather than ``with lock``: the context protocol costs more.
On the C engine the native ``Locked`` (:func:`.native.locked`) takes this one's place."""

_LOCKERS: dict[tuple[int | None, bool, bool], Callable[..., Callable[..., Any]]] = {}


def _arity(reference: Callable[..., Any]) -> int | None:
    """How many call arguments ``reference(keyspace, *arguments)`` takes, when it is a
    plain function taking exactly that many positionally (no defaults, no ``*``); else
    None."""
    if not inspect.isfunction(reference):
        return None
    code = reference.__code__
    if (
        reference.__defaults__
        or code.co_kwonlyargcount
        or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        or code.co_argcount < 1
    ):
        return None
    arity: int = code.co_argcount - 1
    return arity


def _locker(
    arity: int | None, asynchronous: bool, writes: bool
) -> Callable[..., Callable[..., Any]]:
    """The maker of the locked callable for references of ``arity`` (None: any), cached
    per shape."""
    shape = (arity, asynchronous, writes)
    make = _LOCKERS.get(shape)
    if make is None:
        parameters = "*args" if arity is None else ", ".join(f"a{n}" for n in range(arity))
        text = _LOCKED.format(
            kind="async " if asynchronous else "",
            parameters=parameters,
            share="if next(writes): expire(deletes)" if writes else "pass",
        )
        namespace: dict[str, Any] = {}
        exec(text, namespace)  # the text above, filled in: no outside input
        make = _LOCKERS[shape] = namespace["make"]
    return make


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
        # this handle's writes, for the active expiry: every HOUSEKEEPING_EVERY-th is True
        self._writes = itertools.cycle((False,) * (HOUSEKEEPING_EVERY - 1) + (True,))

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

    def accelerate(self, operation: Bindable[T]) -> Bound[T] | None:
        """The native implementation of ``operation`` (registered in :mod:`.native`
        under its ``native`` name, on the C engine), or None. O(1)."""
        factory = native_factory(operation.native)
        if factory is None:
            return None
        native: Bound[T] | None = factory(self._keyspace, self._lock, operation)
        return native

    def accelerate_now(self, operation: Bindable[T]) -> Bound[T] | None:
        """:meth:`accelerate`: every call here answers at once."""
        return self.accelerate(operation)

    def bind(self, operation: Bindable[T]) -> Bound[T]:
        """The callable running ``operation``: its native implementation when the C engine
        has one for it, else its Python reference on the keyspace under the lock (see
        :mod:`.native`). O(1)."""
        native = self.accelerate(operation)
        if native is not None:
            return native
        fast = locked(operation.reference, self._keyspace, self._lock, operation.writes)
        if fast is not None:  # the C engine's Locked: the lock and the call in C
            return fast
        return self._locked(operation, asynchronous=False)

    def _locked(self, operation: Bindable[T], *, asynchronous: bool) -> Callable[..., Any]:
        """``operation``'s reference on the keyspace under the lock (a write also takes
        this handle's share of the active expiry), as a function or, ``asynchronous``, a
        coroutine function. O(1)."""
        reference = operation.reference
        make = _locker(_arity(reference), asynchronous, operation.writes)
        lock, keyspace = self._lock, self._keyspace
        return make(
            reference,
            keyspace,
            lock.acquire,
            lock.release,
            self._writes,
            keyspace.expire_pending,
            HOUSEKEEPING_DELETES,
        )

    def flushall(self) -> None:
        """FLUSHALL: delete every key of this backend's store, for every handle on it.
        O(keys)."""
        with self._lock:
            self._keyspace.flush()

    def close(self) -> None:
        """Nothing to release: the store's data stays, for every other handle on it (and
        for the next ``from_url`` of its URL). Idempotent."""


class AsyncMemoryBackend:
    """The awaitable twin: each step runs the synchronous one at once (there is no I/O to
    await) and hands back an awaitable of its result."""

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

    def accelerate(self, operation: Bindable[T]) -> AsyncBound[T] | None:
        """:meth:`MemoryBackend.accelerate`, awaitable."""
        native = self.sync.accelerate(operation)
        return None if native is None else awaitable(native)

    def accelerate_now(self, operation: Bindable[T]) -> Bound[T] | None:
        """:meth:`MemoryBackend.accelerate`, as a plain call (it answers at once): for a
        caller that must apply a step with no await, on the loop (the journal's lane)."""
        return self.sync.accelerate(operation)

    def bind(self, operation: Bindable[T]) -> AsyncBound[T]:
        """:meth:`MemoryBackend.bind`, awaitable: the step runs at once, and its result comes
        back in a ready awaitable; a step that must wait (a blocking pop with nothing
        ready) answers with the coroutine that waits, handed over as it is. Without the C
        engine the reference is one coroutine (not a second around a function)."""
        if IMPLEMENTATION != "c":
            reference: AsyncBound[T] = self.sync._locked(operation, asynchronous=True)
            return reference
        return awaitable(self.sync.bind(operation))

    async def close(self) -> None:
        self.sync.close()
