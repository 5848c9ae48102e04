"""The sliding log is exact: a brute-force model of the window agrees on every decision."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ranked.backends.memory import MemoryBackend
from ranked.ratelimit import Policy, RateLimiter

from .conftest import FakeClock

LIMIT = 7
WINDOW_US = 1_000_000

steps = st.lists(
    st.tuples(st.integers(0, 400_000), st.integers(0, LIMIT), st.booleans()),
    min_size=1,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(steps)
def test_sliding_log_matches_the_brute_force_model(hits: list[tuple[int, int, bool]]) -> None:
    clock = FakeClock()
    limiter = RateLimiter(MemoryBackend(), Policy(LIMIT, WINDOW_US / 1e6), clock=clock)
    now = 0
    admitted: list[tuple[int, int]] = []  # (instant us, cost)
    for advance, cost, peek in hits:
        now += advance
        clock.now = 1_700_000_000 + now / 1e6
        live = [(t, c) for t, c in admitted if t > now - WINDOW_US]
        in_window = sum(c for _, c in live)
        fits = in_window + cost <= LIMIT
        decision = (limiter.peek if peek else limiter.hit)("u", cost)
        assert decision.allowed == fits
        assert decision.remaining == LIMIT - in_window - (cost if fits else 0)
        if not fits:  # the first instant at which enough of the oldest units have left
            need, retry = in_window + cost - LIMIT, None
            for t, c in sorted(live):
                need -= c
                if need <= 0:
                    retry = t + WINDOW_US - now
                    break
            assert decision.retry_after is not None and retry is not None
            assert round(decision.retry_after * 1e6) == retry
        elif not peek and cost:
            admitted.append((now, cost))
        # never more than LIMIT units in any window of length WINDOW_US
        assert sum(c for t, c in admitted if t > now - WINDOW_US) <= LIMIT
