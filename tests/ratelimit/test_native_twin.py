"""The C decider against the procedure's Python reference (PEP 399), side by side.

``memory://`` binds a limiter's operation to one of two implementations: the C decider
(``RateDecider``, from the native registry's ``ratelimit`` factory) when the C engine is
loaded, else the Python reference (the operation's ``direct``: the algorithm's core of
``_memory.py`` with the decider's steps around it, under the backend's lock). Here both
are bound on the C engine (the reference by binding the same operation without its
native name), the reference in both its forms (``direct``, and ``encode`` then the
procedure's script-shaped twin and its decoder), and driven by the same random script of
hits, peeks, clock steps (forward, zero, backward, out of range), resets, flushes, foreign
values and bad arguments:

- ``paired``: two keyspaces, one decided by C, the other by the reference;
- ``mixed``: C and the reference take turns at random on one keyspace (they share the
  state's form, so either may follow the other), against a reference-only keyspace.

Every decision (compared by ``repr``, so ``1`` and ``1.0`` differ), every error (type
and text) and the whole live state after every step (cells' fields with their types,
deadlines) must be identical; each keyspace's expiry heap must reach every deadline.
Only housekeeping differs (both take the same share of the keyspace's active expiry,
but the backend's own step also runs with the reference), which changes which expired
keys are still stored, never what any command sees (before the clock steps back, which
would revive a stored expired key, both keyspaces drop theirs).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import pytest

from ranked.backends.generic import DELETE
from ranked.backends.memory import MemoryBackend
from ranked.backends.native import native_factory
from ranked.backends.procedure import Operation, Procedure
from ranked.engine.keyspace import Keyspace
from ranked.engine.zset import IMPLEMENTATION
from ranked.ratelimit import ALGORITHMS, Algorithm, Decision, Policy, RateLimiter
from ranked.ratelimit._memory import Cell
from ranked.ratelimit._plan import Plan

native = pytest.mark.skipif(IMPLEMENTATION != "c", reason="the C engine is not loaded")

Decide = Callable[[Any, Any, int], Decision]

CLOCKS = ["backend", "limiter", "int", "far"]
"""backend: the keyspace's float clock; limiter: the limiter's own float clock (the
keyspace's a little behind); int: a limiter clock returning ints; far: instants beyond
2**52 us (the C code hands those to the Python core), still within ranked.core.limits."""

MODES = ["paired", "mixed"]


class Clock:
    def __init__(self, now: float) -> None:
        self.now: Any = now
        self.reading: Any = None

    def __call__(self) -> Any:
        return self.now if self.reading is None else self.reading


REFERENCES = ["direct", "twin"]
"""The Python reference in its two forms: ``direct`` (the operation's step in call form,
what memory runs without the C engine) and ``twin`` (``encode``, the procedure's
script-shaped twin, its decoder)."""


def reference_of(operation: Operation[Decision], form: str = "direct") -> Operation[Decision]:
    """``operation`` without its native name: memory binds its Python reference, in
    ``form``."""
    procedure = operation.procedure
    plain = Procedure("ranked.ratelimit", procedure.name, procedure.local, procedure.decode)
    direct = operation.direct if form == "direct" else None
    return Operation(plain, operation.encode, operation.native_args, direct=direct)


def bind(backend: MemoryBackend, plan: Plan, c: bool, form: str = "direct") -> Decide:
    operation = plan.operation if c else reference_of(plan.operation, form)
    decide: Decide = backend.bind(operation)
    assert (type(decide).__name__ == "RateDecider") is c
    return decide


def _policies(algorithm: Algorithm) -> list[Policy]:
    burst = 4 if algorithm in ("token_bucket", "gcra") else None
    return [Policy(5, 1, algorithm), Policy(3, 0.25, algorithm, burst)]


def _live(backend: MemoryBackend) -> Any:
    """Every key a command would see, with its deadline and the type of every number."""
    ks = backend.keyspace
    now_ms = ks.now_ms()
    live: dict[bytes, Any] = {}
    for key, value in ks.raw_values.items():
        deadline = ks.raw_deadlines.get(key)
        if deadline is not None and now_ms > deadline:
            continue  # expired: gone for every command, collected sooner or later
        if isinstance(value, Cell):
            fields: dict[str, str] = {}
            names: tuple[str, ...] = type(value).__slots__
            for name in names:
                field = getattr(value, name, "<unset>")
                if not isinstance(field, int | float | str):
                    field = list(field)  # the log's deque
                fields[name] = repr(field)
            live[key] = (type(value).__name__, dict(value), fields, deadline)
        else:
            live[key] = (repr(value), deadline)
    return live


def _check_expiry(backend: MemoryBackend) -> None:
    """Active expiry reaches every deadline: the heap holds it, or holds an earlier entry
    of a key marked late (expire_pending then pushes the current one)."""
    raw = vars(backend.keyspace)
    heap, late = raw["_heap"], raw["_late"]
    earliest: dict[bytes, set[int]] = {}
    for when, key in heap:
        earliest.setdefault(key, set()).add(when)
    for key, deadline in raw["_deadlines"].items():
        entries = earliest.get(key, set())
        assert deadline in entries or (key in late and min(entries) < deadline), key


def _outcome(decide: Decide, identity: Any, cost: Any, consume: int) -> str:
    try:
        return repr(decide(identity, cost, consume))
    except Exception as error:  # the same error, with the same text
        return f"{type(error).__name__}: {error}"


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
BAD_READINGS: list[Any] = [1e13, -1.0, math.nan, 2**63, "soon"]


def _play(algorithm: Algorithm, kind: str, mode: str, seed: int, policy: Policy, form: str) -> None:
    rng = random.Random(seed)
    start: float = 4.6e9 if kind == "far" else 1_700_000_000.25
    if kind == "int":
        start = 1_700_000_000
    backend_clock, limiter_clock = Clock(start), Clock(start)
    limiter = None if kind == "backend" else limiter_clock
    backends = [MemoryBackend(clock=backend_clock) for _ in range(2)]
    plans = [Plan(policy, "rl", limiter) for _ in backends]
    c_side = [bind(backends[0], plans[0], True), bind(backends[0], plans[0], False, form)]
    reference = bind(backends[1], plans[1], False, form)
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
            if advance < 0:  # expired keys come back to life: let both hold the same ones
                for backend in backends:
                    backend.keyspace.expire_pending()
            limiter_clock.now += advance
            backend_clock.now = limiter_clock.now - (0.0004 if kind == "limiter" else 0)
        if roll > 0.985:
            for backend in backends:
                backend.keyspace.flush()
        elif roll > 0.97:
            gone = rng.choice(IDENTITIES[:4])
            for backend, plan in zip(backends, plans, strict=True):
                backend.bind(DELETE)(plan.keys(gone))
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
        if limiter is not None and rng.random() < 0.02:
            limiter_clock.reading = rng.choice(BAD_READINGS)
        decide = c_side[0] if mode == "paired" else rng.choice(c_side)
        outcomes = [_outcome(d, identity, cost, consume) for d in (decide, reference)]
        limiter_clock.reading = None
        context = f"step {step}: {identity!r} cost {cost!r} consume {consume}"
        assert outcomes[0] == outcomes[1], context
        assert _live(backends[0]) == _live(backends[1]), context
        for backend in backends:
            _check_expiry(backend)
    for backend in backends:
        backend.keyspace.expire_pending()
    assert backends[0].keyspace.raw_values.keys() == backends[1].keyspace.raw_values.keys()


@native
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("form", REFERENCES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", CLOCKS)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_c_decider_decides_and_stores_as_the_reference(
    algorithm: Algorithm, kind: str, mode: str, form: str, seed: int
) -> None:
    for policy in _policies(algorithm):
        _play(algorithm, kind, mode, seed, policy, form)


def test_the_decider_is_registered_under_the_procedures_native_name() -> None:
    from ranked.backends.native import _FACTORIES
    from ranked.ratelimit._procedures import NATIVE, limiter_procedure

    assert limiter_procedure(Policy(1, 1)).native == NATIVE
    assert _FACTORIES[NATIVE] == ("ratelimit", "factory")  # backends/native/ratelimit.py


def test_the_engine_decides_which_implementation_binds() -> None:
    """The C decider on the C engine, the Python reference with RANKED_PUREPYTHON=1."""
    limiter = RateLimiter(MemoryBackend(), Policy(5, 1))
    kind = type(limiter._decide).__name__
    assert kind == ("RateDecider" if IMPLEMENTATION == "c" else "function")
    assert (native_factory("ratelimit") is not None) is (IMPLEMENTATION == "c")


@native
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_limiter_calls_the_c_decider_on_the_c_engine(algorithm: Algorithm) -> None:
    backend = MemoryBackend()
    limiter = RateLimiter(backend, Policy(5, 1, algorithm))
    assert type(limiter._decide).__name__ == "RateDecider"
    decisions = [limiter.hit("u") for _ in range(6)]  # the system clock: time_ns
    assert [d.allowed for d in decisions] == [True] * 5 + [False]
    assert [d.remaining for d in decisions] == [4, 3, 2, 1, 0, 0]
    assert decisions[-1].retry_after is not None and decisions[-1].retry_after > 0
    assert len(backend.keyspace) == 1


@native
def test_the_factory_declines_what_the_c_code_does_not_take() -> None:
    """Policies with numbers of 2**52 or more, and keyspaces other than a plain
    Keyspace (the decider reads its tables): the reference decides those."""
    from ranked.backends.native.ratelimit import factory

    backend = MemoryBackend()
    huge = Plan(Policy(2**53, 1, "fixed_window"), "rl", None)
    assert factory(backend.keyspace, backend.lock, huge.operation) is None
    limiter = RateLimiter(backend, huge.policy)
    assert type(limiter._decide).__name__ != "RateDecider"  # the reference decides
    assert limiter.hit("u", 2**52).remaining == 2**52

    class Watched(Keyspace):
        pass

    plain = Plan(Policy(5, 1), "rl", None)
    assert factory(Watched(), backend.lock, plain.operation) is None
    assert factory(Keyspace(), backend.lock, plain.operation) is not None


@native
def test_housekeeping_runs_every_eighth_decision_on_the_c_decider() -> None:
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
