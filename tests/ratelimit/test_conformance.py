"""Every algorithm gives the same decisions on memory, redis and cluster, at the same
instants, and keeps its keys bounded (TTL on every key, one hash slot per identity)."""

from __future__ import annotations

import pytest
from redis.crc import key_slot

from ranked.backends.memory import MemoryBackend
from ranked.ratelimit import ALGORITHMS, Algorithm, Decision, Policy, RateLimiter
from ranked.ratelimit.keys import KeyLayout

from .conftest import Env, FakeClock

# (seconds to advance, cost, hit or peek): bursts, waits of odd lengths, peeks, costs
SCENARIO: list[tuple[float, int, str]] = [
    (0, 1, "hit"),
    (0, 2, "hit"),
    (0.000001, 3, "hit"),
    (0.25, 1, "peek"),
    (0.5, 4, "hit"),
    (1.3, 2, "hit"),
    (0, 0, "hit"),
    (2.7, 5, "hit"),
    (0.1, 5, "peek"),
    (3.999999, 1, "hit"),
    (4.5, 3, "hit"),
    (0, 2, "hit"),
    (9.75, 1, "hit"),
    (10.0, 5, "hit"),
    (0.000003, 5, "hit"),
    (25.0, 1, "peek"),
]


def play(limiter: RateLimiter, clock: FakeClock) -> list[Decision]:
    decisions = []
    for advance, cost, mode in SCENARIO:
        clock.advance(advance)
        decide = limiter.hit if mode == "hit" else limiter.peek
        decisions.append(decide("user:42", cost))
    return decisions


def policy(algorithm: Algorithm) -> Policy:
    burst = 7 if algorithm in ("token_bucket", "gcra") else None
    return Policy(6, 10, algorithm, burst=burst, name="api")


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_backend_decides_as_the_memory_twin(env: Env, algorithm: Algorithm) -> None:
    expected = play(RateLimiter(MemoryBackend(), policy(algorithm), clock=FakeClock()), FakeClock())
    actual = play(RateLimiter(env.backend, policy(algorithm), clock=FakeClock()), FakeClock())
    assert actual == expected
    assert any(not d.allowed for d in actual) and any(d.allowed for d in actual)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_key_has_a_ttl_within_its_horizon(env: Env, algorithm: Algorithm) -> None:
    limiter = RateLimiter(env.backend, policy(algorithm))
    limiter.hit("user:42", 3)
    keys = env.keys()
    assert keys == set(KeyLayout("rl", limiter.policy).keys(b"user:42"))
    horizon_ms = 2 * 10_000  # the sliding counter keeps two windows; others at most one
    for key in keys:
        assert 0 < env.pttl(key) <= horizon_ms


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_peek_and_denied_hits_write_nothing(env: Env, algorithm: Algorithm) -> None:
    limiter = RateLimiter(env.backend, policy(algorithm), clock=FakeClock())
    assert limiter.peek("fresh", 2).allowed
    assert limiter.hit("fresh", 0).allowed
    assert env.keys() == set()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_reset_forgets_the_identity(env: Env, algorithm: Algorithm) -> None:
    limiter = RateLimiter(env.backend, policy(algorithm), clock=FakeClock())
    while limiter.hit("user:42", 2).allowed:
        pass
    limiter.hit("other", 1)
    limiter.reset("user:42")
    fresh = limiter.peek("user:42", 0)
    assert fresh.remaining == limiter.policy.capacity
    assert fresh.reset_after == 0.0
    assert len(env.keys()) == len(KeyLayout("rl", limiter.policy).keys(b"other"))


@pytest.mark.parametrize("identity", [b"user:42", b"a}b", b"{x}", b"}", b"", "\u00e9l\u00e8ve"])
def test_keys_of_one_identity_share_one_slot(identity: bytes | str) -> None:
    raw = identity.encode() if isinstance(identity, str) else identity
    for name in ("default", "per:minute", "{odd}"):
        keys = KeyLayout("rl", Policy(5, 1, "sliding_log", name=name)).keys(raw)
        assert len({key_slot(key) for key in keys}) == 1


def test_identities_spread_over_slots() -> None:
    layout = KeyLayout("rl", Policy(5, 1, "gcra"))
    slots = {key_slot(layout.keys(f"user:{n}".encode())[0]) for n in range(200)}
    assert len(slots) > 150


def test_names_and_identities_never_collide() -> None:
    one = KeyLayout("rl", Policy(5, 1, name="a:b")).keys(b"c")
    two = KeyLayout("rl", Policy(5, 1, name="a")).keys(b"b:c")
    assert not set(one) & set(two)
    log, units = KeyLayout("rl", Policy(5, 1)).keys(b"x}:units")
    assert KeyLayout("rl", Policy(5, 1)).keys(b"x")[1] not in (log, units)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_identity_with_braces_runs_on_every_backend(env: Env, algorithm: Algorithm) -> None:
    limiter = RateLimiter(env.backend, policy(algorithm), clock=FakeClock())
    assert limiter.hit(b"{weird}}:log", 2).remaining == limiter.policy.capacity - 2


def test_memory_keys_vanish_after_the_window() -> None:
    clock = FakeClock()
    backend = MemoryBackend(clock=clock)
    for algorithm in ALGORITHMS:
        RateLimiter(backend, policy(algorithm)).hit("u", 3)  # the backend's (fake) clock
    assert len(backend.keyspace) == 6
    clock.advance(10.001)  # every algorithm's state has drained but the counter's
    assert len(backend.keyspace) == 1
    clock.advance(10)
    assert len(backend.keyspace) == 0
