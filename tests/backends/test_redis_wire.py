"""The lean send path of scripts on one Redis server (``ranked.backends._wire``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from typing import Any

import pytest

from ranked.backends.redis import AsyncRedisBackend, RedisBackend
from ranked.errors import BackendUnavailableError, ResponseError
from ranked.ratelimit import Policy, RateLimiter
from servers import RedisServer


@pytest.fixture
def backend(redis_server: RedisServer) -> Iterator[RedisBackend]:
    redis_server.client().flushall()
    opened = RedisBackend.from_url(redis_server.url)
    yield opened
    opened.close()


def test_scripts_bypass_execute_command(backend: RedisBackend) -> None:
    limiter = RateLimiter(backend, Policy(2, 60, "fixed_window"))
    assert [limiter.hit("u").allowed for _ in range(3)] == [True, True, False]
    assert backend._script is not backend.client.execute_command


def test_an_error_reply_keeps_the_connection(
    backend: RedisBackend, redis_server: RedisServer
) -> None:
    limiter = RateLimiter(backend, Policy(2, 60, "fixed_window"))
    key = limiter._plan.keys("u")[0]
    redis_server.client().set(key, "not a hash")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        limiter.hit("u")
    pool = backend.client.connection_pool
    # the scripts' connection stays with the wire (in use to the pool) and stays open
    assert [connection._sock is not None for connection in pool._in_use_connections] == [True]
    redis_server.client().delete(key)
    assert limiter.hit("u").allowed


def test_a_killed_connection_fails_once_then_reconnects(
    backend: RedisBackend, redis_server: RedisServer
) -> None:
    limiter = RateLimiter(backend, Policy(5, 60, "gcra"))
    assert limiter.hit("u").allowed
    redis_server.client().client_kill_filter(_type="normal", skipme=True)
    with contextlib.suppress(BackendUnavailableError):
        limiter.hit("u")  # may see the dead socket: retries are off
    assert limiter.hit("u").allowed  # a fresh connection


def test_the_async_path_runs_scripts(redis_server: RedisServer) -> None:
    from ranked.ratelimit import AsyncRateLimiter

    redis_server.client().flushall()

    async def main() -> list[bool]:
        backend = AsyncRedisBackend.from_url(redis_server.url)
        try:
            assert backend._script is not backend.client.execute_command
            limiter = AsyncRateLimiter(backend, Policy(2, 60, "sliding_log"))
            return [(await limiter.hit("u")).allowed for _ in range(3)]
        finally:
            await backend.close()

    assert asyncio.run(main()) == [True, True, False]


def test_a_forked_child_uses_its_own_connection(backend: RedisBackend) -> None:
    limiter = RateLimiter(backend, Policy(10, 60, "fixed_window"))
    assert limiter.hit("u").allowed  # the parent now holds a connection
    child = os.fork()
    if child == 0:  # the child: its own socket, or the parent's replies would interleave
        ok = limiter.hit("u").remaining == 8
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.WEXITSTATUS(status) == 0
    assert limiter.hit("u").remaining == 7


def test_requests_are_packed_exactly_as_redis_py_packs_them() -> None:
    import redis

    from ranked.backends import _wire

    assert _wire._hiredis_pack is not None
    args = ("EVALSHA", "f" * 40, 2, b"{a}:k\x00", "{a}:\u00e9", b"", 0.1, 1e300, -0.0, 2**53, "")
    connection: Any = redis.Connection  # redis-py leaves it unannotated
    packer = connection()._command_packer
    assert _wire._hiredis_pack(args) == b"".join(packer.pack(*args))
