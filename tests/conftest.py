"""Session fixtures: a real redis-server, a real 3-master Redis Cluster and a real PostgreSQL
server on loopback ports.

Both start lazily (only when a test asks for them), once per session, and are stopped at the
end of the session whatever the outcome. A missing redis-server or redis-cli fails the tests
that need them with a message saying what to install; nothing is ever skipped.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servers import PostgresServer, RedisCluster, RedisServer, ServerError


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A standalone redis-server for the whole session (flush it yourself between uses)."""
    try:
        server = RedisServer()
        server.start()
    except ServerError as error:
        pytest.fail(f"cannot start redis-server: {error}", pytrace=False)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisCluster]:
    """A 3-master Redis Cluster (no replicas) for the whole session."""
    try:
        cluster = RedisCluster()
        cluster.start()
    except ServerError as error:
        pytest.fail(f"cannot start a Redis Cluster: {error}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole session (take a fresh database with new_database)."""
    try:
        server = PostgresServer()
        server.start()
    except ServerError as error:
        pytest.fail(f"cannot start PostgreSQL: {error}", pytrace=False)
    try:
        yield server
    finally:
        server.close()
