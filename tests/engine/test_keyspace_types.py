"""String, hash and set commands through Keyspace.execute (replies as Redis 7.0.15 gives)."""

from __future__ import annotations

import pytest

from ranked import Keyspace, ResponseError

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


@pytest.fixture
def ks() -> Keyspace:
    return Keyspace()


def error_of(ks: Keyspace, *args: str | int) -> str:
    with pytest.raises(ResponseError) as caught:
        ks.execute(*args)
    return str(caught.value)


def test_incr_family(ks: Keyspace) -> None:
    assert ks.execute("INCR", "n") == 1
    assert ks.execute("INCRBY", "n", 41) == 42
    assert ks.execute("DECR", "n") == 41
    assert ks.execute("DECRBY", "n", 50) == -9
    assert ks.execute("GET", "n") == b"-9"
    ks.execute("SET", "n", 2**63 - 1)
    assert error_of(ks, "INCR", "n") == "ERR increment or decrement would overflow"
    assert error_of(ks, "DECRBY", "n", -(2**63)) == "ERR decrement would overflow"
    assert error_of(ks, "INCRBY", "n", "x") == "ERR value is not an integer or out of range"
    for stored in ("abc", " 1", "01", "1.0"):
        ks.execute("SET", "s", stored)
        assert error_of(ks, "INCR", "s") == "ERR value is not an integer or out of range"
    ks.execute("ZADD", "z", 1, "a")
    assert error_of(ks, "INCR", "z") == WRONGTYPE
    assert error_of(ks, "GET", "z") == WRONGTYPE


def test_incr_keeps_ttl(ks: Keyspace) -> None:
    ks.execute("SET", "n", 1, "EX", 100)
    ks.execute("INCR", "n")
    assert ks.execute("TTL", "n") == 100


def test_hashes(ks: Keyspace) -> None:
    assert error_of(ks, "HSET", "h", "a", 1, "b") == (
        "ERR wrong number of arguments for 'hset' command"
    )
    assert ks.execute("HSET", "h", "a", 1, "b", 2, "a", 3) == 2
    assert ks.execute("HGET", "h", "a") == b"3"
    assert ks.execute("HMGET", "h", "a", "x", "b") == [b"3", None, b"2"]
    assert ks.execute("HMGET", "nokey", "a") == [None]
    assert ks.execute("HINCRBY", "h", "new", 5) == 5
    assert error_of(ks, "HINCRBY", "h", "b", 2**63 - 1) == (
        "ERR increment or decrement would overflow"
    )
    ks.execute("HSET", "h", "s", "abc")
    assert error_of(ks, "HINCRBY", "h", "s", 1) == "ERR hash value is not an integer"
    assert ks.execute("HGETALL", "h") == [b"a", b"3", b"b", b"2", b"new", b"5", b"s", b"abc"]
    assert ks.execute("HDEL", "h", "a", "x", "b", "new", "s") == 4
    assert ks.execute("EXISTS", "h") == 0
    assert ks.execute("HGETALL", "nokey") == []
    ks.execute("SET", "str", "v")
    assert error_of(ks, "HINCRBY", "str", "a", "x") == "ERR value is not an integer or out of range"
    assert error_of(ks, "HINCRBY", "str", "a", 1) == WRONGTYPE
    assert error_of(ks, "HGET", "str", "a") == WRONGTYPE


def test_sets(ks: Keyspace) -> None:
    assert ks.execute("SADD", "s", "b", "a", "b") == 2
    assert ks.execute("SMEMBERS", "s") == [b"a", b"b"]
    assert ks.execute("SISMEMBER", "s", "a") == 1
    assert ks.execute("SISMEMBER", "s", "x") == 0
    assert ks.execute("SCARD", "s") == 2
    assert ks.execute("SREM", "s", "a", "x") == 1
    assert ks.execute("SREM", "s", "b") == 1
    assert ks.execute("EXISTS", "s") == 0
    assert ks.execute("SMEMBERS", "nokey") == []
    assert ks.execute("SCARD", "nokey") == 0
    ks.execute("SET", "str", "v")
    assert error_of(ks, "SADD", "str", "a") == WRONGTYPE
    assert ks.execute("TYPE", "s") == b"none"
    ks.execute("SADD", "s", "x")
    assert ks.execute("TYPE", "s") == b"set"
