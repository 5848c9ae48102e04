"""Queue conformance fixtures (the folder is "queues": a "queue" package here would shadow the
standard library module redis-py imports): every test runs on memory, redis and a redis cluster.

Backends are opened from URLs on the session's real servers (``redis_server`` /
``redis_cluster`` of tests/conftest.py); every node is flushed before each test. Nothing
is skipped: a server that cannot start fails the tests that need it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis

from ranked.backends.base import AsyncBackend, Backend
from ranked.backends.factory import open_async_backend, open_backend
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from servers import flushed_store

BACKENDS = ["memory", "redis", "cluster"]

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
