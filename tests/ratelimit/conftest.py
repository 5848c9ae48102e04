"""Rate-limiter fixtures: every conformance test runs on memory, redis and a redis cluster,
through both APIs.

``env`` is a flushed backend of each kind (on the session servers of tests/conftest.py;
nothing is skipped), with a raw view of its store: key TTLs and the keys that exist.
``api`` makes limiters of the blocking API (``RateLimiter``) or the asyncio one
(``AsyncRateLimiter``, each call driven to completion), so one test body holds both to the
same assertions; ``new_limiter`` is ``api`` on ``env``. Time-dependent tests pass explicit
instants through a :class:`FakeClock`, so memory and the servers decide at exactly the
same microsecond.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

import pytest
import redis

from ranked.backends.base import AsyncBackend, Backend
from ranked.backends.factory import open_async_backend, open_backend
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.ratelimit import AsyncRateLimiter, Clock, Decision, Policy, RateLimiter
from servers import flushed_store

BACKENDS = ["memory", "redis", "cluster"]
APIS = ["sync", "async"]
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


T = TypeVar("T")


class Limiter(Protocol):
    """What the tests drive: a ``RateLimiter``, or an ``AsyncRateLimiter`` behind
    :class:`Driven`."""

    @property
    def policy(self) -> Policy: ...

    def hit(self, identity: str | bytes, cost: int = 1) -> Decision: ...

    def peek(self, identity: str | bytes, cost: int = 1) -> Decision: ...

    def reset(self, identity: str | bytes) -> None: ...


class Driven:
    """An ``AsyncRateLimiter`` whose every call is awaited to completion on ``loop``."""

    def __init__(self, limiter: AsyncRateLimiter, loop: asyncio.AbstractEventLoop) -> None:
        self.limiter = limiter
        self._loop = loop

    def _run(self, awaitable: Awaitable[T]) -> T:
        async def wait() -> T:
            return await awaitable

        return self._loop.run_until_complete(wait())

    @property
    def policy(self) -> Policy:
        return self.limiter.policy

    def hit(self, identity: str | bytes, cost: int = 1) -> Decision:
        return self._run(self.limiter.hit(identity, cost))

    def peek(self, identity: str | bytes, cost: int = 1) -> Decision:
        return self._run(self.limiter.peek(identity, cost))

    def reset(self, identity: str | bytes) -> None:
        self._run(self.limiter.reset(identity))


class Api:
    """Limiters of one API on any backend: ``sync``, or ``async`` on the asyncio twin of
    the backend (memory: over the same engine; a server: a second client of it)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.loop = asyncio.new_event_loop()
        self._twins: list[tuple[Backend, AsyncBackend]] = []

    def limiter(
        self, backend: Backend, policy: Policy, prefix: str = "rl", clock: Clock | None = None
    ) -> Limiter:
        if self.kind == "sync":
            return RateLimiter(backend, policy, prefix, clock)
        return Driven(AsyncRateLimiter(self._twin(backend), policy, prefix, clock), self.loop)

    def _twin(self, backend: Backend) -> AsyncBackend:
        for sync, twin in self._twins:
            if sync is backend:
                return twin
        if isinstance(backend, MemoryBackend):
            twin = AsyncMemoryBackend(sync=backend)
        else:
            twin = open_async_backend(backend.url)
        self._twins.append((backend, twin))
        return twin

    def close(self) -> None:
        for _, twin in self._twins:
            self.loop.run_until_complete(twin.close())
        self.loop.close()


@pytest.fixture(params=APIS)
def api(request: pytest.FixtureRequest) -> Iterator[Api]:
    """Each API in turn."""
    made = Api(request.param)
    try:
        yield made
    finally:
        made.close()


NewLimiter = Callable[..., Limiter]
"""``new_limiter(policy, prefix="rl", clock=None)``: a limiter of ``api`` on ``env``."""


@pytest.fixture
def new_limiter(env: Env, api: Api) -> NewLimiter:
    """Limiters of each API on each backend."""

    def make(policy: Policy, prefix: str = "rl", clock: Clock | None = None) -> Limiter:
        return api.limiter(env.backend, policy, prefix, clock)

    return make
