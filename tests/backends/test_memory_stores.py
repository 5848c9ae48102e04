"""memory:// URLs name process-wide stores: every handle opened on one URL sees the same
data (as clients of one Redis server do), different names are separate stores, and
``MemoryBackend()`` built directly stays private."""

from __future__ import annotations

import asyncio
import threading
import uuid

import pytest

from ranked.backends.factory import open_async_backend, open_backend
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend, store_name
from ranked.leaderboard import AsyncLeaderboard, Leaderboard

from .conftest import Steps, fill, target


def fresh_url() -> str:
    return f"memory://test-{uuid.uuid4().hex}"


def test_one_url_is_one_store() -> None:
    url = fresh_url()
    first, second = Steps(open_backend(url)), Steps(open_backend(url))
    assert isinstance(first.backend, MemoryBackend) and isinstance(second.backend, MemoryBackend)
    fill(first, {b"a": 1})
    assert second.scores(target().key, [b"a"]) == [1.0]  # before: each open was a new store
    assert first.keyspace is second.keyspace and first.lock is second.lock
    first.close()  # a handle's close leaves the store to the others
    assert second.count(target().key) == 1
    assert Steps(open_backend(url)).count(target().key) == 1  # and to later opens


def test_names_separate_stores() -> None:
    name = uuid.uuid4().hex
    a, b = Steps(open_backend(f"memory://{name}-a")), Steps(open_backend(f"memory://{name}-b"))
    fill(a, {b"x": 1})
    assert b.count(target().key) == 0
    assert Steps(open_backend(f"MEMORY://{name}-a")).count(target().key) == 1  # the scheme's case
    private = Steps(MemoryBackend(f"memory://{name}-a"))  # built directly: private
    assert private.count(target().key) == 0
    fill(private, {b"y": 2})
    assert a.scores(target().key, [b"y"]) == [None]


def test_boards_opened_by_url_share_their_data() -> None:
    url = fresh_url()
    with Leaderboard(url, "arena") as writer, Leaderboard(url, "arena") as reader:
        writer.submit("alice", 10)
        assert reader.score("alice") == 10.0  # before: None, a private store per board
        assert [e.member for e in reader.top(3)] == ["alice"]

    async def read() -> float | None:
        async with AsyncLeaderboard(url, "arena") as board:
            return await board.score("alice")

    assert asyncio.run(read()) == 10.0
    assert isinstance(open_async_backend(url), AsyncMemoryBackend)


def test_the_default_store_and_flushall() -> None:
    name = fresh_url()
    backend = Steps(MemoryBackend.from_url(name))
    fill(backend, {b"a": 1})
    MemoryBackend.from_url(name).flushall()
    assert backend.count(target().key) == 0
    assert store_name("memory://") == "" and store_name("memory://x/y") == "x/y"
    with pytest.raises(ValueError):
        store_name("redis://x")


def test_a_store_has_one_clock() -> None:
    url = fresh_url()

    def clock() -> float:
        return 1_000.0

    first = Steps(MemoryBackend.from_url(url, clock))
    assert first.now_ms() == 1_000_000
    assert MemoryBackend.from_url(url).now_ms() == 1_000_000  # the store's clock
    assert MemoryBackend.from_url(url, clock).now_ms() == 1_000_000
    with pytest.raises(ValueError, match="another clock"):
        MemoryBackend.from_url(url, lambda: 5.0)


def test_concurrent_opens_get_one_store() -> None:
    url = fresh_url()
    found: list[MemoryBackend] = []

    def open_one() -> None:
        found.append(MemoryBackend.from_url(url))

    threads = [threading.Thread(target=open_one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(backend.keyspace) for backend in found}) == 1
