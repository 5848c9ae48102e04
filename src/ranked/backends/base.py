"""The backend contract: what features are written against.

A backend stores keys (sorted sets, hashes, sets, a feature's own values) and runs a
feature's steps atomically. It has no operation of its own for any feature: a feature
describes each step once (:mod:`ranked.backends.procedure`: a :class:`~.procedure.Step`
or an :class:`~.procedure.Operation`) and calls what :meth:`Backend.bind` hands back for
it. Steps on keys of any kind (DEL, HMGET, SADD, ZCOUNT, ...) are in :mod:`.generic`.

Implementations (every one gives identical answers; the conformance suites run on all):

- ``memory://`` (:mod:`ranked.backends.memory`): the in-process engine. A step runs its
  native implementation or its Python reference on the keyspace, under one lock.
- ``redis://``, ``rediss://``, ``unix://`` (:mod:`ranked.backends.redis`): a step is ONE
  Lua script (run by EVALSHA, reloaded on NOSCRIPT) or one command: atomic and one round
  trip.
- ``redis+cluster://`` (:mod:`ranked.backends.cluster`): as Redis. Every key of one step
  lies in one hash slot (a board's keys share a ``{hash tag}``, see
  :class:`ranked.core.keys.BoardKeys`); a step whose keys span two slots raises
  ``CrossSlotError`` before anything is sent.

Time: ``now_ms()`` is the backend's clock in Unix milliseconds: the local clock for memory
(injectable for tests), the Redis server's clock (``TIME``, offset measured on connect and
refreshed) for Redis. Features stamp requests with it so one operation uses one instant.

Errors: a server that cannot be reached raises ``BackendUnavailableError``; a key of
another type raises ``ResponseError`` (WRONGTYPE); a step's own checks raise the same
typed errors on every backend. On error nothing changes.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from .procedure import AsyncBound, Bindable, Bound

__all__ = ["AsyncBackend", "Backend"]

T = TypeVar("T")


class Backend(Protocol):
    """Synchronous backend."""

    url: str
    cross_slot: bool
    """True when one step may touch keys of different hash slots (memory, single Redis);
    False on Redis Cluster."""

    def now_ms(self) -> int:
        """The backend's clock, Unix ms (Redis: TIME, offset cached; no round trip)."""
        ...

    def bind(self, operation: Bindable[T]) -> Bound[T]:
        """The seam: the callable that runs a feature's step (see
        :mod:`~ranked.backends.procedure`), bound once per board, limiter or queue: the
        native implementation or the Python reference under the lock on memory, the Lua
        script or command on Redis and Redis Cluster."""
        ...

    def accelerate(self, operation: Bindable[T]) -> Bound[T] | None:
        """The backend's native implementation of ``operation``, or None when it has none
        (Redis never; memory on the C engine for the steps registered in
        :mod:`.native`). A feature asks for it only for a shortcut that has a general
        path on every backend (the plain board's one-call submit); every step also goes
        through :meth:`bind`, which returns the same native callable when there is one."""
        ...

    def accelerate_now(self, operation: Bindable[T]) -> Bound[T] | None:
        """:meth:`accelerate`'s native implementation as a plain call that answers at once
        (memory; None on Redis, where every step is a round trip)."""
        ...

    def close(self) -> None:
        """Release connections. Idempotent."""
        ...


class AsyncBackend(Protocol):
    """The asynchronous twin of :class:`Backend`: the same steps, awaited."""

    url: str
    cross_slot: bool

    def now_ms(self) -> int: ...

    def bind(self, operation: Bindable[T]) -> AsyncBound[T]: ...

    def accelerate(self, operation: Bindable[T]) -> AsyncBound[T] | None: ...

    def accelerate_now(self, operation: Bindable[T]) -> Bound[T] | None:
        """The native implementation as a plain call, run on the loop with no await (see
        :meth:`Backend.accelerate_now`); None when it has none."""
        ...

    async def close(self) -> None: ...
