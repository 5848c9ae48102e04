"""Ranks among scores that round to the same float.

The C engine's member table keeps each score rounded to ``float`` and starts a
rank descent from it; only scores that round alike need the exact one. These
tests put many such scores side by side (doubles one ulp apart, integers past
2**24, huge values that round to infinity, signed zeros, subnormals) and check
``index``, ``rank`` in every style and ``range_around`` against a sorted model,
before and after score changes that keep a member in place or move it. Both
implementations run them (the ``impl`` fixture).
"""

from __future__ import annotations

import math
import random
import struct

from ranked.engine.skiplist import SortedSet

from .conftest import Impl

FLOAT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]


def close_scores() -> list[float]:
    """Scores in clusters whose members round to one float (or to neighbours)."""
    scores: list[float] = [0.0, -0.0, 5e-324, -5e-324, 1e-45, -1e-45]
    for base in (1.0, 0.1, -3.5, 2.0**24, 1e12, -1e12, FLOAT_MAX, -FLOAT_MAX):
        value = base
        for _ in range(4):
            scores.append(value)
            value = math.nextafter(value, math.inf)
        scores.append(math.nextafter(base, -math.inf))
    scores += [2.0**24 + k for k in range(1, 5)]
    scores += [1e39, 2e39, 1e300, 1.7e308, math.inf, -1e39, -1e300, -1.7e308, -math.inf]
    return scores


def model(pairs: dict[str, float]) -> list[tuple[str, float]]:
    """Pairs in set order: by score, ties by member bytes."""
    return sorted(pairs.items(), key=lambda p: (p[1], p[0].encode()))


def check(s: SortedSet, pairs: dict[str, float]) -> None:
    """Every member's index, ranks and window agree with the model."""
    order = model(pairs)
    scores = [score for _, score in order]
    distinct = sorted(set(scores))
    n = len(order)
    for position, (member, score) in enumerate(order):
        assert s.index(member) == position, member
        assert s.index(member, reverse=True) == n - 1 - position
        assert s.rank(member, style="unique") == position + 1
        below = sum(1 for other in scores if other < score)
        assert s.rank(member) == below + 1
        assert s.rank(member, style="dense") == distinct.index(score) + 1
        around = s.range_around(member, 2, 2)
        assert around is not None
        at, window = around
        assert at == position
        assert [m for m, _ in window] == [
            m for m, _ in order[max(0, min(position - 2, n - 5)) :][:5]
        ]
    assert s.index("absent") is None
    assert s.range_around("absent", 1, 1) is None


def test_scores_that_round_alike_rank_exactly(impl: Impl) -> None:
    rng = random.Random(11)
    scores = close_scores()
    pairs = {f"m{i:03d}": scores[i % len(scores)] for i in range(3 * len(scores))}
    s = impl()
    for member, score in rng.sample(sorted(pairs.items()), len(pairs)):
        s.add(member, score)
    s._check()
    check(s, pairs)


def test_ranks_stay_exact_through_score_changes(impl: Impl) -> None:
    rng = random.Random(12)
    scores = close_scores()
    pairs = {f"m{i:03d}": rng.choice(scores) for i in range(120)}
    s = impl()
    s.load(list(pairs.items()))
    check(s, pairs)
    for step in range(300):
        member = rng.choice(sorted(pairs))
        old = pairs[member]
        # a neighbouring double keeps it in place; a random close score moves it
        new = (
            math.nextafter(old, rng.choice((math.inf, -math.inf)))
            if step % 2
            else rng.choice(scores)
        )
        if math.isnan(new) or new == old:
            continue
        s.add(member, new)
        pairs[member] = new
        s._check()
        if step % 10 == 0:
            check(s, pairs)
    check(s, pairs)


def test_incr_across_a_rounded_score_keeps_ranks(impl: Impl) -> None:
    s = impl()
    base = 2.0**24
    pairs = {f"p{k}": base + k for k in range(8)}
    s.load(list(pairs.items()))
    for _ in range(3):
        for member in sorted(pairs):
            score = s.incr(member, 1.0)
            assert score is not None
            pairs[member] = score
            s._check()
        check(s, pairs)
