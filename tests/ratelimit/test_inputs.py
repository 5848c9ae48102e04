"""Bad input raises a typed error before anything is written, on every backend and both
APIs; limits of the policy hold."""

from __future__ import annotations

from typing import Any

import pytest

from ranked.backends.memory import MemoryBackend
from ranked.errors import RankedError
from ranked.ratelimit import (
    ALGORITHMS,
    Algorithm,
    Policy,
    RateLimitConfigError,
    RateLimitTypeError,
)

from .conftest import Api, Env, FakeClock, NewLimiter


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_cost_above_capacity_is_refused_with_nothing_written(
    env: Env, new_limiter: NewLimiter, algorithm: Algorithm
) -> None:
    limiter = new_limiter(Policy(5, 1, algorithm), clock=FakeClock())
    with pytest.raises(RateLimitConfigError, match="exceeds"):
        limiter.hit("u", 6)
    with pytest.raises(RateLimitConfigError):
        limiter.peek("u", 6)
    assert env.keys() == set()
    assert limiter.hit("u", 5).allowed  # the capacity itself passes


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_denied_hit_consumes_nothing(new_limiter: NewLimiter, algorithm: Algorithm) -> None:
    clock = FakeClock()
    limiter = new_limiter(Policy(5, 10, algorithm), clock=clock)
    assert limiter.hit("u", 3).allowed
    before = limiter.peek("u", 0)
    for _ in range(3):
        assert not limiter.hit("u", 3).allowed
    assert limiter.peek("u", 0) == before
    assert limiter.hit("u", 2).allowed


@pytest.mark.parametrize(
    ("cost", "error"),
    [
        (-1, RateLimitConfigError),
        (True, RateLimitTypeError),
        (1.0, RateLimitTypeError),
        ("1", RateLimitTypeError),
        (None, RateLimitTypeError),
    ],
)
def test_bad_costs(env: Env, new_limiter: NewLimiter, cost: Any, error: type[Exception]) -> None:
    limiter = new_limiter(Policy(5, 1))
    with pytest.raises(error) as raised:
        limiter.hit("u", cost)
    assert isinstance(raised.value, RankedError)
    assert isinstance(raised.value, ValueError | TypeError)
    assert env.keys() == set()


@pytest.mark.parametrize("identity", [42, None, ["u"], bytearray(b"u"), 1.5])
def test_bad_identities(env: Env, new_limiter: NewLimiter, identity: Any) -> None:
    limiter = new_limiter(Policy(5, 1))
    with pytest.raises(RateLimitTypeError):
        limiter.hit(identity)
    with pytest.raises(RateLimitTypeError):
        limiter.reset(identity)
    assert env.keys() == set()


def test_str_and_bytes_identities_are_the_same_identity(new_limiter: NewLimiter) -> None:
    limiter = new_limiter(Policy(5, 1, "fixed_window"), clock=FakeClock())
    limiter.hit("\u00e9l\u00e8ve", 2)
    assert limiter.peek("\u00e9l\u00e8ve".encode(), 0).remaining == 3


@pytest.mark.parametrize("prefix", ["{rl}", "a}b", 5])
def test_bad_prefixes(api: Api, prefix: Any) -> None:
    with pytest.raises(RateLimitConfigError):
        api.limiter(MemoryBackend(), Policy(5, 1), prefix=prefix)


def test_bad_policy_and_clock(api: Api) -> None:
    with pytest.raises(RateLimitTypeError):
        api.limiter(MemoryBackend(), "5/minute")  # type: ignore[arg-type]
    with pytest.raises(RateLimitTypeError):
        api.limiter(MemoryBackend(), Policy(5, 1), clock=12.0)  # type: ignore[arg-type]


def test_two_policies_on_one_identity_never_share_state(new_limiter: NewLimiter) -> None:
    clock = FakeClock()
    burst = new_limiter(Policy(2, 1, "gcra", name="burst"), clock=clock)
    hourly = new_limiter(Policy(100, 3600, "gcra", name="hourly"), clock=clock)
    burst.hit("u", 2)
    assert hourly.hit("u").remaining == 99
