"""Durations and instants stay where every backend computes them exactly (ranked.core.limits).

Redis runs the limiter scripts on Lua doubles in microseconds: a window past 2**53 us
rounds, and a reply past 2**63 us wraps to a negative retry, which reads back as
"allowed". So a policy's window and horizon, and every reading of a limiter's clock, are
checked where they enter; at the largest allowed values every backend decides exactly as
the memory reference does.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from ranked.backends.memory import MemoryBackend
from ranked.core.limits import MAX_DURATION_S, MAX_INSTANT_S
from ranked.errors import OutOfRangeError
from ranked.ratelimit import ALGORITHMS, Algorithm, Decision, Policy, RateLimiter
from ranked.ratelimit.policy import RateLimitConfigError

from .conftest import T0, Env, FakeClock, Limiter, NewLimiter


def largest(algorithm: Algorithm) -> float:
    """The longest window of ``algorithm`` (limit 2, burst the limit): its horizon, two
    windows for the sliding counter, is the longest duration."""
    return MAX_DURATION_S / 2 if algorithm == "sliding_counter" else MAX_DURATION_S


def three_hits(limiter: Limiter) -> list[Decision]:
    return [limiter.hit("u") for _ in range(3)]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_largest_window_is_exact_on_every_backend(
    new_limiter: NewLimiter, algorithm: Algorithm
) -> None:
    policy = Policy(2, largest(algorithm), algorithm)
    decided = three_hits(new_limiter(policy, clock=FakeClock()))
    reference = three_hits(RateLimiter(MemoryBackend(), policy, clock=FakeClock()))
    assert decided == reference
    assert [d.allowed for d in decided] == [True, True, False]  # Redis once allowed all
    denied = decided[-1]
    assert denied.remaining == 0
    assert denied.retry_after is not None and 0 < denied.retry_after <= policy.horizon
    if algorithm in ("fixed_window", "sliding_log"):
        assert denied.retry_after == denied.reset_after == policy.window


@pytest.mark.parametrize("algorithm", ["token_bucket", "gcra"])
def test_the_longest_refill_time_is_exact_on_every_backend(
    new_limiter: NewLimiter, algorithm: Algorithm
) -> None:
    policy = Policy(1, MAX_DURATION_S / 4, algorithm, burst=4)  # refills in 100 years
    limiter = new_limiter(policy, clock=FakeClock())
    assert limiter.hit("u", 4).allowed
    denied = limiter.hit("u")
    assert (denied.allowed, denied.remaining) == (False, 0)
    assert denied.reset_after == MAX_DURATION_S  # once wrapped to a negative on Redis
    assert denied.retry_after == MAX_DURATION_S / 4


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_window_past_the_longest_duration_is_refused(algorithm: Algorithm) -> None:
    with pytest.raises(OutOfRangeError, match=r"window .* outside .*100 years"):
        Policy(2, MAX_DURATION_S + 1, algorithm)
    with pytest.raises(OutOfRangeError, match="window"):
        Policy(2, 1e13, algorithm)


def test_a_horizon_past_the_longest_duration_is_refused() -> None:
    Policy(2, MAX_DURATION_S / 2, "sliding_counter")
    with pytest.raises(OutOfRangeError, match=r"sliding counter's horizon \(2 \* window\)"):
        Policy(2, MAX_DURATION_S / 2 + 1, "sliding_counter")
    for algorithm in ("token_bucket", "gcra"):
        Policy(1, MAX_DURATION_S / 4, algorithm, burst=4)
        with pytest.raises(OutOfRangeError, match=r"refill time \(window \* burst / limit\)"):
            Policy(1, MAX_DURATION_S / 4, algorithm, burst=5)
        with pytest.raises(OutOfRangeError, match="refill time"):
            Policy(1, 3e9, algorithm, burst=10**6)
        with pytest.raises(OutOfRangeError, match="finite"):
            Policy(1, 1, algorithm, burst=10**400)


def test_windows_that_are_not_positive_numbers_stay_config_errors() -> None:
    from ranked.ratelimit import RateLimitConfigError

    for window in (0, -1, math.inf, math.nan, "60", None, True):
        with pytest.raises(RateLimitConfigError):
            Policy(2, window)  # type: ignore[arg-type]


class SteppedClock(FakeClock):
    """A fake clock whose next reading can be anything."""

    def __init__(self) -> None:
        super().__init__()
        self.reading: Any = None

    def __call__(self) -> Any:
        return self.now if self.reading is None else self.reading


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("reading", [1e13, MAX_INSTANT_S + 1, -0.5, math.nan, math.inf, "now"])
def test_a_clock_reading_out_of_range_is_refused_with_nothing_written(
    env: Env, new_limiter: NewLimiter, algorithm: Algorithm, reading: Any
) -> None:
    clock = SteppedClock()
    limiter = new_limiter(Policy(3, 10, algorithm), clock=clock)
    assert limiter.hit("kept").allowed
    before = env.keys(), limiter.peek("kept", 0)
    clock.reading = reading
    for call in (limiter.hit, limiter.peek):
        with pytest.raises(OutOfRangeError, match="the limiter's clock reading"):
            call("u", 1)
        with pytest.raises(OutOfRangeError, match="the limiter's clock reading"):
            call("kept", 1)
    clock.reading = None
    assert (env.keys(), limiter.peek("kept", 0)) == before


@pytest.mark.parametrize("reading", [0, 0.0, MAX_INSTANT_S, float(MAX_INSTANT_S)])
def test_clock_readings_at_the_bounds_are_taken(new_limiter: NewLimiter, reading: float) -> None:
    limiter = new_limiter(Policy(1, 10, "gcra"), clock=lambda: reading)
    assert limiter.hit("u").allowed
    assert not limiter.hit("u").allowed


@pytest.mark.parametrize("algorithm", ["token_bucket", "gcra"])
@pytest.mark.parametrize("now", [T0, MAX_INSTANT_S - 10])
def test_the_fastest_rate_is_exact_on_every_backend(
    new_limiter: NewLimiter, algorithm: Algorithm, now: float
) -> None:
    """A million a second per key: an emission interval of one microsecond, which a
    double holds next to every instant up to 2140. (The burst keeps the state's TTL at
    3 s of the server's own clock, which runs while the fake one stands still.)"""
    policy = Policy(1_000_000, 1, algorithm, burst=3_000_000)

    def hits(limiter: Limiter) -> list[Decision]:
        return [*(limiter.hit("u", 1_000_000) for _ in range(3)), limiter.hit("u")]

    decided = hits(new_limiter(policy, clock=FakeClock(now)))
    assert decided == hits(RateLimiter(MemoryBackend(), policy, clock=FakeClock(now)))
    assert [d.allowed for d in decided] == [True, True, True, False]
    assert decided[2].remaining == 0 and decided[3].retry_after == 1e-06


@pytest.mark.parametrize("algorithm", ["token_bucket", "gcra"])
def test_a_rate_past_a_million_a_second_is_refused(algorithm: Algorithm) -> None:
    """Past a million a second per key the interval is under a microsecond, which rounds
    away against today's instants in microseconds (Redis then refused the GCRA's zero
    expiry; memory admitted everything)."""
    with pytest.raises(RateLimitConfigError, match="1,000,000 a second"):
        Policy(1_000_001, 1, algorithm)
    with pytest.raises(RateLimitConfigError, match="1,000,000 a second"):
        Policy(2, 0.000001, algorithm)
    assert Policy(1_000_000, 1, algorithm).limit == 1_000_000
    assert Policy(4_000_000, 4, algorithm).window == 4
