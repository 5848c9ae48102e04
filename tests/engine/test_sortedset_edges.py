"""Rows read at either end of a large set (a leaderboard's top N): the C engine hands back
the tuple it returned last time for the same end position while the node there still holds
an equal member and the same score bits. Whatever writes happen in between, every read must
equal a fresh model's answer, down to the sign of a zero score and the member's type."""

from __future__ import annotations

import math
import random

import pytest

from .conftest import Impl

Member = str | bytes
SIZE = 600  # above the C engine's 256-member threshold for keeping end rows


def expected_rows(
    model: dict[Member, float], start: int, stop: int, reverse: bool
) -> list[tuple[Member, float]]:
    def key(pair: tuple[Member, float]) -> tuple[float, bytes]:
        member = pair[0]
        raw = member if isinstance(member, bytes) else member.encode("utf-8", "surrogateescape")
        return pair[1], raw

    ordered = sorted(model.items(), key=key, reverse=reverse)
    return ordered[start : stop + 1]


def same_rows(got: list[tuple[Member, float]], want: list[tuple[Member, float]]) -> bool:
    return [(m, type(m), s, math.copysign(1.0, s)) for m, s in got] == [
        (m, type(m), s, math.copysign(1.0, s)) for m, s in want
    ]


@pytest.mark.parametrize("seed", range(6))
def test_end_rows_follow_every_write(impl: Impl, seed: int) -> None:
    rng = random.Random(seed)
    zset = impl()
    model: dict[Member, float] = {}
    names = [f"p{i}" for i in range(SIZE)] + ["é", "名前", "\udcff", "z"]
    for name in names:
        model[name] = float(rng.randrange(-50, 50))
    zset.add_many(list(model.items()))
    for _ in range(400):
        action = rng.randrange(6)
        member = rng.choice(names)
        if action == 0:  # a new top score, or the same score with the other zero's sign
            score = rng.choice([0.0, -0.0, 1000.0, -1000.0, float(rng.randrange(-50, 50))])
            zset.add(member, score)
            model[member] = score
        elif action == 1 and member in model and len(model) > 300:
            zset.remove(member)
            del model[member]
        elif action == 2 and member in model:
            new = zset.incr(member, rng.choice([1, -1, 0.5]))
            assert new is not None
            model[member] = new
        else:
            reverse = rng.random() < 0.5
            start = rng.choice([0, 0, 1, 5, 30, 31, 32, len(model) - 40])
            stop = start + rng.choice([0, 9, 40])
            got = zset.range_by_index(start, stop, reverse=reverse)
            assert same_rows(got, expected_rows(model, start, stop, reverse))
            again = zset.range_by_index(start, stop, reverse=reverse)
            assert same_rows(again, got)


def test_a_reset_to_bytes_members_is_seen(impl: Impl) -> None:
    pairs = [(f"m{i}", float(i)) for i in range(SIZE)]
    zset = impl(pairs)
    assert zset.range_by_index(0, 2, reverse=True) == [
        ("m599", 599.0),
        ("m598", 598.0),
        ("m597", 597.0),
    ]
    zset.__init__(pairs, raw=True)  # type: ignore[misc]  # same members, now returned as bytes
    assert zset.range_by_index(0, 2, reverse=True) == [
        (b"m599", 599.0),
        (b"m598", 598.0),
        (b"m597", 597.0),
    ]


def test_the_end_rows_cost_bounded_memory(impl: Impl) -> None:
    zset = impl([(f"m{i}", float(i)) for i in range(SIZE)])
    before = zset.memory_usage()
    zset.range_by_index(0, 9, reverse=True)
    grown = zset.memory_usage()
    assert 0 <= grown - before <= 64 * 8
    for _ in range(100):
        zset.range_by_index(0, 9, reverse=True)
        zset.range_by_index(0, 9)
    assert zset.memory_usage() == grown
