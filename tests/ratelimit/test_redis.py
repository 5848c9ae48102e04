"""Redis specifics, through both APIs: one round trip per decision, the server's clock by
default."""

from __future__ import annotations

import time
from typing import Any

import pytest
import redis

from ranked.backends.redis import RedisBackend
from ranked.ratelimit import ALGORITHMS, Algorithm, Policy
from servers import RedisServer

from .conftest import Api


def _commands(client: redis.Redis) -> dict[str, int]:
    stats: dict[str, Any] = client.info("commandstats")
    return {name: int(entry["calls"]) for name, entry in stats.items()}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_each_decision_is_one_round_trip(
    redis_server: RedisServer, api: Api, algorithm: Algorithm
) -> None:
    client = redis_server.client()
    client.flushall()
    backend = RedisBackend.from_url(redis_server.url)
    try:
        limiter = api.limiter(backend, Policy(3, 10, algorithm))
        limiter.hit("warm")  # loads the script (EVALSHA answered NOSCRIPT, then EVAL)
        client.config_resetstat()
        for _ in range(5):
            limiter.hit("u")
            limiter.peek("u")
        calls = _commands(client)
        assert calls.pop("cmdstat_evalsha") == 10  # one per decision, nothing else sent
        assert set(calls) <= _SCRIPT_INNER | {"cmdstat_config|resetstat", "cmdstat_info"}
    finally:
        backend.close()
        client.close()


# commands the scripts run inside their EVALSHA (counted by commandstats, no round trip)
_SCRIPT_INNER = {
    f"cmdstat_{name}"
    for name in ("get", "set", "time", "zrange", "zrangebyscore", "zadd", "zremrangebyscore")
} | {"cmdstat_pexpire", "cmdstat_del", "cmdstat_hmget", "cmdstat_hset", "cmdstat_hincrby"}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_server_time_is_the_default_clock(
    redis_server: RedisServer, api: Api, algorithm: Algorithm
) -> None:
    client = redis_server.client()
    client.flushall()
    backend = RedisBackend.from_url(redis_server.url)
    try:
        limiter = api.limiter(backend, Policy(2, 30, algorithm))
        first = limiter.hit("u", 2)
        denied = limiter.hit("u")
        assert first.allowed and not denied.allowed
        assert 0 < denied.reset_after <= 60  # counted from the server's TIME, not 1970
        assert denied.retry_after is not None and 0 < denied.retry_after <= 60
        assert 0 < client.pttl(next(iter(client.keys("*")))) <= 60_000
    finally:
        backend.close()
        client.close()


def test_keys_vanish_after_the_window(redis_server: RedisServer, api: Api) -> None:
    client = redis_server.client()
    client.flushall()
    backend = RedisBackend.from_url(redis_server.url)
    try:
        for algorithm in ALGORITHMS:
            api.limiter(backend, Policy(5, 0.05, algorithm)).hit("u", 3)
        keys = client.keys("*")
        assert len(keys) == 6  # the log has two keys
        time.sleep(0.25)  # real time: Redis expires keys on its own clock
        assert client.exists(*keys) == 0
    finally:
        backend.close()
        client.close()
