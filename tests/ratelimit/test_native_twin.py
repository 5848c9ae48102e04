"""The C memory path (``_native.RateDecider``) against the Python path, side by side.

Two memory backends get the same random script of hits, peeks, clock steps (forward,
zero, backward), resets, flushes, foreign values and bad arguments; one decides through
the C decider, the other through the Python closure of ``limiter._memory_path``. Every
decision (compared by ``repr``, so ``1`` and ``1.0`` differ), every error (type and
text) and the whole stored state after every step (cells' fields with their types,
deadlines, the expiry heap, the late set) must be identical.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from ranked.backends.memory import MemoryBackend
from ranked.engine.zset import IMPLEMENTATION
from ranked.ratelimit import ALGORITHMS, Algorithm, Policy, RateLimiter
from ranked.ratelimit._memory import CORES, Cell
from ranked.ratelimit._native import native_decider
from ranked.ratelimit.limiter import Decide, _memory_path, _Plan

pytestmark = pytest.mark.skipif(IMPLEMENTATION != "c", reason="the C engine is not loaded")

CLOCKS = ["backend", "limiter", "int", "far"]
"""backend: the keyspace's float clock; limiter: the limiter's own float clock (the
keyspace's a little behind); int: a limiter clock returning ints; far: an instant beyond
2**52 us (the C code hands those to the Python core)."""


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _policies(algorithm: Algorithm) -> list[Policy]:
    burst = 4 if algorithm in ("token_bucket", "gcra") else None
    return [Policy(5, 1, algorithm), Policy(3, 0.25, algorithm, burst)]


def _state(backend: MemoryBackend) -> Any:
    """Everything the keyspace holds, with the type of every number."""
    ks = backend.keyspace
    values: dict[bytes, Any] = {}
    for key, value in ks.raw_values.items():
        if isinstance(value, Cell):
            fields: dict[str, str] = {}
            names: tuple[str, ...] = type(value).__slots__
            for name in names:
                field = getattr(value, name, "<unset>")
                if not isinstance(field, int | float | str):
                    field = list(field)  # the log's deque
                fields[name] = repr(field)
            values[key] = (type(value).__name__, dict(value), fields)
        else:
            values[key] = repr(value)
    raw = vars(ks)
    return values, dict(ks.raw_deadlines), list(raw["_heap"]), set(raw["_late"])


def _outcome(decide: Decide, identity: Any, cost: Any, consume: int) -> str:
    try:
        return repr(decide(identity, cost, consume))
    except Exception as error:  # the same error, with the same text
        return f"{type(error).__name__}: {error}"


def _pair(
    policy: Policy, kind: str, start: float
) -> tuple[list[MemoryBackend], list[Decide], list[_Plan], Clock, Clock]:
    backend_clock, limiter_clock = Clock(start), Clock(start)
    backends, deciders, plans = [], [], []
    for native in (True, False):
        backend = MemoryBackend(clock=backend_clock)
        plan = _Plan(policy, "rl", None if kind == "backend" else limiter_clock)
        decide = _memory_path(plan, backend, native=native)
        assert (type(decide).__name__ == "RateDecider") is native
        backends.append(backend)
        deciders.append(decide)
        plans.append(plan)
    return backends, deciders, plans, backend_clock, limiter_clock


IDENTITIES: list[Any] = ["a", "b", b"c", "d", "a" * 40]
COSTS: list[Any] = [0, 1, 1, 1, 2, 3, 5]
BAD: list[tuple[Any, Any]] = [
    ("a", 6),
    ("a", -1),
    ("a", True),
    ("a", 1.0),
    ("a", 2**70),
    (5, 1),
    ([1], 1),
    (b"\xff}", 0),
]


def _play(algorithm: Algorithm, kind: str, seed: int, policy: Policy) -> None:
    rng = random.Random(seed)
    start: float = 4e12 if kind == "far" else 1_700_000_000.25
    if kind == "int":
        start = 1_700_000_000
    backends, deciders, plans, backend_clock, limiter_clock = _pair(policy, kind, start)
    window = policy.window
    for step in range(400):
        roll = rng.random()
        if roll < 0.5:
            if kind == "int":
                advance: float = rng.choice([0, 0, 1, 2])
            else:
                advance = rng.choice([0.0, 1e-6, 0.001, 0.0305, 0.2, window, window * 1.7])
                if rng.random() < 0.05:
                    advance = -rng.choice([1e-6, 0.01, window / 2])  # the clock steps back
            limiter_clock.now += advance
            backend_clock.now = limiter_clock.now - (0.0004 if kind == "limiter" else 0)
        if roll > 0.985:
            for backend in backends:
                backend.keyspace.flush()
        elif roll > 0.97:
            gone = rng.choice(IDENTITIES[:4])
            for backend, plan in zip(backends, plans, strict=True):
                backend.delete(plan.keys(gone))
        elif roll > 0.955:
            for backend, plan in zip(backends, plans, strict=True):
                backend.keyspace.execute("SET", plan.keys("d")[0], "foreign")
        elif roll > 0.94:
            for backend in backends:
                backend.keyspace.expire_pending()
        if rng.random() < 0.03:
            identity, cost = rng.choice(BAD)
        else:
            identity, cost = rng.choice(IDENTITIES), rng.choice(COSTS)
            cost = min(cost, policy.capacity)
        consume = rng.choice((0, 1, 1, 1))
        outcomes = [_outcome(decide, identity, cost, consume) for decide in deciders]
        context = f"step {step}: {identity!r} cost {cost!r} consume {consume}"
        assert outcomes[0] == outcomes[1], context
        assert _state(backends[0]) == _state(backends[1]), context


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", CLOCKS)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_c_path_decides_and_stores_as_the_python_path(
    algorithm: Algorithm, kind: str, seed: int
) -> None:
    for policy in _policies(algorithm):
        _play(algorithm, kind, seed, policy)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_limiter_takes_the_c_path_on_the_c_engine(algorithm: Algorithm) -> None:
    backend = MemoryBackend()
    limiter = RateLimiter(backend, Policy(5, 1, algorithm))
    assert type(limiter._memory).__name__ == "RateDecider"
    decisions = [limiter.hit("u") for _ in range(6)]  # the system clock: time_ns
    assert [d.allowed for d in decisions] == [True] * 5 + [False]
    assert [d.remaining for d in decisions] == [4, 3, 2, 1, 0, 0]
    assert decisions[-1].retry_after is not None and decisions[-1].retry_after > 0
    assert len(backend.keyspace) == 1


def test_policies_beyond_the_c_range_take_the_python_path() -> None:
    backend = MemoryBackend()
    huge = Policy(2**53, 1, "fixed_window")
    plan = _Plan(huge, "rl", None)
    core = CORES["fixed_window"](huge)
    assert native_decider(huge, backend, core, {}, plan.keys, plan.args, None) is None
    limiter = RateLimiter(backend, huge)
    assert limiter._memory is not None and type(limiter._memory).__name__ == "function"
    assert limiter.hit("u", 2**52).remaining == 2**52


def test_housekeeping_runs_every_eighth_decision_on_the_c_path() -> None:
    clock = Clock(1_700_000_000.0)
    backend = MemoryBackend(clock=clock)
    limiter = RateLimiter(backend, Policy(5, 1, "gcra"))
    for n in range(24):  # decisions 1-24
        limiter.hit(f"gone{n}")
    clock.now += 5  # every key expired, none touched again
    for _ in range(7):  # decisions 25-31
        limiter.peek("other", 0)
    assert len(backend.keyspace.raw_values) == 24
    limiter.peek("other", 0)  # the 32nd: up to 16 expired keys go
    assert len(backend.keyspace.raw_values) == 8
