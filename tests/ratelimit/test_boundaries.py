"""Each algorithm's documented boundary behaviour, pinned with a fake clock on every backend
and both APIs.

``T0`` is a multiple of every window used here, so the sliding counter's clock-aligned
windows start exactly at ``T0``.
"""

from __future__ import annotations

import pytest

from ranked.ratelimit import Policy

from .conftest import FakeClock, Limiter, NewLimiter


def limiter(new_limiter: NewLimiter, clock: FakeClock, policy: Policy) -> Limiter:
    return new_limiter(policy, clock=clock)


def test_fixed_window_admits_twice_the_limit_around_a_boundary(
    new_limiter: NewLimiter, clock: FakeClock
) -> None:
    fixed = limiter(new_limiter, clock, Policy(10, 60, "fixed_window"))
    assert fixed.hit("u").remaining == 9  # the window starts with this hit
    clock.advance(59.999)
    assert fixed.hit("u", 9).allowed
    late = fixed.hit("u")
    assert not late.allowed
    assert late.retry_after == pytest.approx(0.001)
    clock.advance(0.001)  # the window ends exactly 60 s after its first hit
    assert fixed.hit("u", 10).allowed  # 20 units within [T0, T0 + 60]: 2x the limit


def test_sliding_log_is_exact_at_the_same_boundary(
    new_limiter: NewLimiter, clock: FakeClock
) -> None:
    log = limiter(new_limiter, clock, Policy(10, 60, "sliding_log"))
    assert log.hit("u").allowed
    clock.advance(59.999)
    assert log.hit("u", 9).allowed
    clock.advance(0.001)  # the first hit leaves the window: one unit is free, not ten
    denied = log.hit("u", 10)
    assert not denied.allowed and denied.remaining == 1
    assert denied.retry_after == pytest.approx(59.999)  # when the 9 units leave
    assert denied.reset_after == pytest.approx(59.999)
    assert log.hit("u", 1).allowed
    assert not log.hit("u", 1).allowed


def test_sliding_log_retry_after_frees_exactly_enough(
    new_limiter: NewLimiter, clock: FakeClock
) -> None:
    log = limiter(new_limiter, clock, Policy(6, 10, "sliding_log"))
    for cost in (1, 2, 3):  # at T0, T0+1, T0+2
        assert log.hit("u", cost).allowed
        clock.advance(1)
    clock.advance(-1)
    denied = log.hit("u", 3)  # needs the 1 and the 2 gone: at T0 + 11
    assert denied.retry_after == pytest.approx(9)
    assert denied.reset_after == pytest.approx(10)  # the newest (T0+2) leaves at T0+12
    clock.advance(9 - 0.000001)
    assert not log.hit("u", 3).allowed
    clock.advance(0.000001)
    assert log.hit("u", 3).remaining == 0


def test_sliding_counter_estimate_and_bounded_overage(
    new_limiter: NewLimiter, clock: FakeClock
) -> None:
    counter = limiter(new_limiter, clock, Policy(10, 10, "sliding_counter"))
    clock.advance(9.999)
    assert counter.hit("u", 10).allowed  # all of window 0 at its very end
    clock.advance(0.001)  # window 1 starts: estimate = 10 * 1.0 + 0
    full = counter.hit("u")
    assert (full.allowed, full.remaining) == (False, 0)
    assert full.retry_after == pytest.approx(1.0)  # 10 * (1 - 1/10) + 1 <= 10
    assert full.reset_after == pytest.approx(10.0)  # when window 0 stops counting
    clock.advance(5)  # estimate = 10 * 0.5 = 5
    assert counter.peek("u", 0).remaining == 5
    assert counter.hit("u", 5).allowed
    assert not counter.hit("u", 1).allowed
    # 15 units admitted within (T0 + 5, T0 + 15]: the overage is prev * elapsed / window
    clock.advance(2.5)  # estimate = 10 * 0.25 + 5 = 7.5
    state = counter.peek("u", 0)
    assert state.remaining == 2
    assert state.reset_after == pytest.approx(12.5)  # window 1's 5 units count until T0 + 30
    assert counter.hit("u", 2).allowed


def test_sliding_counter_retry_in_the_next_window(
    new_limiter: NewLimiter, clock: FakeClock
) -> None:
    counter = limiter(new_limiter, clock, Policy(10, 10, "sliding_counter"))
    clock.advance(2)
    assert counter.hit("u", 8).allowed
    denied = counter.hit("u", 4)  # fits once the 8 weigh <= 6: 2.5 s into window 1
    assert denied.retry_after == pytest.approx(10.5)
    clock.advance(10.5)
    assert counter.hit("u", 4).allowed


def test_token_bucket_refills_continuously(new_limiter: NewLimiter, clock: FakeClock) -> None:
    bucket = limiter(new_limiter, clock, Policy(10, 10, "token_bucket", burst=5))  # 1 token/s
    assert bucket.hit("u", 5).remaining == 0
    empty = bucket.hit("u")
    assert (empty.allowed, empty.retry_after, empty.reset_after) == (False, 1.0, 5.0)
    clock.advance(0.5)
    assert bucket.hit("u").retry_after == pytest.approx(0.5)
    clock.advance(0.5)
    assert bucket.hit("u").allowed
    clock.advance(2.5)
    state = bucket.peek("u", 0)
    assert (state.remaining, state.reset_after) == (2, 2.5)
    clock.advance(100)
    assert bucket.peek("u", 0).remaining == 5  # never above the burst


def test_gcra_matches_redis_cell_semantics(new_limiter: NewLimiter, clock: FakeClock) -> None:
    gcra = limiter(new_limiter, clock, Policy(10, 10, "gcra", burst=5))  # T = 1 s, tolerance 5 s
    first = gcra.hit("u")
    assert (first.remaining, first.reset_after) == (4, 1.0)
    assert gcra.hit("u", 4).remaining == 0
    denied = gcra.hit("u", 2)
    assert (denied.allowed, denied.remaining) == (False, 0)
    assert denied.retry_after == pytest.approx(2.0)
    assert denied.reset_after == pytest.approx(5.0)
    clock.advance(2)
    assert gcra.hit("u", 2).allowed
    assert not gcra.hit("u").allowed


@pytest.mark.parametrize("algorithm", ["token_bucket", "gcra"])
def test_bucket_algorithms_admit_the_same_hits(new_limiter: NewLimiter, algorithm: str) -> None:
    # rate 2**-20 tokens per microsecond: exact in binary, so both compute without rounding
    policy = Policy(4, 4 * 1.048576, algorithm, burst=3)  # type: ignore[arg-type]
    clock = FakeClock()
    decided = []
    steps = [(0, 3), (1, 1), (2**20 - 1, 1), (1, 1), (3 * 2**19, 2), (2**19, 2), (0, 1)]
    for advance_us, cost in steps:
        clock.advance(advance_us / 1e6)
        d = new_limiter(policy, prefix=algorithm, clock=clock).hit("u", cost)
        decided.append((d.allowed, d.remaining))
    assert decided == [
        (True, 0),
        (False, 0),
        (True, 0),  # exactly one token back after 2**20 us
        (False, 0),
        (False, 1),  # 1.5 tokens
        (True, 0),
        (False, 0),
    ]
