"""Leaderboard conformance fixtures: every test runs on memory, redis and a redis cluster.

Backends are built from URLs with :func:`ranked.backends.factory.open_backend`, on the
session's real servers (``redis_server`` / ``redis_cluster`` from tests/conftest.py);
every node is flushed before each test. Nothing is skipped: a missing server fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import pytest
import redis

from ranked.backends.base import AsyncBackend, Backend
from ranked.backends.memory import MemoryBackend
from ranked.engine.zset import SortedSet
from servers import flushed_store

BACKENDS = ["memory", "redis", "cluster"]


def open_sync(url: str) -> Backend:
    from ranked.backends.factory import open_backend

    return open_backend(url)


def open_async(url: str) -> AsyncBackend:
    from ranked.backends.factory import open_async_backend

    return open_async_backend(url)


@dataclass
class Env:
    """One backend under test, with raw views of its keys for assertions."""

    kind: str
    url: str
    backend: Backend
    pttl: Callable[[bytes], int | None]
    """Remaining TTL of a key in ms, None without expiry, -2 if it does not exist."""
    all_keys: Callable[[], set[bytes]]
    """Every key that exists (all nodes)."""
    snapshot: Callable[[], dict[bytes, tuple[Any, ...]]]
    """Every key with its whole content and absolute deadline: equal snapshots taken
    before and after a call prove it changed nothing (a refused call must not)."""

    def open_async(self) -> AsyncBackend:
        """An async backend on the same data (memory: over the same engine)."""
        if self.kind == "memory":
            from ranked.backends.memory import AsyncMemoryBackend

            assert isinstance(self.backend, MemoryBackend)
            return AsyncMemoryBackend(sync=self.backend)
        return open_async(self.url)


def _redis_pttl(clients: list[redis.Redis]) -> Callable[[bytes], int | None]:
    def pttl(key: bytes) -> int | None:
        for client in clients:
            try:
                value = int(client.pttl(key))
            except redis.ResponseError:  # MOVED: another node holds it
                continue
            if value != -2:
                return None if value == -1 else value
        return -2

    return pttl


def _redis_keys(clients: list[redis.Redis]) -> Callable[[], set[bytes]]:
    def keys() -> set[bytes]:
        found: set[bytes] = set()
        for client in clients:
            found.update(k if isinstance(k, bytes) else k.encode() for k in client.keys("*"))
        return found

    return keys


def _redis_snapshot(clients: list[redis.Redis]) -> Callable[[], dict[bytes, tuple[Any, ...]]]:
    def snapshot() -> dict[bytes, tuple[Any, ...]]:
        found: dict[bytes, tuple[Any, ...]] = {}
        for client in clients:
            for key in client.keys("*"):
                key = key if isinstance(key, bytes) else key.encode()
                # DUMP: the value as Redis serialises it; PEXPIRETIME: the absolute deadline.
                found[key] = (client.dump(key), cast(Any, client).pexpiretime(key))
        return found

    return snapshot


def _memory_content(value: object) -> object:
    if isinstance(value, SortedSet):
        return ("zset", tuple(value.range_by_index(0, -1)))
    if isinstance(value, set):
        return ("set", frozenset(value))
    if isinstance(value, dict):
        return ("hash", tuple(sorted(value.items())))
    return ("string", value)


def _memory_env(backend: MemoryBackend) -> Env:
    keyspace = backend.keyspace

    def snapshot() -> dict[bytes, tuple[Any, ...]]:
        with backend.lock:
            return {
                key: (_memory_content(keyspace.get(key)), keyspace.deadline(key))
                for key in keyspace.execute("KEYS", "*")  # type: ignore[union-attr]
                if isinstance(key, bytes)
            }

    def pttl(key: bytes) -> int | None:
        with backend.lock:
            if keyspace.get(key) is None:
                return -2
            deadline = keyspace.deadline(key)
            return None if deadline is None else deadline - keyspace.now_ms()

    def keys() -> set[bytes]:
        with backend.lock:
            return set(keyspace.execute("KEYS", "*"))  # type: ignore[arg-type]

    return Env("memory", backend.url, backend, pttl, keys, snapshot)


@pytest.fixture(params=BACKENDS)
def env(request: pytest.FixtureRequest) -> Iterator[Env]:
    """A flushed backend of each kind."""
    kind: str = request.param
    if kind == "memory":
        backend = open_sync(flushed_store(kind, request)[0])  # the default store, flushed
        assert isinstance(backend, MemoryBackend)
        environment = _memory_env(backend)
    else:
        url, clients = flushed_store(kind, request)
        environment = Env(
            kind,
            url,
            open_sync(url),
            _redis_pttl(clients),
            _redis_keys(clients),
            _redis_snapshot(clients),
        )
    try:
        yield environment
    finally:
        environment.backend.close()
        if kind != "memory":
            for client in clients:
                client.close()


class FakeClock:
    """A settable clock in Unix seconds for the memory backend."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def assert_refused(
    env: Env, error: type[Exception], call: Callable[[], object], match: str | None = None
) -> None:
    """``call()`` raises ``error`` and leaves every key of the store exactly as it was."""
    before = env.snapshot()
    with pytest.raises(error, match=match):
        call()
    assert env.snapshot() == before
