"""@rate_limited on sync and async functions, on a memory backend with a fake clock."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import pytest

from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.core.limits import MAX_DURATION_S
from ranked.errors import OutOfRangeError, RankedError
from ranked.ratelimit import AsyncRateLimiter, Policy, RateLimiter
from ranked.ratelimit.decorator import RateLimited, rate_limited
from ranked.ratelimit.policy import RateLimitConfigError

T0 = 1_700_000_000.0
TWO_PER_10S = Policy(2, 10, "sliding_log", name="calls")


class FakeClock:
    def __init__(self) -> None:
        self.now = T0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def memory(clock: FakeClock) -> Iterator[MemoryBackend]:
    backend = MemoryBackend(clock=clock)
    yield backend
    backend.close()


@pytest.fixture
def limiter(memory: MemoryBackend) -> RateLimiter:
    return RateLimiter(memory, TWO_PER_10S)


def test_sync_function_raises_rate_limited_when_denied(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    calls: list[int] = []

    @rate_limited(limiter)
    def work(value: int) -> int:
        calls.append(value)
        return value * 2

    assert work(1) == 2
    clock.now += 4
    assert work(2) == 4
    with pytest.raises(RateLimited) as raised:
        work(3)
    assert calls == [1, 2]
    error = raised.value
    assert isinstance(error, RankedError)
    assert error.decision.allowed is False
    assert error.decision.policy is TWO_PER_10S
    assert error.retry_after == pytest.approx(6.0)
    assert error.headers == [
        ("RateLimit-Policy", '"calls";q=2;w=10'),
        ("RateLimit", '"calls";r=0;t=6'),
        ("X-RateLimit-Limit", "2"),
        ("X-RateLimit-Remaining", "0"),
        ("X-RateLimit-Reset", "10"),
        ("Retry-After", "6"),
    ]
    assert "calls" in str(error)
    clock.now += 6
    assert work(4) == 8
    assert work.__name__ == "work"


def test_key_and_cost_come_from_the_arguments(limiter: RateLimiter) -> None:
    @rate_limited(limiter, key=lambda user, size: f"user:{user}", cost=lambda user, size: size)
    def upload(user: str, size: int) -> str:
        return f"{user}:{size}"

    assert upload("ann", 2) == "ann:2"
    with pytest.raises(RateLimited):
        upload("ann", 1)
    assert upload("bob", 1) == "bob:1"
    assert limiter.peek("user:bob", 0).remaining == 1
    with pytest.raises(RateLimitConfigError):
        upload("cat", 3)  # can never pass: an error, not a denial
    assert limiter.peek("user:cat", 0).remaining == 2


def test_default_key_is_one_quota_per_function(limiter: RateLimiter) -> None:
    @rate_limited(limiter)
    def first() -> None:
        pass

    @rate_limited(limiter)
    def second() -> None:
        pass

    first()
    first()
    second()
    with pytest.raises(RateLimited):
        first()


def test_wait_sleeps_retry_after_then_passes(limiter: RateLimiter, clock: FakeClock) -> None:
    @rate_limited(limiter, wait=True, max_wait=30, sleep=clock.sleep)
    def work() -> str:
        return "done"

    assert [work() for _ in range(2)] == ["done", "done"]
    assert work() == "done"
    assert clock.sleeps == [pytest.approx(10.0)]


def test_wait_gives_up_without_sleeping_past_max_wait(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    @rate_limited(limiter, wait=True, max_wait=5, sleep=clock.sleep)
    def work() -> None:
        pass

    work()
    work()
    with pytest.raises(RateLimited):
        work()
    assert clock.sleeps == []


def test_async_function_with_async_limiter(memory: MemoryBackend, clock: FakeClock) -> None:
    limiter = AsyncRateLimiter(AsyncMemoryBackend(sync=memory), TWO_PER_10S)

    @rate_limited(limiter, key=lambda user: user)
    async def work(user: str) -> str:
        await asyncio.sleep(0)
        return user.upper()

    async def scenario() -> list[str]:
        results = [await work("a"), await work("a")]
        with pytest.raises(RateLimited) as raised:
            await work("a")
        assert raised.value.retry_after == pytest.approx(10.0)
        results.append(await work("b"))
        return results

    assert asyncio.run(scenario()) == ["A", "A", "B"]


def test_async_function_with_sync_limiter_and_waiting(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    @rate_limited(limiter, wait=True, sleep=clock.asleep)
    async def work() -> int:
        return 7

    async def scenario() -> list[int]:
        return [await work() for _ in range(3)]

    assert asyncio.run(scenario()) == [7, 7, 7]
    assert clock.sleeps == [pytest.approx(10.0)]


def test_several_limiters_stop_at_the_first_denial(memory: MemoryBackend) -> None:
    tight = RateLimiter(memory, Policy(1, 10, "fixed_window", name="tight"))
    loose = RateLimiter(memory, Policy(100, 3600, "gcra", name="loose"))

    @rate_limited([tight, loose], key=lambda: "k")
    def work() -> None:
        pass

    work()
    with pytest.raises(RateLimited) as raised:
        work()
    assert [d.policy.name for d in raised.value.decisions] == ["tight"]
    assert dict(raised.value.headers)["RateLimit-Policy"] == (
        '"tight";q=1;w=10, "loose";q=100;w=3600'
    )
    assert loose.peek("k", 0).remaining == 99


def test_misuse_is_refused_at_decoration(memory: MemoryBackend, limiter: RateLimiter) -> None:
    async_limiter = AsyncRateLimiter(AsyncMemoryBackend(sync=memory), TWO_PER_10S)

    def plain() -> None:
        pass

    with pytest.raises(TypeError, match="not async"):
        rate_limited(async_limiter)(plain)
    with pytest.raises(RateLimitConfigError):
        rate_limited([])
    with pytest.raises(RateLimitConfigError):
        rate_limited(limiter, max_wait=-1)
    with pytest.raises(RateLimitConfigError, match="two policies"):
        rate_limited([limiter, RateLimiter(memory, TWO_PER_10S)])


@pytest.mark.parametrize("max_wait", [MAX_DURATION_S + 1, 1e13, math.inf, math.nan, "30"])
def test_a_max_wait_past_the_longest_duration_is_refused(
    limiter: RateLimiter, max_wait: Any
) -> None:
    with pytest.raises(OutOfRangeError, match="max_wait"):
        rate_limited(limiter, max_wait=max_wait)
    rate_limited(limiter, max_wait=MAX_DURATION_S)  # the longest is taken
