"""Fixtures of the backend conformance suite: every test runs on memory, redis and cluster.

``backend`` is a fresh :class:`~ranked.backends.base.Backend` on an empty store; ``probe``
reads what the contract cannot (key TTLs, key existence) straight from the store: the
keyspace for memory, a plain redis-py client for the servers. ``async_backend`` runs a
coroutine against the async twin of the same backend. The Redis backends are built with
``from_url`` on the session servers of ``tests/conftest.py``; data is flushed on every node
before each test. Nothing is skipped: a backend that cannot be built fails its tests.

Helpers below build keys with :class:`ranked.core.keys.BoardKeys`, so on the cluster every
key of one board carries the board's hash tag.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import pytest
import redis

from ranked.backends.base import AsyncBackend, Backend
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle
from ranked.leaderboard._requests import (
    Composite,
    Operator,
    Row,
    SubmitOutcome,
    SubmitRequest,
    Target,
)
from ranked.leaderboard._steps import STEPS, BoundSteps
from servers import RedisCluster, RedisServer

BACKENDS = ("memory", "redis", "cluster")
Kind = Literal["memory", "redis", "cluster"]
STYLES = (RankStyle.UNIQUE, RankStyle.COMPETITION, RankStyle.DENSE)

NO_TTL = -1
"""What :meth:`Probe.pttl` reports for a key without expiry (as Redis PTTL)."""
MISSING = -2
"""What :meth:`Probe.pttl` reports for a key that does not exist (as Redis PTTL)."""


# -- keys and requests -------------------------------------------------------------


def target(
    board: str = "arena", window: str = "all", ttl_ms: int | None = None, *, ties: bool = False
) -> Target:
    """The Target of one window of ``board`` (all keys share the board's hash tag);
    ``ties``: with the window's ties hash."""
    keys = BoardKeys(board)
    return Target(
        keys.window(window),
        keys.dense(window),
        keys.dense_counts(window),
        ttl_ms,
        keys.ties(window) if ties else None,
    )


def request(
    member: bytes,
    value: float,
    operator: Operator = "set",
    *,
    targets: Sequence[Target] | None = None,
    high_first: bool = True,
    style: RankStyle = RankStyle.COMPETITION,
    now_ms: int = 0,
    composite: Composite | None = None,
    keep: int | None = None,
    tie: bytes | None = None,
) -> SubmitRequest:
    """A SubmitRequest with the suite's defaults (one all-time target of ``arena``)."""
    return SubmitRequest(
        member=member,
        value=value,
        operator=operator,
        high_first=high_first,
        targets=tuple(targets) if targets is not None else (target(),),
        style=style,
        now_ms=now_ms,
        composite=composite,
        keep=keep,
        tie=tie,
    )


def submit(
    backend: Steps, member: bytes, value: float, operator: Operator = "set", **kw: Any
) -> SubmitOutcome:
    """Submit to exactly one target and return its outcome."""
    outcomes: tuple[SubmitOutcome, ...] = backend.submit(request(member, value, operator, **kw))
    assert len(outcomes) == 1
    return outcomes[0]


def fill(
    backend: Steps,
    scores: dict[bytes, float],
    board: Target | None = None,
    high_first: bool = True,
) -> Target:
    """Put every (member, score) on ``board`` with ``set``; returns the target."""
    board = board if board is not None else target()
    backend.submit_batch(
        [
            request(member, score, "set", targets=(board,), high_first=high_first)
            for member, score in scores.items()
        ]
    )
    return board


def same_rows(actual: Sequence[Row], expected: Sequence[tuple[bytes, float, int]]) -> None:
    """Rows equal, with scores compared as floats (and -0.0 never appearing)."""
    assert [tuple(row) for row in actual] == [tuple(row) for row in expected]
    for _, score, _ in actual:
        assert isinstance(score, float)
        assert not (score == 0 and math.copysign(1.0, score) < 0), "a -0.0 score came back"


# -- probing the store ---------------------------------------------------------------


@dataclass
class Probe:
    """Reads TTLs and key existence from the store behind a backend."""

    kind: Kind
    memory: MemoryBackend | None = None
    client: Any = None  # redis.Redis or redis.RedisCluster

    def pttl(self, key: bytes) -> int:
        """Milliseconds left, ``NO_TTL`` or ``MISSING`` (as Redis PTTL)."""
        if self.memory is not None:
            keyspace = self.memory.keyspace
            with self.memory.lock:
                if keyspace.get(key) is None:
                    return MISSING
                deadline = keyspace.deadline(key)
                return NO_TTL if deadline is None else deadline - keyspace.now_ms()
        return int(self.client.pttl(key))

    def exists(self, key: bytes) -> bool:
        return self.pttl(key) != MISSING

    @property
    def has_companions(self) -> bool:
        """True when dense-rank companion keys exist in the store (Redis backends)."""
        return self.kind != "memory"


@dataclass
class Case:
    """One backend under test, with the probe into its store."""

    kind: Kind
    backend: Backend
    probe: Probe
    make_async: Callable[[], Any] = field(repr=False, default=lambda: None)


def _flush_redis(server: RedisServer) -> redis.Redis:
    client = server.client()
    client.flushall()
    return client


def _flush_cluster(cluster: RedisCluster) -> redis.RedisCluster:
    for index in range(len(cluster.ports)):
        node = cluster.node_client(index)
        try:
            node.flushall()
        finally:
            node.close()
    return cluster.client()


def cluster_url(cluster: RedisCluster) -> str:
    """``redis+cluster://127.0.0.1:P1,127.0.0.1:P2,...`` for the session cluster."""
    return cluster.url


def _build(kind: Kind, fixtures: pytest.FixtureRequest) -> Iterator[Case]:
    if kind == "memory":
        memory = MemoryBackend()
        yield Case(
            kind,
            memory,
            Probe(kind, memory=memory),
            lambda: AsyncMemoryBackend(sync=memory),
        )
        memory.close()
        return
    if kind == "redis":
        from ranked.backends.redis import AsyncRedisBackend, RedisBackend

        server = cast(RedisServer, fixtures.getfixturevalue("redis_server"))
        client: Any = _flush_redis(server)
        url = server.url
        backend: Backend = RedisBackend.from_url(url)
        make_async: Callable[[], Any] = lambda: AsyncRedisBackend.from_url(url)  # noqa: E731
    else:
        from ranked.backends.cluster import AsyncClusterBackend, ClusterBackend

        cluster = cast(RedisCluster, fixtures.getfixturevalue("redis_cluster"))
        client = _flush_cluster(cluster)
        url = cluster_url(cluster)
        backend = ClusterBackend.from_url(url)
        make_async = lambda: AsyncClusterBackend.from_url(url)  # noqa: E731
    try:
        yield Case(kind, backend, Probe(kind, client=client), make_async)
    finally:
        backend.close()
        client.close()


@pytest.fixture(params=BACKENDS)
def case(request: pytest.FixtureRequest) -> Iterator[Case]:
    """One backend (memory, redis, cluster) on an empty store, with its probe."""
    yield from _build(cast(Kind, request.param), request)


class Steps(BoundSteps):
    """A backend with the board's steps bound to it by name (``steps.page(...)``), as a
    board runs them, and every attribute of the backend itself (``steps.keyspace``)."""

    def __getattr__(self, name: str) -> Any:
        if name not in STEPS:
            return getattr(self.backend, name)
        bound = super().__getattr__(name)
        if name not in _ON_KEYS:
            return bound

        def on_key(first: Any, *args: Any) -> Any:
            return bound(first.key if isinstance(first, Target) else first, *args)

        setattr(self, name, on_key)
        return on_key


_ON_KEYS = frozenset(("count", "scores", "lex_count", "lex_range"))
"""Generic steps on one sorted set: the tests may name it by its :class:`Target`."""


@pytest.fixture
def backend(case: Case) -> Any:
    """The backend under test, on an empty store, with the board's steps bound by name."""
    return Steps(case.backend)


@pytest.fixture
def probe(case: Case) -> Probe:
    """Reads TTLs and existence of keys from the store behind ``backend``."""
    return case.probe


AsyncScenario = Callable[["Steps"], Awaitable[None]]


@dataclass
class AsyncRunner:
    """Runs a scenario on a fresh async backend inside one event loop, then closes it."""

    kind: Kind
    make: Callable[[], Any]

    def run(self, scenario: AsyncScenario) -> None:
        async def main() -> None:
            built = self.make()
            backend = cast(AsyncBackend, await built if inspect.isawaitable(built) else built)
            try:
                await scenario(Steps(backend))
            finally:
                await backend.close()

        asyncio.run(main())


@pytest.fixture
def async_backend(case: Case) -> AsyncRunner:
    """Runs ``async def scenario(backend)`` on the async twin of ``backend`` (same store)."""
    return AsyncRunner(case.kind, case.make_async)
