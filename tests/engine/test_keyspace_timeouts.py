"""Blocking-command timeouts read as Redis 7.0.15 reads them (each value checked on the
server: ``tests/engine/test_keyspace_vs_redis.py`` runs the same texts through BZPOPMIN)."""

from __future__ import annotations

import pytest

from ranked import ResponseError
from ranked.engine.commands.timeout import parse_timeout


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        (b"0", 0),
        (b"-0", 0),
        (b"0.01", 10),
        (b"1.5", 1500),
        (b"+1", 1000),
        (b".5", 500),
        (b"1.", 1000),
        (b"1e3", 1_000_000),
        (b"0x10", 16_000),
        (b"0x1p-3", 125),
        (b"0.0001", 1),  # ceill: any positive timeout waits at least 1 ms
        (b"1e-400", 1),  # a long double holds it where a double would not
        (b"0x1p-16445", 1),  # the smallest denormal long double
        (b"-0.0001", 0),  # ceill(-0.1) is -0: no limit at all
        (b"-0.001", 0),  # -0.001L * 1000 is just above -1 on the long double grid
        (b"-1e-400", 0),
        (b"9e15", 9 * 10**18),
        (b"9223372036854775.807", 2**63 - 1),
        (b"0" * 5118 + b"1", 1000),
    ],
)
def test_timeouts_parse_like_redis(text: bytes, millis: int) -> None:
    assert parse_timeout(text) == millis


@pytest.mark.parametrize(
    "text",
    [
        b"-1",
        b"-0.0010000000000000000001",
        b"-.5e-0",
        b"inf",
        b"-infinity",
        b"1e400",  # fits a long double, overflows long long: LLONG_MIN
        b"0x1p16383",
        b"9.3e15",
        b"9223372036854775.808",
        b"1" * 4500,
    ],
)
def test_timeouts_redis_calls_negative(text: bytes) -> None:
    with pytest.raises(ResponseError) as caught:
        parse_timeout(text)
    assert str(caught.value) == "ERR timeout is negative"


@pytest.mark.parametrize(
    "text",
    [
        b"",
        b"abc",
        b"nan",
        b"-nan",
        b" 1",
        b"1 ",
        b"\t1",
        b"1\x00",
        b"1_0",
        b"1e",
        b"0x",
        b".",
        b"-",
        b"infinit",
        b"1e5000",  # past the long double range
        b"1.2e4932",
        b"1e-5000",  # underflows to zero
        b"0x1p-16446",
        b"1e" + b"1" * 4400,
        b"0" * 5119 + b"1",  # 5120 bytes: longer than string2ld's buffer
    ],
)
def test_timeouts_redis_refuses(text: bytes) -> None:
    with pytest.raises(ResponseError) as caught:
        parse_timeout(text)
    assert str(caught.value) == "ERR timeout is not a float or out of range"
