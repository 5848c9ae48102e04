"""Rate-limiter fixtures: every conformance test runs on memory, redis and a redis cluster.

``env`` is a flushed backend of each kind (on the session servers of tests/conftest.py;
nothing is skipped), with a raw view of its store: key TTLs and the keys that exist.
Time-dependent tests pass explicit instants through a :class:`FakeClock`, so memory and
the servers decide at exactly the same microsecond.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import redis

from ranked.backends.base import AsyncBackend, Backend
from ranked.backends.factory import open_async_backend, open_backend
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from servers import flushed_store

BACKENDS = ["memory", "redis", "cluster"]
T0 = 1_700_000_000.0
"""A fake instant (Unix seconds) the tests start from."""


class FakeClock:
    """A settable clock in Unix seconds, for a limiter's ``clock=``."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Env:
    """One backend under test, with raw views of its store."""

    kind: str
    url: str
    backend: Backend
    pttl: Callable[[bytes], int]
    """Milliseconds a key has left, -1 without expiry, -2 when it does not exist."""
    keys: Callable[[], set[bytes]]
    """Every live key (all nodes)."""
    clients: list[redis.Redis]

    def open_async(self) -> AsyncBackend:
        """An async backend on the same data (memory: over the same engine)."""
        if isinstance(self.backend, MemoryBackend):
            return AsyncMemoryBackend(sync=self.backend)
        return open_async_backend(self.url)


def _memory_env(backend: MemoryBackend) -> Env:
    keyspace = backend.keyspace

    def pttl(key: bytes) -> int:
        with backend.lock:
            if keyspace.get(key) is None:
                return -2
            deadline = keyspace.deadline(key)
            return -1 if deadline is None else deadline - keyspace.now_ms()

    def keys() -> set[bytes]:
        with backend.lock:
            return set(keyspace.iter_keys())

    return Env("memory", backend.url, backend, pttl, keys, [])


def _server_env(kind: str, url: str, clients: list[redis.Redis]) -> Env:
    def pttl(key: bytes) -> int:
        for client in clients:
            try:
                value = int(client.pttl(key))
            except redis.ResponseError:  # MOVED: another node holds it
                continue
            if value != -2:
                return value
        return -2

    def keys() -> set[bytes]:
        found: set[bytes] = set()
        for client in clients:
            found.update(k if isinstance(k, bytes) else k.encode() for k in client.keys("*"))
        return found

    return Env(kind, url, open_backend(url), pttl, keys, clients)


def build_env(kind: str, request: pytest.FixtureRequest) -> Env:
    """A flushed backend of ``kind`` (its redis clients must be closed by the caller)."""
    if kind == "memory":
        backend = open_backend(flushed_store(kind, request)[0])  # the shared store, flushed
        assert isinstance(backend, MemoryBackend)
        return _memory_env(backend)
    url, clients = flushed_store(kind, request)
    return _server_env(kind, url, clients)


@pytest.fixture(params=BACKENDS)
def env(request: pytest.FixtureRequest) -> Iterator[Env]:
    """A flushed backend of each kind."""
    environment = build_env(request.param, request)
    try:
        yield environment
    finally:
        environment.backend.close()
        for client in environment.clients:
            client.close()


@pytest.fixture
def clock() -> FakeClock:
    """A fake clock at :data:`T0`."""
    return FakeClock()
