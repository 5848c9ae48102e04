"""AsyncRedisBackend on a real redis-server: same answers as the sync class, concurrent
tasks without lost updates, the server clock, and recovery after a restart."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis

from ranked.backends.redis import AsyncRedisBackend, RedisBackend
from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle
from ranked.errors import BackendUnavailableError
from ranked.leaderboard._requests import SubmitRequest, Target
from servers import RedisServer

from .conftest import Steps


def board(name: str = "async") -> Target:
    keys = BoardKeys(name)
    return Target(keys.window("all"), keys.dense("all"), keys.dense_counts("all"))


def incr(member: bytes, value: float) -> SubmitRequest:
    return SubmitRequest(member, value, "incr", True, (board(),), RankStyle.DENSE, 0)


def test_async_and_sync_give_the_same_answers(redis_server: RedisServer) -> None:
    redis_server.client().flushall()
    sync = Steps(RedisBackend.from_url(redis_server.url))
    target = board()

    async def scenario() -> None:
        backend = Steps(AsyncRedisBackend.from_url(redis_server.url))
        try:
            for n in range(30):
                await backend.submit(incr(b"m%d" % (n % 7), n % 4))
            for style in RankStyle:
                assert await backend.page(target, 0, 9, True, style) == sync.page(
                    target, 0, 9, True, style
                )
                assert await backend.around(target, b"m3", 2, 2, True, style) == sync.around(
                    target, b"m3", 2, 2, True, style
                )
                assert await backend.by_score(target, 3, 12, 1, 3, True, style) == (
                    sync.by_score(target, 3, 12, 1, 3, True, style)
                )
            assert await backend.scores(target, [b"m1", b"x"]) == sync.scores(target, [b"m1", b"x"])
        finally:
            await backend.close()
            await backend.close()

    asyncio.run(scenario())
    sync.close()


def test_concurrent_tasks_lose_no_update(redis_server: RedisServer) -> None:
    redis_server.client().flushall()

    async def scenario() -> None:
        backend = Steps(AsyncRedisBackend.from_url(redis_server.url))
        try:
            await asyncio.gather(*(backend.submit(incr(b"hot", 1)) for _ in range(200)))
            assert await backend.scores(board(), [b"hot"]) == [200.0]
        finally:
            await backend.close()

    asyncio.run(scenario())


def test_async_clock_is_measured_on_connect(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        backend = Steps(
            AsyncRedisBackend.from_url(redis_server.url, clock=lambda: time.time() - 3600)
        )
        try:
            await backend.connect()
            seconds, micros = await backend.client.time()
            assert abs(backend.now_ms() - (seconds * 1000 + micros // 1000)) < 1000
        finally:
            await backend.close()

    asyncio.run(scenario())


def test_async_restart_raises_unavailable_then_recovers() -> None:
    async def scenario(server: RedisServer) -> None:
        backend = Steps(AsyncRedisBackend.from_url(server.url))
        try:
            await backend.submit(incr(b"a", 1))
            server.stop()
            with pytest.raises(BackendUnavailableError) as raised:
                await backend.submit(incr(b"a", 1))
            assert isinstance(raised.value.__cause__, redis.ConnectionError)
            server.start()
            outcome = (await backend.submit(incr(b"a", 5)))[0]
            assert (outcome.score, outcome.previous_score) == (5.0, None)  # data was not kept
        finally:
            await backend.close()

    with RedisServer() as server:
        asyncio.run(scenario(server))
