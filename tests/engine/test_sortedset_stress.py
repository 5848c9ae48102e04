"""Seeded random operation mixes against a deliberately naive model, ``_check()`` every step.

The model is a dict plus a sorted list rebuilt on demand: slow, obviously right, and
written without looking at the skip list.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from ranked.errors import InvalidScoreError

from .conftest import Impl

SCORES = [-3.0, -1.0, -0.0, 0.0, 0.5, 1.0, 1.0, 2.0, 7.25, float("inf"), float("-inf")]
STEPS = 2500
POOL = 80  # member names m0..m79


class Model:
    """Reference behaviour: member bytes -> score, order by (score, member)."""

    def __init__(self) -> None:
        self.scores: dict[bytes, float] = {}

    def ordered(self) -> list[tuple[bytes, float]]:
        return sorted(self.scores.items(), key=lambda pair: (pair[1], pair[0]))

    def add(self, member: bytes, score: float, flags: dict[str, bool]) -> int:
        current = self.scores.get(member)
        if current is None:
            if flags.get("xx"):
                return 0
            self.scores[member] = score
            return 1
        if flags.get("nx"):
            return 0
        if flags.get("gt") and not score > current:
            return 0
        if flags.get("lt") and not score < current:
            return 0
        if score != current:
            self.scores[member] = score
            return 1 if flags.get("ch") else 0
        return 0

    def incr(self, member: bytes, amount: float, flags: dict[str, bool]) -> float | None:
        current = self.scores.get(member)
        if current is None:
            if flags.get("xx"):
                return None
            self.scores[member] = amount
            return amount
        if flags.get("nx"):
            return None
        new = current + amount
        if math.isnan(new):
            raise InvalidScoreError("nan")
        if (flags.get("gt") and not new > current) or (flags.get("lt") and not new < current):
            return None
        if new != current:
            self.scores[member] = new
        return new

    def index_window(self, start: int, stop: int) -> tuple[int, int] | None:
        n = len(self.scores)
        start = start + n if start < 0 else start
        stop = stop + n if stop < 0 else stop
        start = max(start, 0)
        if start > stop or start >= n:
            return None
        return start, min(stop, n - 1)

    def in_score(self, score: float, low: float, high: float, lx: bool, hx: bool) -> bool:
        above = score > low if lx else score >= low
        below = score < high if hx else score <= high
        return above and below


def pick_flags(rng: random.Random, with_ch: bool) -> dict[str, bool]:
    flags: dict[str, bool] = {}
    first = rng.choice(["", "", "nx", "xx"])
    if first:
        flags[first] = True
    if first != "nx" and rng.random() < 0.3:
        flags[rng.choice(["gt", "lt"])] = True
    if with_ch and rng.random() < 0.5:
        flags["ch"] = True
    return flags


def same_pairs(got: list[tuple[Any, float]], want: list[tuple[bytes, float]]) -> bool:
    """Equal members, equal scores, and equal signs of zero."""
    return len(got) == len(want) and all(
        g[0] == w[0] and g[1] == w[1] and math.copysign(1, g[1]) == math.copysign(1, w[1])
        for g, w in zip(got, want, strict=True)
    )


def verify_reads(rng: random.Random, zset: Any, model: Model) -> None:
    ordered = model.ordered()
    assert same_pairs(list(zset.items()), ordered)
    assert len(zset) == len(ordered)
    if not ordered:
        return
    member, score = rng.choice(ordered)
    scores = [s for _, s in ordered]
    distinct = sorted(set(scores))
    position = ordered.index((member, score))
    assert zset.index(member) == position
    assert zset.index(member, reverse=True) == len(ordered) - 1 - position
    assert zset.rank(member, style="unique") == position + 1
    assert zset.rank(member) == 1 + sum(s < score for s in scores)
    assert zset.rank(member, reverse=True) == 1 + sum(s > score for s in scores)
    assert zset.rank(member, style="dense") == 1 + sum(s < score for s in distinct)
    assert zset.rank(member, style="dense", reverse=True) == 1 + sum(s > score for s in distinct)
    k = rng.randrange(-len(ordered), len(ordered))
    assert same_pairs([zset.at(k)], [ordered[k]])

    start, stop = rng.randrange(-8, 12), rng.randrange(-8, 12)
    window = model.index_window(start, stop)
    expected = [] if window is None else ordered[window[0] : window[1] + 1]
    assert same_pairs(zset.range_by_index(start, stop), expected)
    backwards = ordered[::-1]
    expected = [] if window is None else backwards[window[0] : window[1] + 1]
    assert same_pairs(zset.range_by_index(start, stop, reverse=True), expected)

    low, high = sorted(rng.sample(SCORES, 2))
    lx, hx = rng.random() < 0.3, rng.random() < 0.3
    offset, count = rng.choice([0, 0, 1, 3, -1]), rng.choice([-1, -1, 0, 1, 2, 5])
    inside = [p for p in ordered if model.in_score(p[1], low, high, lx, hx)]
    expected = [] if offset < 0 else inside[offset:]
    expected = expected if count < 0 else expected[:count]
    got = zset.range_by_score(
        low, high, min_exclusive=lx, max_exclusive=hx, offset=offset, count=count
    )
    assert same_pairs(got, expected)
    expected = [] if offset < 0 else inside[::-1][offset:]
    expected = expected if count < 0 else expected[:count]
    got = zset.range_by_score(
        low, high, min_exclusive=lx, max_exclusive=hx, offset=offset, count=count, reverse=True
    )
    assert same_pairs(got, expected)
    assert zset.count_by_score(low, high, min_exclusive=lx, max_exclusive=hx) == len(inside)

    point = (rng.choice(SCORES), b"m%d" % rng.randrange(POOL))
    after = [p for p in ordered if (p[1], p[0]) > point][:3]
    assert same_pairs(zset.items_after(point[0], point[1], 3), after)
    before = [p for p in ordered if (p[1], p[0]) < point][::-1][:3]
    assert same_pairs(zset.items_after(point[0], point[1], 3, reverse=True), before)

    if len(distinct) == 1:  # lex ranges are only defined when all scores are equal
        lo, hi = sorted([b"m%d" % rng.randrange(POOL), b"m%d" % rng.randrange(POOL)])
        members = [p for p in ordered if lo < p[0] <= hi]
        assert same_pairs(zset.range_by_lex(lo, hi, min_exclusive=True), members)
        assert zset.count_by_lex(lo, hi, min_exclusive=True) == len(members)


def mutate(rng: random.Random, zset: Any, model: Model) -> None:
    member = b"m%d" % rng.randrange(POOL)
    score = rng.choice(SCORES)
    action = rng.random()
    if action < 0.30:
        flags = pick_flags(rng, with_ch=True)
        assert zset.add(member, score, **flags) == model.add(member, score, flags)
    elif action < 0.40:
        pairs = [(b"m%d" % rng.randrange(POOL), rng.choice(SCORES)) for _ in range(8)]
        flags = pick_flags(rng, with_ch=True)
        assert zset.add_many(pairs, **flags) == sum(model.add(m, s, flags) for m, s in pairs)
    elif action < 0.55:
        flags = pick_flags(rng, with_ch=False)
        amount = rng.choice([1.0, -1.0, 0.0, -0.0, 0.5, float("inf"), float("-inf")])
        try:
            expected = model.incr(member, amount, flags)
        except InvalidScoreError:
            with pytest.raises(InvalidScoreError):
                zset.incr(member, amount, **flags)
        else:
            got = zset.incr(member, amount, **flags)
            assert got == expected
            if got is not None and expected is not None:
                assert math.copysign(1, got) == math.copysign(1, expected)
    elif action < 0.68:
        others = [b"m%d" % rng.randrange(POOL) for _ in range(rng.randrange(3))]
        expected = len({m for m in [member, *others] if m in model.scores})
        for m in [member, *others]:
            model.scores.pop(m, None)
        assert zset.remove(member, *others) == expected
    elif action < 0.72:
        count = rng.randrange(3)
        ordered = model.ordered()
        taken = ordered[:count]
        for m, _ in taken:
            del model.scores[m]
        assert same_pairs(zset.pop_min(count), taken)
    elif action < 0.76:
        count = rng.randrange(3)
        taken = model.ordered()[::-1][:count]
        for m, _ in taken:
            del model.scores[m]
        assert same_pairs(zset.pop_max(count), taken)
    elif action < 0.80:
        start, stop = rng.randrange(-6, 6), rng.randrange(-6, 6)
        window = model.index_window(start, stop)
        doomed = [] if window is None else model.ordered()[window[0] : window[1] + 1]
        for m, _ in doomed:
            del model.scores[m]
        assert zset.remove_range_by_index(start, stop) == len(doomed)
    elif action < 0.84:
        low, high = sorted(rng.sample(SCORES, 2))
        lx, hx = rng.random() < 0.3, rng.random() < 0.3
        hits = [m for m, s in model.scores.items() if model.in_score(s, low, high, lx, hx)]
        for m in hits:
            del model.scores[m]
        removed = zset.remove_range_by_score(low, high, min_exclusive=lx, max_exclusive=hx)
        assert removed == len(hits)
    elif action < 0.88:
        pairs = [(b"m%d" % rng.randrange(POOL), rng.choice(SCORES)) for _ in range(20)]
        if rng.random() < 0.3:
            zset.clear()
            model.scores.clear()
            pairs = sorted(dict(pairs).items(), key=lambda p: (p[1], p[0]))
        expected = 0
        for m, s in pairs:
            expected += model.add(m, s, {})
        assert zset.load(pairs) == expected
    elif action < 0.90 and len(model.scores) > 0:
        # Collapse everything onto one score so lex ranges get exercised.
        flat = rng.choice([0.0, 1.0])
        for m in list(model.scores):
            assert zset.add(m, flat, ch=True) == model.add(m, flat, {"ch": True})
    elif action < 0.92:
        with pytest.raises(InvalidScoreError):
            zset.add(member, float("nan"))
    else:
        zset.remove_range_by_lex(b"m1", b"m2", max_exclusive=True)
        if len({s for s in model.scores.values()}) <= 1:
            for m in [m for m in model.scores if b"m1" <= m < b"m2"]:
                del model.scores[m]
        else:  # undefined on mixed scores: resynchronise the model from the set
            model.scores = {bytes(m): s for m, s in zset.items()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_operations_match_the_model(impl: Impl, seed: int) -> None:
    rng = random.Random(seed)
    zset = impl(raw=True)
    model = Model()
    for _ in range(STEPS):
        mutate(rng, zset, model)
        zset._check()
        verify_reads(rng, zset, model)


def test_large_set_structure(impl: Impl) -> None:
    rng = random.Random(99)
    zset = impl(raw=True)
    model = Model()
    for i in range(3000):
        member = b"k%d" % rng.randrange(5000)
        score = float(rng.randrange(200))
        zset.add(member, score)
        model.add(member, score, {})
        if i % 5 == 0:
            victim = b"k%d" % rng.randrange(5000)
            zset.remove(victim)
            model.scores.pop(victim, None)
    zset._check()
    verify_reads(rng, zset, model)
    for _ in range(50):
        verify_reads(rng, zset, model)
