"""Session fixtures: a real redis-server, a real 3-master Redis Cluster and a real PostgreSQL
server on loopback ports.

Both start lazily (only when a test asks for them), once per session, and are stopped at the
end of the session whatever the outcome. A missing redis-server or redis-cli fails the tests
that need them with a message saying what to install; nothing is ever skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar

import pytest

from servers import PostgresServer, RedisCluster, RedisServer, ServerError


class _Server(Protocol):
    def start(self) -> None: ...

    def close(self) -> None: ...


S = TypeVar("S", bound=_Server)


def _serve(make: Callable[[], S], what: str) -> Iterator[S]:
    """Start ``make()``'s server, yield it, and close it whatever the outcome; a server
    that cannot be started fails the test that asked for it."""
    try:
        server = make()
        server.start()
    except ServerError as error:
        pytest.fail(f"cannot start {what}: {error}", pytrace=False)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A standalone redis-server for the whole session (flush it yourself between uses)."""
    yield from _serve(RedisServer, "redis-server")


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisCluster]:
    """A 3-master Redis Cluster (no replicas) for the whole session."""
    yield from _serve(RedisCluster, "a Redis Cluster")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole session (take a fresh database with new_database)."""
    yield from _serve(PostgresServer, "PostgreSQL")
