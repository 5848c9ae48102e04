"""Hypothesis drives the C engine and the pure-Python twin with the same operations.

Every result must be identical (members, scores, the sign of zero, exception types),
except random picks, which are checked against the contract instead. Both structures
run ``_check()`` after every step. Needs the C engine: without it this test fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from .conftest import Impl, load_implementation

MEMBERS = st.sampled_from([b"", b"a", b"b", b"ab", b"b\x00", b"c", b"\xff", b"zz", b"m1", b"m2"])
NICE_SCORES = st.sampled_from([-2.0, -0.0, 0.0, 0.5, 1.0, 3.0, math.inf, -math.inf])
SCORES = st.one_of(NICE_SCORES, NICE_SCORES, st.floats(allow_nan=False, width=64))
MAYBE_NAN = st.one_of(SCORES, st.just(math.nan))
BOUND = st.one_of(st.none(), MEMBERS)
FLAGS = st.fixed_dictionaries(
    {},
    optional={
        "nx": st.booleans(),
        "xx": st.booleans(),
        "gt": st.booleans(),
        "lt": st.booleans(),
    },
)
SMALL = st.integers(min_value=-8, max_value=8)
PAIRS = st.lists(st.tuples(MEMBERS, SCORES), max_size=8)


def normalise(value: object) -> object:
    """Make results comparable: floats keep the sign of zero, containers recurse."""
    if isinstance(value, float):
        return ("float", value, math.copysign(1.0, value))
    if isinstance(value, list | tuple):
        return [normalise(item) for item in value]
    return value


class SameBehaviour(RuleBasedStateMachine):
    def __init__(self, c_class: Impl, py_class: Impl) -> None:
        super().__init__()
        self.c_class = c_class
        self.py_class = py_class
        self.c: Any = c_class(raw=True)
        self.py: Any = py_class(raw=True)

    def both(self, call: Callable[[Any], object]) -> object:
        """Run ``call`` on both sets; results or exception types must match."""
        outcomes = []
        for zset in (self.c, self.py):
            try:
                outcomes.append(("ok", normalise(call(zset))))
            except Exception as error:
                outcomes.append(("raised", type(error).__name__))
        assert outcomes[0] == outcomes[1], f"C {outcomes[0]!r} != Python {outcomes[1]!r}"
        return outcomes[0][1]

    def single_score(self) -> bool:
        return len({score for _, score in self.py.items()}) <= 1

    # -- setup and writes ----------------------------------------------------------------

    @initialize(pairs=PAIRS, ordered=st.booleans())
    def start(self, pairs: list[tuple[bytes, float]], ordered: bool) -> None:
        if ordered:  # exercise the O(n) bulk build
            pairs = sorted(dict(pairs).items(), key=lambda pair: (pair[1], pair[0]))
        self.both(lambda z: z.load(pairs))

    @rule(member=MEMBERS, score=MAYBE_NAN, flags=FLAGS, ch=st.booleans())
    def add(self, member: bytes, score: float, flags: dict[str, bool], ch: bool) -> None:
        self.both(lambda z: z.add(member, score, ch=ch, **flags))

    @rule(pairs=st.lists(st.tuples(MEMBERS, MAYBE_NAN), max_size=6), flags=FLAGS)
    def add_many(self, pairs: list[tuple[bytes, float]], flags: dict[str, bool]) -> None:
        self.both(lambda z: z.add_many(pairs, ch=True, **flags))

    @rule(member=MEMBERS, amount=MAYBE_NAN, flags=FLAGS)
    def incr(self, member: bytes, amount: float, flags: dict[str, bool]) -> None:
        self.both(lambda z: z.incr(member, amount, **flags))

    @rule(members=st.lists(MEMBERS, max_size=3))
    def remove(self, members: list[bytes]) -> None:
        self.both(lambda z: z.remove(*members))

    @rule(pairs=PAIRS)
    def load(self, pairs: list[tuple[bytes, float]]) -> None:
        self.both(lambda z: z.load(pairs))

    @rule(count=st.integers(min_value=-1, max_value=3), high=st.booleans())
    def pop(self, count: int, high: bool) -> None:
        self.both(lambda z: z.pop_max(count) if high else z.pop_min(count))

    @rule(start=SMALL, stop=SMALL)
    def remove_range_by_index(self, start: int, stop: int) -> None:
        self.both(lambda z: z.remove_range_by_index(start, stop))

    @rule(low=MAYBE_NAN, high=SCORES, lx=st.booleans(), hx=st.booleans())
    def remove_range_by_score(self, low: float, high: float, lx: bool, hx: bool) -> None:
        self.both(lambda z: z.remove_range_by_score(low, high, min_exclusive=lx, max_exclusive=hx))

    @precondition(lambda self: self.single_score())
    @rule(low=BOUND, high=BOUND, lx=st.booleans(), hx=st.booleans())
    def remove_range_by_lex(
        self, low: bytes | None, high: bytes | None, lx: bool, hx: bool
    ) -> None:
        self.both(lambda z: z.remove_range_by_lex(low, high, min_exclusive=lx, max_exclusive=hx))

    @rule(score=NICE_SCORES)
    def flatten(self, score: float) -> None:
        """Move every member to one score, so lex ranges become meaningful."""
        members = [member for member, _ in self.py.items()]
        self.both(lambda z: [z.add(member, score, ch=True) for member in members])

    @rule()
    def clear(self) -> None:
        self.both(lambda z: z.clear())

    # -- reads -----------------------------------------------------------------------------

    @rule(member=MEMBERS, reverse=st.booleans())
    def ranks(self, member: bytes, reverse: bool) -> None:
        self.both(lambda z: z.score(member))
        self.both(lambda z: z.index(member, reverse=reverse))
        for style in ("unique", "competition", "dense", "bogus"):

            def rank(z: Any, style: str = style) -> object:
                return z.rank(member, style=style, reverse=reverse)

            self.both(rank)

    @rule(index=st.integers(min_value=-12, max_value=12))
    def at(self, index: int) -> None:
        self.both(lambda z: z.at(index))

    @rule(start=SMALL, stop=SMALL, reverse=st.booleans())
    def range_by_index(self, start: int, stop: int, reverse: bool) -> None:
        self.both(lambda z: z.range_by_index(start, stop, reverse=reverse))

    @rule(
        low=MAYBE_NAN,
        high=SCORES,
        lx=st.booleans(),
        hx=st.booleans(),
        reverse=st.booleans(),
        offset=st.integers(min_value=-2, max_value=5),
        count=st.integers(min_value=-2, max_value=5),
    )
    def range_by_score(
        self, low: float, high: float, lx: bool, hx: bool, reverse: bool, offset: int, count: int
    ) -> None:
        self.both(
            lambda z: z.range_by_score(
                low,
                high,
                min_exclusive=lx,
                max_exclusive=hx,
                reverse=reverse,
                offset=offset,
                count=count,
            )
        )
        self.both(lambda z: z.count_by_score(low, high, min_exclusive=lx, max_exclusive=hx))

    @precondition(lambda self: self.single_score())
    @rule(
        low=BOUND,
        high=BOUND,
        lx=st.booleans(),
        hx=st.booleans(),
        reverse=st.booleans(),
        offset=st.integers(min_value=-1, max_value=4),
        count=st.integers(min_value=-1, max_value=4),
    )
    def range_by_lex(
        self,
        low: bytes | None,
        high: bytes | None,
        lx: bool,
        hx: bool,
        reverse: bool,
        offset: int,
        count: int,
    ) -> None:
        self.both(
            lambda z: z.range_by_lex(
                low,
                high,
                min_exclusive=lx,
                max_exclusive=hx,
                reverse=reverse,
                offset=offset,
                count=count,
            )
        )
        self.both(lambda z: z.count_by_lex(low, high, min_exclusive=lx, max_exclusive=hx))

    @rule(score=SCORES, member=MEMBERS, count=st.integers(-1, 4), reverse=st.booleans())
    def items_after(self, score: float, member: bytes, count: int, reverse: bool) -> None:
        self.both(lambda z: z.items_after(score, member, count, reverse=reverse))
        self.both(lambda z: list(z.items(after=(score, member), reverse=reverse)))

    @rule(
        sizes=st.lists(PAIRS, min_size=0, max_size=2),
        weights=st.one_of(st.none(), st.lists(SCORES, min_size=1, max_size=3)),
        aggregate=st.sampled_from(["sum", "min", "max", "avg"]),
        op=st.sampled_from(["union", "inter", "diff"]),
    )
    def algebra(
        self,
        sizes: list[list[tuple[bytes, float]]],
        weights: list[float] | None,
        aggregate: str,
        op: str,
    ) -> None:
        def run(z: Any) -> object:
            cls = type(z)
            sets = [z, *(cls(pairs, raw=True) for pairs in sizes)]
            if op == "diff":
                result: Any = cls.diff(sets)
            else:
                result = getattr(cls, op)(sets, weights, aggregate)
            result._check()
            return list(result.items())

        self.both(run)

    @rule()
    def whole_set(self) -> None:
        c_bytes = self.c.snapshot()
        assert c_bytes == self.py.snapshot()
        assert self.py_class.restore(c_bytes).snapshot() == c_bytes
        assert self.c_class.restore(c_bytes).snapshot() == c_bytes
        self.both(lambda z: list(z.copy().items()))
        assert self.c.memory_usage() > 0 and self.py.memory_usage() > 0

    @rule(count=st.integers(min_value=-6, max_value=12))
    def random_picks(self, count: int) -> None:
        truth = {member: score for member, score in self.py.items()}
        for zset in (self.c, self.py):
            pick = zset.random_member()
            assert (pick is None) == (not truth)
            if pick is not None:
                assert truth[pick[0]] == pick[1]
            picks = zset.random_members(count)
            assert all(truth[member] == score for member, score in picks)
            if count >= 0:
                assert len(picks) == min(count, len(truth))
                assert len({member for member, _ in picks}) == len(picks)
            else:
                assert len(picks) == (-count if truth else 0)

    @invariant()
    def structures_agree(self) -> None:
        self.c._check()
        self.py._check()
        assert len(self.c) == len(self.py)
        assert normalise(list(self.c.items())) == normalise(list(self.py.items()))


def test_c_engine_matches_pure_python() -> None:
    c_class = load_implementation("c")  # fails loudly when the C engine is not built
    py_class = load_implementation("python")

    class CAgainstPython(SameBehaviour):
        def __init__(self) -> None:
            super().__init__(c_class, py_class)

    run_state_machine_as_test(
        CAgainstPython,
        settings=settings(
            max_examples=300,
            stateful_step_count=50,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


def test_pure_python_machine_runs_against_itself() -> None:
    """The same machine with the twin on both sides: proves the harness itself works."""
    py_class = load_implementation("python")

    class PythonAgainstPython(SameBehaviour):
        def __init__(self) -> None:
            super().__init__(py_class, py_class)

    run_state_machine_as_test(
        PythonAgainstPython,
        settings=settings(max_examples=50, stateful_step_count=30, deadline=None),
    )
