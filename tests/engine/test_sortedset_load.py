"""``load`` into an empty set from unsorted input: the C engine reduces the pairs to one per
member, sorts them and appends in O(n) (its nodes then sit in memory in rank order). Whatever
the path, the result must be exactly what adding the pairs one by one leaves behind: the same
members, scores (with the sign of a stored -0.0), count and invariants, on both engines."""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Sequence

import pytest

from .conftest import Impl, load_implementation

Member = str | bytes
Pairs = list[tuple[Member, float]]
SCORES = (0.0, -0.0, 1.0, -1.0, 2.5, math.inf, -math.inf, 1e300, -1e-300)
MEMBERS: tuple[Member, ...] = ("a", "b", "", "é", "\udcff", "player:1", "player:10", "zz")


def one_by_one(impl: Impl, pairs: Sequence[tuple[Member, float]]) -> tuple[object, int]:
    """The reference: the same pairs added in turn with ``add``; (set, new members)."""
    zset = impl()
    added = sum(zset.add(member, score) for member, score in pairs)
    return zset, added


def exact(zset: object) -> list[tuple[object, bytes]]:
    """Members with their scores' bit patterns, so -0.0 and 0.0 differ."""
    return [(member, struct.pack("<d", score)) for member, score in zset.items()]  # type: ignore[attr-defined]


def random_pairs(rng: random.Random, size: int) -> Pairs:
    members = [*MEMBERS, *(f"m{i}" for i in range(rng.randint(1, 40)))]
    return [
        (
            rng.choice(members),
            rng.choice(SCORES) if rng.random() < 0.5 else float(rng.randint(-5, 5)),
        )
        for _ in range(size)
    ]


@pytest.mark.parametrize("seed", range(40))
def test_unsorted_load_matches_adding_one_by_one(impl: Impl, seed: int) -> None:
    rng = random.Random(seed)
    pairs = random_pairs(rng, rng.randint(2, 300))
    reference, added = one_by_one(impl, pairs)
    zset = impl()
    assert zset.load(pairs) == added
    assert exact(zset) == exact(reference)
    zset._check()
    built = impl(pairs)  # the constructor loads the same way
    assert exact(built) == exact(reference)
    built._check()


def test_both_engines_agree_on_large_shuffled_loads() -> None:
    c_impl, py_impl = load_implementation("c"), load_implementation("python")
    rng = random.Random(11)
    pairs: Pairs = [(f"player:{i}", float(rng.randint(0, 3000))) for i in range(3000)]
    pairs += rng.sample(pairs, 500)  # duplicates with the same score
    pairs += [(f"player:{rng.randrange(3000)}", float(rng.randint(0, 3000))) for _ in range(500)]
    rng.shuffle(pairs)
    c_set, py_set = c_impl(), py_impl()
    assert c_set.load(pairs) == py_set.load(pairs) == 3000
    assert exact(c_set) == exact(py_set)
    c_set._check()
    assert c_set.index("player:7") == py_set.index("player:7")
    assert c_set.range_by_index(0, 9, reverse=True) == py_set.range_by_index(0, 9, reverse=True)


def test_last_score_wins_but_an_equal_zero_keeps_the_stored_sign(impl: Impl) -> None:
    zset = impl()
    assert zset.load([("b", 5.0), ("a", -0.0), ("b", 1.0), ("a", 0.0), ("c", 0.0)]) == 3
    assert exact(zset) == exact(one_by_one(impl, [("b", 1.0), ("a", -0.0), ("c", 0.0)])[0])
    assert math.copysign(1.0, zset.score("a")) == -1.0  # type: ignore[arg-type]
    again = impl()
    again.load([("a", -0.0), ("a", 3.0), ("a", 0.0)])  # a later change drops the sign
    assert math.copysign(1.0, again.score("a")) == 1.0  # type: ignore[arg-type]


def test_str_and_bytes_name_the_same_member(impl: Impl) -> None:
    zset = impl()
    assert zset.load([("é", 2.0), ("x", 1.0), ("é".encode(), 0.5)]) == 2
    assert list(zset.items()) == [("é", 0.5), ("x", 1.0)]
    zset._check()


def test_unsorted_load_into_a_non_empty_set_merges(impl: Impl) -> None:
    zset = impl({"a": 1.0, "z": 9.0})
    assert zset.load([("m", 5.0), ("a", 7.0), ("b", 0.0), ("m", 4.0)]) == 2
    assert list(zset.items()) == [("b", 0.0), ("m", 4.0), ("a", 7.0), ("z", 9.0)]
    zset._check()


def test_bad_pair_anywhere_leaves_an_empty_set_empty(impl: Impl) -> None:
    zset = impl()
    with pytest.raises(TypeError):
        zset.load([("b", 2.0), ("a", 1.0), (3, 0.0)])  # type: ignore[list-item]
    assert len(zset) == 0
    zset._check()
    assert zset.load([("b", 2.0), ("a", 1.0)]) == 2


def test_large_load_then_mass_removal_and_regrowth(impl: Impl) -> None:
    # Large enough for the C slab to keep tall nodes in chunks of their own, and for
    # the removals to compact it; the set must stay exact through all of it.
    rng = random.Random(3)
    pairs: Pairs = [(f"player:{i}", float(rng.randint(0, 50_000))) for i in range(30_000)]
    rng.shuffle(pairs)
    zset = impl()
    assert zset.load(pairs) == 30_000
    zset._check()
    gone = [member for member, _ in pairs[:25_000]]
    assert zset.remove(*gone) == 25_000
    zset._check()
    kept = sorted(pairs[25_000:], key=lambda pair: (pair[1], str(pair[0]).encode()))
    assert list(zset.items()) == kept
    zset.add_many([(f"new:{i}", float(i)) for i in range(5_000)])
    zset._check()
    assert len(zset) == 10_000
