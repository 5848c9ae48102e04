"""Queue conformance fixtures (the folder is "queues": a "queue" package here would shadow the
standard library module redis-py imports): every test runs on memory, redis and a redis cluster,
and each through both APIs, the blocking one and the asyncio one.

Backends are opened from URLs on the session's real servers (``redis_server`` /
``redis_cluster`` of tests/conftest.py); every node is flushed before each test. Nothing
is skipped: a server that cannot start fails the tests that need it.

The asyncio API is driven from the same (synchronous) tests: :class:`Api` hands out the
asyncio queue behind a :class:`Blocking` proxy whose methods await the real ones on an
event loop running in a thread of its own, so threads may call it concurrently and a
blocked pop really waits in the loop.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import pytest
import redis

from ranked.backends.base import AsyncBackend, Backend
from ranked.backends.factory import open_async_backend, open_backend
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.queue import AsyncQueue, AsyncShardedQueue, Queue, ShardedQueue
from servers import flushed_store

BACKENDS = ["memory", "redis", "cluster"]
APIS = ["sync", "async"]

T0 = 1_700_000_000_000_000
"""A fixed instant (Unix us) for tests that pass explicit times."""

SECOND = 1_000_000


@dataclass
class Env:
    """One backend under test, and raw views of the store behind it."""

    kind: str
    url: str
    backend: Backend
    clients: list[redis.Redis] = field(default_factory=list)

    def open_async(self) -> AsyncBackend:
        """An async backend on the same data (memory: over the same engine)."""
        if isinstance(self.backend, MemoryBackend):
            return AsyncMemoryBackend(sync=self.backend)
        return open_async_backend(self.url)

    def open_sync(self) -> Backend:
        """Another connection to the same data (memory: the same backend)."""
        return self.backend if self.kind == "memory" else open_backend(self.url)

    def keys(self) -> set[bytes]:
        """Every key that exists, on every node."""
        if isinstance(self.backend, MemoryBackend):
            with self.backend.lock:
                return set(self.backend.keyspace.iter_keys())
        found: set[bytes] = set()
        for client in self.clients:
            found.update(key for key in client.keys("*") if isinstance(key, bytes))
        return found

    def run_async(self, scenario: Callable[[AsyncBackend], Awaitable[Any]]) -> Any:
        """Run ``scenario(async_backend)`` in a fresh event loop, then close the backend."""

        async def main() -> Any:
            backend = self.open_async()
            try:
                return await scenario(backend)
            finally:
                await backend.close()

        return asyncio.run(main())


@pytest.fixture(params=BACKENDS)
def env(request: pytest.FixtureRequest) -> Iterator[Env]:
    """A flushed backend of each kind."""
    kind: str = request.param
    url, clients = flushed_store(kind, request)
    environment = Env(kind, url, open_backend(url), clients)
    try:
        yield environment
    finally:
        environment.backend.close()
        for client in clients:
            client.close()


@pytest.fixture
def backend(env: Env) -> Backend:
    return env.backend


class Loop:
    """An event loop running in a thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Await ``coroutine`` on the loop; block the calling thread until it is done."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class Blocking:
    """An asyncio object whose coroutine methods are called as blocking ones."""

    def __init__(self, target: object, loop: Loop) -> None:
        self._target = target
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not inspect.iscoroutinefunction(value):
            return value
        run = self._loop.run
        return lambda *args, **kwargs: run(value(*args, **kwargs))


@dataclass
class Api:
    """One API (``kind``: "sync" or "async") on one backend: the queues a test uses."""

    kind: str
    env: Env
    backend: Backend | AsyncBackend
    loop: Loop | None = None

    def Queue(self, name: str, **options: Any) -> Queue[Any]:
        """``Queue(backend, name, **options)``, or the same ``AsyncQueue`` made blocking."""
        if self.loop is None:
            return Queue(cast(Backend, self.backend), name, **options)
        queue = AsyncQueue(cast(AsyncBackend, self.backend), name, **options)
        return cast(Queue[Any], Blocking(queue, self.loop))

    def ShardedQueue(self, name: str, shards: int, **options: Any) -> ShardedQueue[Any]:
        """``ShardedQueue(backend, name, shards, **options)``, or its asyncio twin."""
        if self.loop is None:
            return ShardedQueue(cast(Backend, self.backend), name, shards, **options)
        queue = AsyncShardedQueue(cast(AsyncBackend, self.backend), name, shards, **options)
        return cast(ShardedQueue[Any], Blocking(queue, self.loop))

    def connect(self) -> Api:
        """The same API on another connection to the same data (close it after)."""
        if self.loop is None:
            return Api(self.kind, self.env, self.env.open_sync())
        return Api(self.kind, self.env, self.loop.run(_opened(self.env)), self.loop)

    def close(self) -> None:
        """Close this API's connection (the fixture's own is closed by the fixtures)."""
        if self.loop is not None:
            self.loop.run(cast(AsyncBackend, self.backend).close())
        elif self.backend is not self.env.backend:
            cast(Backend, self.backend).close()


async def _opened(env: Env) -> AsyncBackend:
    return env.open_async()


@pytest.fixture(params=APIS)
def api(request: pytest.FixtureRequest, env: Env) -> Iterator[Api]:
    """Each API on each backend: the blocking one, and the asyncio one (see the module)."""
    if request.param == "sync":
        yield Api("sync", env, env.backend)
        return
    loop = Loop()
    chosen = Api("async", env, loop.run(_opened(env)), loop)
    try:
        yield chosen
    finally:
        chosen.close()
        loop.close()
