"""Every algorithm gives the same decisions on memory, redis and cluster, through both APIs,
at the same instants, and keeps its keys bounded (TTL on every key, one hash slot per
identity)."""

from __future__ import annotations

import pytest
from redis.crc import key_slot

from ranked.backends.memory import MemoryBackend
from ranked.backends.procedure import Operation
from ranked.errors import ResponseError
from ranked.ratelimit import ALGORITHMS, Algorithm, Decision, Policy, RateLimiter
from ranked.ratelimit._procedures import limiter_procedure, policy_args
from ranked.ratelimit.keys import KeyLayout

from .conftest import Api, Env, FakeClock, Limiter, NewLimiter

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


def play(limiter: Limiter, clock: FakeClock) -> list[Decision]:
    decisions = []
    for advance, cost, mode in SCENARIO:
        clock.advance(advance)
        decide = limiter.hit if mode == "hit" else limiter.peek
        decisions.append(decide("user:42", cost))
    return decisions


def expected(algorithm: Algorithm) -> list[Decision]:
    """The scenario's decisions by the blocking limiter on a fresh memory backend."""
    clock = FakeClock()
    return play(RateLimiter(MemoryBackend(), policy(algorithm), clock=clock), clock)


def policy(algorithm: Algorithm) -> Policy:
    burst = 7 if algorithm in ("token_bucket", "gcra") else None
    return Policy(6, 10, algorithm, burst=burst, name="api")


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_backend_decides_as_the_memory_twin(
    new_limiter: NewLimiter, algorithm: Algorithm
) -> None:
    clock = FakeClock()
    actual = play(new_limiter(policy(algorithm), clock=clock), clock)
    assert actual == expected(algorithm)
    assert any(not d.allowed for d in actual) and any(d.allowed for d in actual)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_key_has_a_ttl_within_its_horizon(
    env: Env, new_limiter: NewLimiter, algorithm: Algorithm
) -> None:
    limiter = new_limiter(policy(algorithm))
    limiter.hit("user:42", 3)
    keys = env.keys()
    expected = KeyLayout("rl", limiter.policy).keys(b"user:42")
    if env.kind == "memory":  # memory keeps the sliding log's total in the log's own cell
        expected = expected[:1]
    assert keys == set(expected)
    horizon_ms = 2 * 10_000  # the sliding counter keeps two windows; others at most one
    for key in keys:
        assert 0 < env.pttl(key) <= horizon_ms


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_peek_and_denied_hits_write_nothing(
    env: Env, new_limiter: NewLimiter, algorithm: Algorithm
) -> None:
    limiter = new_limiter(policy(algorithm), clock=FakeClock())
    assert limiter.peek("fresh", 2).allowed
    assert limiter.hit("fresh", 0).allowed
    assert env.keys() == set()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_reset_forgets_the_identity(
    env: Env, new_limiter: NewLimiter, algorithm: Algorithm
) -> None:
    limiter = new_limiter(policy(algorithm), clock=FakeClock())
    while limiter.hit("user:42", 2).allowed:
        pass
    limiter.hit("other", 1)
    limiter.reset("user:42")
    fresh = limiter.peek("user:42", 0)
    assert fresh.remaining == limiter.policy.capacity
    assert fresh.reset_after == 0.0
    assert env.keys() <= set(KeyLayout("rl", limiter.policy).keys(b"other"))
    assert env.keys()


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
def test_identity_with_braces_runs_on_every_backend(
    new_limiter: NewLimiter, algorithm: Algorithm
) -> None:
    limiter = new_limiter(policy(algorithm), clock=FakeClock())
    assert limiter.hit(b"{weird}}:log", 2).remaining == limiter.policy.capacity - 2


def test_memory_keys_vanish_after_the_window(api: Api) -> None:
    clock = FakeClock()
    backend = MemoryBackend(clock=clock)
    for algorithm in ALGORITHMS:
        api.limiter(backend, policy(algorithm)).hit("u", 3)  # the backend's (fake) clock
    assert len(backend.keyspace) == 5  # one key per algorithm (on Redis the log has two)
    clock.advance(10.001)  # every algorithm's state has drained but the counter's
    assert len(backend.keyspace) == 1
    clock.advance(10)
    assert len(backend.keyspace) == 0


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_memory_stays_bounded_when_every_hit_is_a_new_identity(
    api: Api, algorithm: Algorithm
) -> None:
    """Keys of identities never seen again are collected by the decisions themselves
    (C decider and Python reference alike), not only when read again."""
    clock = FakeClock()
    backend = MemoryBackend(clock=clock)
    limiter = api.limiter(backend, Policy(5, 0.1, algorithm))
    for n in range(4000):
        limiter.hit(f"ip{n}")
        clock.advance(0.001)  # each key lives at most 0.2 s: at most ~200 live at once
    assert len(backend.keyspace.raw_values) < 400


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_procedure_run_by_hand_decides_as_the_limiter(algorithm: Algorithm) -> None:
    """The procedure bound as ``Operation.raw`` (its Python reference: the script's
    arguments in, a script-shaped reply out, decoded) gives the limiter's decisions from
    the same state."""
    limit = policy(algorithm)
    procedure = limiter_procedure(limit)
    keys = KeyLayout("rl", limit).keys(b"user:42")
    backend = MemoryBackend()
    clock = FakeClock()
    actual = []
    for advance, cost, mode in SCENARIO:
        clock.advance(advance)
        args = (cost, 1 if mode == "hit" else 0, *policy_args(limit))
        actual.append(
            backend.bind(Operation.raw(procedure))(keys, args, round(clock.now * 1_000_000))
        )
    assert actual == expected(algorithm)


def test_a_foreign_value_at_a_limiter_key_is_a_wrongtype_error(api: Api) -> None:
    backend = MemoryBackend()
    limiter = api.limiter(backend, policy("gcra"))
    with backend.lock:
        backend.keyspace.execute("SET", KeyLayout("rl", limiter.policy).keys(b"u")[0], "x")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        limiter.hit("u")


def test_memory_state_is_an_ordinary_key_to_redis_commands(api: Api) -> None:
    backend = MemoryBackend()
    limiter = api.limiter(backend, policy("sliding_log"))
    limiter.hit("u", 2)
    key = KeyLayout("rl", limiter.policy).keys(b"u")[0]
    keyspace = backend.keyspace
    assert keyspace.execute("TYPE", key) == b"hash"
    assert keyspace.execute("HGETALL", key) == [b"ranked", b"sliding_log state"]
    assert 0 < int(keyspace.execute("PTTL", key)) <= 10_000  # type: ignore[arg-type]
    assert keyspace.execute("DEL", key) == 1
    assert limiter.peek("u", 0).remaining == 6
