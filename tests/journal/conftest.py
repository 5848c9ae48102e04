"""Fixtures of the journal tests: a fresh journal on each store, SQLite (a file in pytest's
tmp_path) and PostgreSQL (a fresh database on the session's server)."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.journal import JournalStore, SQLiteJournal, open_journal
from ranked.journal._base import JournalBase
from servers import PostgresServer, RedisCluster, RedisServer


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


@pytest.fixture(params=["sqlite", "postgresql"])
def journal_url(request: pytest.FixtureRequest, journal_path: Path) -> str:
    """The URL of a fresh, not yet created journal on each store."""
    if request.param == "sqlite":
        return f"sqlite://{journal_path}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.new_database()


@pytest.fixture
def journal(journal_url: str) -> Iterator[JournalStore]:
    store = open_journal(journal_url)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def pg_url(postgres_server: PostgresServer) -> str:
    """The URL of a fresh, empty PostgreSQL database."""
    return postgres_server.new_database()


@pytest.fixture
def sqlite_journal(journal_path: Path) -> Iterator[SQLiteJournal]:
    """A fresh SQLite journal, for the tests of what is SQLite's own."""
    store = open_journal(f"sqlite://{journal_path}")
    assert isinstance(store, SQLiteJournal)
    try:
        yield store
    finally:
        store.close()


class FailingConnection:
    """A writing connection whose next statement starting with ``prefix`` fails with the
    driver's own error (a full disk, an I/O error, a lost server); its INSERTs take
    ``insert_delay`` seconds more."""

    def __init__(self, conn: Any, prefix: str, insert_delay: float, times: int) -> None:
        self.conn = conn
        self.prefix = prefix
        self.times = times
        self.insert_delay = insert_delay
        self.error: type[Exception] = (
            sqlite3.OperationalError if isinstance(conn, sqlite3.Connection) else psycopg.Error
        )

    def _before(self, sql: str) -> None:
        if self.insert_delay and sql.startswith("INSERT"):
            time.sleep(self.insert_delay)
        if self.prefix and sql.startswith(self.prefix):
            self.times -= 1
            if not self.times:
                self.prefix = ""
            raise self.error("disk I/O error")

    def execute(self, sql: str, args: Any = ()) -> Any:
        self._before(sql)
        return self.conn.execute(sql, args)

    def executemany(self, sql: str, rows: Any) -> Any:
        self._before(sql)
        if isinstance(self.conn, sqlite3.Connection):
            return self.conn.executemany(sql, rows)
        with self.conn.cursor() as cursor:
            return cursor.executemany(sql, rows)

    @contextlib.contextmanager
    def cursor(self) -> Iterator[FailingConnection]:  # psycopg's: only executemany is used
        yield self

    def close(self) -> None:
        self.conn.close()


def fail_next(
    store: JournalStore, prefix: str, insert_delay: float = 0.0, times: int = 1
) -> FailingConnection:
    """Make the next ``times`` statements of ``store``'s committer that start with
    ``prefix`` (``INSERT``, ``COMMIT``) fail (``prefix`` is then emptied)."""
    assert isinstance(store, JournalBase)
    writer = store._writer
    writer.conn = FailingConnection(writer.conn, prefix, insert_delay, times)
    return writer.conn  # type: ignore[no-any-return]


def flush_redis(server: RedisServer) -> None:
    """Empty the session's Redis server (FLUSHALL)."""
    client = server.client()
    try:
        client.flushall()
    finally:
        client.close()


def flush_cluster(cluster: RedisCluster) -> None:
    """Empty every node of the session's Redis Cluster."""
    for index in range(len(cluster.ports)):
        node = cluster.node_client(index)
        try:
            node.flushall()
        finally:
            node.close()


INDEXES = ("memory", "redis", "cluster")


class Index:
    """Opens backends on one index: a fresh keyspace per "process" on memory (the old one
    is gone, as after a crash), the same server on Redis; ``flush`` empties the server."""

    def __init__(
        self,
        kind: str,
        url: str | None,
        flush: Callable[[], None] = lambda: None,
        client: Callable[[], Any] | None = None,
    ):
        self.kind = kind
        self.url = url
        self.flush = flush
        self.client = client
        """A plain redis-py client of the server (None on memory)."""

    def backend(self) -> Any:
        if self.kind == "memory":
            return MemoryBackend()
        from ranked.backends.factory import open_backend

        return open_backend(self.url)  # type: ignore[arg-type]

    def async_backend(self) -> Any:
        if self.kind == "memory":
            return AsyncMemoryBackend()
        from ranked.backends.factory import open_async_backend

        return open_async_backend(self.url)  # type: ignore[arg-type]


@pytest.fixture(params=INDEXES)
def index(request: pytest.FixtureRequest) -> Index:
    kind = request.param
    if kind == "memory":
        return Index(kind, None)
    if kind == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")

        def flush() -> None:
            flush_redis(server)

        flush()
        return Index(kind, server.url, flush, server.client)
    cluster: RedisCluster = request.getfixturevalue("redis_cluster")

    def flush_all() -> None:
        flush_cluster(cluster)

    flush_all()
    return Index(kind, cluster.url, flush_all, cluster.client)
