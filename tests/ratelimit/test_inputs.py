"""Bad input raises a typed error before anything is written; limits of the policy hold."""

from __future__ import annotations

from typing import Any

import pytest

from ranked.errors import RankedError
from ranked.ratelimit import (
    ALGORITHMS,
    Algorithm,
    Policy,
    RateLimitConfigError,
    RateLimiter,
    RateLimitTypeError,
)

from .conftest import Env, FakeClock


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_cost_above_capacity_is_refused_with_nothing_written(
    env: Env, algorithm: Algorithm
) -> None:
    limiter = RateLimiter(env.backend, Policy(5, 1, algorithm), clock=FakeClock())
    with pytest.raises(RateLimitConfigError, match="exceeds"):
        limiter.hit("u", 6)
    with pytest.raises(RateLimitConfigError):
        limiter.peek("u", 6)
    assert env.keys() == set()
    assert limiter.hit("u", 5).allowed  # the capacity itself passes


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_denied_hit_consumes_nothing(env: Env, algorithm: Algorithm) -> None:
    clock = FakeClock()
    limiter = RateLimiter(env.backend, Policy(5, 10, algorithm), clock=clock)
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
def test_bad_costs(env: Env, cost: Any, error: type[Exception]) -> None:
    limiter = RateLimiter(env.backend, Policy(5, 1))
    with pytest.raises(error) as raised:
        limiter.hit("u", cost)
    assert isinstance(raised.value, RankedError)
    assert isinstance(raised.value, ValueError | TypeError)
    assert env.keys() == set()


@pytest.mark.parametrize("identity", [42, None, ["u"], bytearray(b"u"), 1.5])
def test_bad_identities(env: Env, identity: Any) -> None:
    limiter = RateLimiter(env.backend, Policy(5, 1))
    with pytest.raises(RateLimitTypeError):
        limiter.hit(identity)
    with pytest.raises(RateLimitTypeError):
        limiter.reset(identity)


def test_str_and_bytes_identities_are_the_same_identity(env: Env) -> None:
    limiter = RateLimiter(env.backend, Policy(5, 1, "fixed_window"), clock=FakeClock())
    limiter.hit("\u00e9l\u00e8ve", 2)
    assert limiter.peek("\u00e9l\u00e8ve".encode(), 0).remaining == 3


@pytest.mark.parametrize("prefix", ["{rl}", "a}b", 5])
def test_bad_prefixes(prefix: Any) -> None:
    from ranked.backends.memory import MemoryBackend

    with pytest.raises(RateLimitConfigError):
        RateLimiter(MemoryBackend(), Policy(5, 1), prefix=prefix)


def test_bad_policy_and_clock() -> None:
    from ranked.backends.memory import MemoryBackend

    with pytest.raises(RateLimitTypeError):
        RateLimiter(MemoryBackend(), "5/minute")  # type: ignore[arg-type]
    with pytest.raises(RateLimitTypeError):
        RateLimiter(MemoryBackend(), Policy(5, 1), clock=12.0)  # type: ignore[arg-type]


def test_two_policies_on_one_identity_never_share_state(env: Env) -> None:
    clock = FakeClock()
    burst = RateLimiter(env.backend, Policy(2, 1, "gcra", name="burst"), clock=clock)
    hourly = RateLimiter(env.backend, Policy(100, 3600, "gcra", name="hourly"), clock=clock)
    burst.hit("u", 2)
    assert hourly.hit("u").remaining == 99
