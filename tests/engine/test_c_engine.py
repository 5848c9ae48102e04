"""Tests only the C engine needs: reference leaks, memory accounting, and the
paths where a C bug would corrupt memory (cursors outliving changes, hostile
snapshots, Python code running in the middle of a call).

``make asan`` and ``make valgrind`` run this file (with the shared engine suite)
under AddressSanitizer and memcheck; the tests also pass on a normal build.
"""

from __future__ import annotations

import gc
import os
import random
import sys
import tracemalloc
from collections.abc import Callable

import pytest

from ranked.engine import _zset
from ranked.errors import InvalidScoreError, SnapshotError

SortedSet = _zset.SortedSet

PAGE = os.sysconf("SC_PAGE_SIZE")
UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


def rss_bytes() -> int:
    """Resident set size of this process, from /proc/self/statm."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def mixed_round(zs: SortedSet, rng: random.Random, ops: int, shared: tuple[str, float]) -> None:
    """``ops`` mixed calls: writes, reads, ranges, cursors and every kind of error."""
    member, score = shared
    for step in range(ops):
        name = f"m{rng.randrange(2000)}"
        kind = step % 20
        if kind == 0:
            zs.add(name, rng.uniform(-50, 50))
        elif kind == 1:
            zs.add(member, score, gt=True, ch=True)
        elif kind == 2:
            zs.incr(name, rng.choice([1.0, -1.0, 0.5]))
        elif kind == 3:
            zs.remove(name, member)
        elif kind == 4:
            zs.rank(name, style=rng.choice(["unique", "competition", "dense"]), reverse=True)
        elif kind == 5:
            zs.range_by_index(0, 20, reverse=bool(step & 1))
        elif kind == 6:
            zs.range_by_score(-10, 10, offset=2, count=15)
        elif kind == 7:
            zs.range_by_lex(None, "m5", reverse=True, count=10)
        elif kind == 8:
            for _ in zip(range(30), zs.items(after=(0.0, name)), strict=False):
                pass
        elif kind == 9:
            cursor = iter(zs)
            next(cursor, None)
            zs.add(name, 1.0)
            list(zip(range(10), cursor, strict=False))
        elif kind == 10:
            zs.items_after(0.0, name, 10, reverse=True)
        elif kind == 11:
            zs.pop_min(2)
            zs.pop_max(1)
        elif kind == 12:
            zs.random_members(-5)
            zs.random_members(5)
            zs.random_member()
        elif kind == 13:
            zs.scores([name, member, b"x"])
            zs.score(member)
            zs.index(member)
        elif kind == 14:
            with pytest.raises(TypeError):
                zs.add(12, 1.0)  # type: ignore[arg-type]
            with pytest.raises(InvalidScoreError):
                zs.add(member, float("nan"))
            with pytest.raises(ValueError):
                zs.add(member, score, nx=True, xx=True)
            with pytest.raises(IndexError):
                zs.at(10**9)
        elif kind == 15:
            with pytest.raises(ValueError):
                zs.rank(member, style="olympic")  # type: ignore[arg-type]
            with pytest.raises(TypeError):
                zs.add_many([(member, "1")])  # type: ignore[list-item]
            with pytest.raises(SnapshotError):
                SortedSet.restore(b"RKZS\x01" + b"\xff" * 8)
        elif kind == 16:
            zs.add_many({member: score, name: 2.0}, ch=True)
            zs.count_by_score(-5, 5, min_exclusive=True)
            zs.count_by_lex("m1", "m3")
        elif kind == 17:
            other = SortedSet.restore(zs.snapshot())
            SortedSet.union([zs, other], weights=[1, 2], aggregate="max")
            SortedSet.inter([zs, other])
            SortedSet.diff([zs, other])
        elif kind == 18:
            zs.remove_range_by_score(40, 50)
            zs.remove_range_by_lex("m19", "m199", max_exclusive=True)
            zs.remove_range_by_index(-3, -1)
        else:
            zs.copy().load([(f"n{i}", float(i)) for i in range(5)])


def test_no_reference_or_memory_leak() -> None:
    """1e5 mixed operations: Python memory, RSS and shared refcounts stay flat."""
    rng = random.Random(1234)
    member = "".join(["shared-", "member"])  # a fresh (non-literal) str object
    score = float(rng.randrange(10**6)) + 0.25  # a fresh float object
    zs = SortedSet()
    mixed_round(zs, rng, 5_000, (member, score))  # warm caches and allocator pools
    gc.collect()
    refs = (sys.getrefcount(member), sys.getrefcount(score))
    tracemalloc.start()
    try:
        mixed_round(zs, rng, 20_000, (member, score))
        gc.collect()
        traced_start = tracemalloc.get_traced_memory()[0]
        rss_start = rss_bytes()
        for _ in range(4):
            mixed_round(zs, rng, 20_000, (member, score))
        gc.collect()
        traced_end = tracemalloc.get_traced_memory()[0]
        rss_end = rss_bytes()
    finally:
        tracemalloc.stop()
    assert (sys.getrefcount(member), sys.getrefcount(score)) == refs
    assert traced_end - traced_start < 256 * 1024, (traced_start, traced_end)
    if not UNDER_ASAN:  # ASan's free-memory quarantine makes RSS grow by design
        assert rss_end - rss_start < 8 * 1024 * 1024, (rss_start, rss_end)
    zs._check()


def test_memory_usage_tracks_allocations() -> None:
    zs = SortedSet()
    empty = zs.memory_usage()
    assert empty > 0
    zs.load((f"player:{i}", float(i)) for i in range(100_000))
    per_member = (zs.memory_usage() - empty) / len(zs)
    # One node allocation (24 + 16/level + member bytes) plus ~20 table bytes.
    assert 40 < per_member < 110, per_member
    zs.clear()
    assert zs.memory_usage() == empty


def test_mass_removal_compacts_nodes_and_keeps_the_set_intact() -> None:
    zs = SortedSet((f"player:{i}", float(i % 97)) for i in range(50_000))
    full = zs.memory_usage()
    cursor = zs.items()
    assert next(cursor) == ("player:0", 0.0)
    zs.remove(*[f"player:{i}" for i in range(0, 50_000, 3)])  # node memory moves
    zs.remove_range_by_index(0, 9_999)
    zs._check()
    assert zs.memory_usage() < full * 0.8
    expected = sorted(
        ((float(i % 97), f"player:{i}") for i in range(50_000) if i % 3),
        key=lambda p: (p[0], p[1].encode()),
    )[10_000:]
    assert zs.range_by_index(0, -1) == [(m, s) for s, m in expected]
    assert list(cursor) == [(m, s) for s, m in expected]  # re-seeks after the move
    for s, m in expected[:200]:
        assert zs.score(m) == s
    zs.add("late", -1.0)
    assert zs.at(0) == ("late", -1.0)
    zs._check()


def test_memory_usage_counts_member_bytes() -> None:
    small, large = SortedSet(), SortedSet()
    small.add("a", 1.0)
    large.add("a" * 10_000, 1.0)
    # Towers differ at random, and the small set's first node chunk (256 bytes) is
    # charged in full while the 10 kB node is a block of its own.
    assert large.memory_usage() - small.memory_usage() >= 9_600


def test_cursor_survives_clear_delete_and_set_going_away() -> None:
    zs = SortedSet((f"m{i:03}", float(i)) for i in range(300))
    forward = zs.items()
    backward = zs.items(reverse=True)
    members = iter(zs)
    assert next(forward) == ("m000", 0.0)
    assert next(backward) == ("m299", 299.0)
    assert next(members) == "m000"
    zs.remove("m001", "m298")
    assert next(forward) == ("m002", 2.0)
    assert next(backward) == ("m297", 297.0)
    zs.clear()
    assert list(forward) == []
    assert list(backward) == []
    assert list(members) == []
    zs.add("late", 1.0)
    assert list(forward) == []  # an exhausted cursor stays exhausted
    cursor = SortedSet({"a": 1.0, "b": 2.0}).items()  # the only reference is the cursor's
    gc.collect()
    assert list(cursor) == [("a", 1.0), ("b", 2.0)]


def test_cursor_after_its_node_moves_and_is_freed() -> None:
    zs = SortedSet((f"m{i:03}", float(i)) for i in range(100))
    cursor = zs.items()
    assert next(cursor) == ("m000", 0.0)
    zs.remove("m000")  # the remembered node is freed
    zs.add("m000", 0.5)  # a different node with the same member
    zs.incr("m002", 100.0)  # moves ahead: seen again later
    assert next(cursor) == ("m000", 0.5)
    rest = list(cursor)
    assert rest[0] == ("m001", 1.0)
    assert rest[-1] == ("m002", 102.0)
    zs._check()


class Meddler:
    """A number whose ``__float__`` mutates the set it is being added to."""

    def __init__(self, target: SortedSet, value: float) -> None:
        self.target = target
        self.value = value

    def __float__(self) -> float:
        self.target.clear()
        self.target.add("meddled", 1.0)
        return self.value


def test_python_code_during_argument_conversion_cannot_corrupt() -> None:
    zs = SortedSet((f"m{i}", float(i)) for i in range(50))
    pairs = [("a", 1.0), ("b", Meddler(zs, 2.0)), ("c", 3.0)]
    assert zs.add_many(pairs) == 3  # type: ignore[arg-type]
    assert list(zs) == ["a", "meddled", "b", "c"]
    zs._check()
    assert zs.add("x", Meddler(zs, 5.0)) == 1  # type: ignore[arg-type]
    assert zs.score("x") == 5.0
    zs._check()


class Resurrector:
    """Its finaliser mutates a set; a collection may run it in the middle of a call."""

    def __init__(self, target: SortedSet) -> None:
        self.target = target
        self.cycle = self

    def __del__(self) -> None:
        self.target.pop_min(5)


def test_collection_during_range_read_is_detected_not_crashed() -> None:
    zs = SortedSet((f"m{i:05}", float(i)) for i in range(5000))
    threshold = gc.get_threshold()
    gc.set_threshold(1)  # collect on almost every tuple allocation
    try:
        for _ in range(20):
            Resurrector(zs)
            try:
                rows = zs.range_by_index(0, 500)
            except RuntimeError as error:
                assert "changed" in str(error)
            else:
                assert len(rows) == 501
            zs.pop_max(3)
            list(zip(range(50), zs.items(), strict=False))
    finally:
        gc.set_threshold(*threshold)
        gc.collect()
    zs._check()


def mutated(data: bytes, rng: random.Random) -> bytes:
    """The snapshot with one random cut, flip or insertion."""
    choice = rng.randrange(3)
    position = rng.randrange(len(data))
    if choice == 0:
        return data[:position]
    if choice == 1:
        return (
            data[:position]
            + bytes([data[position] ^ (1 << rng.randrange(8))])
            + data[position + 1 :]
        )
    return data[:position] + bytes([rng.randrange(256)]) + data[position:]


def test_hostile_snapshots_raise_or_restore_a_valid_set() -> None:
    rng = random.Random(99)
    source = SortedSet((f"m{i}", rng.choice([0.0, -0.0, 1.5, float(i)])) for i in range(60))
    data = source.snapshot()
    for _ in range(3000):
        broken = mutated(data, rng)
        try:
            restored = SortedSet.restore(broken)
        except SnapshotError:
            continue
        restored._check()
        assert restored.snapshot() == broken


def test_members_round_trip_every_byte() -> None:
    raw = SortedSet(raw=True)
    text = SortedSet()
    odd = [b"", b"\x00", b"a\x00b", bytes(range(256)), b"\xff" * 70, "é".encode()]
    for i, member in enumerate(odd):
        raw.add(member, float(i))
        text.add(member, float(i))
    assert [m for m, _ in raw.range_by_index(0, -1)] == odd
    assert [m for m, _ in text.range_by_index(0, -1)] == [
        m.decode("utf-8", "surrogateescape") for m in odd
    ]
    escaped = "x\udcff"
    text.add(escaped, 9.0)
    assert text.score(b"x\xff") == 9.0
    with pytest.raises(UnicodeEncodeError):
        text.add("\ud800", 1.0)
    assert escaped in text
    raw._check()
    text._check()


def test_tall_and_wide_structures_stay_consistent() -> None:
    rng = random.Random(7)
    zs = SortedSet()
    operations: list[Callable[[], object]] = [
        lambda: zs.add(f"k{rng.randrange(4000)}", rng.choice([0.0, 1.0, rng.random()])),
        lambda: zs.remove(f"k{rng.randrange(4000)}"),
        lambda: zs.incr(f"k{rng.randrange(4000)}", -0.0),
        lambda: zs.remove_range_by_index(rng.randrange(50), rng.randrange(50, 60)),
    ]
    for step in range(40_000):
        rng.choice(operations)()
        if step % 5_000 == 0:
            zs._check()
    zs._check()
    distinct = len({score for _, score in zs.items()})
    top = zs.range_by_index(0, 0, reverse=True)[0][0]
    assert zs.rank(top, style="dense") == distinct


class _Name(str):
    """A str subclass: not exact str, so the binding takes its general path."""


def test_ascii_and_general_member_paths_agree() -> None:
    zs = SortedSet()
    zs.add("player:1", 1.0)
    zs.add(_Name("player:2"), 2.0)
    zs.add("pläyer:3", 3.0)
    zs.add(b"player:4", 4.0)
    assert zs.score(_Name("player:1")) == 1.0
    assert zs.score(b"player:2") == 2.0
    assert zs.score("pläyer:3".encode()) == 3.0
    assert zs.score("player:4") == 4.0
    pairs = zs.range_by_index(0, -1)
    assert pairs == [("player:1", 1.0), ("player:2", 2.0), ("pläyer:3", 3.0), ("player:4", 4.0)]
    assert all(type(m) is str for m, _ in pairs)
    assert zs.at(2) == ("pläyer:3", 3.0)
    zs._check()


def test_members_of_every_length_hash_apart() -> None:
    # Lengths around the hash's 4-, 8- and 16-byte reads, members that differ
    # only in their length or in one byte deep inside.
    zs = SortedSet(raw=True)
    members = [b"\x00" * k for k in range(70)]
    members += [b"a" * k + b"b" + b"a" * (40 - k) for k in range(41)]
    for i, member in enumerate(members):
        zs.add(member, float(i % 3))
    assert len(zs) == len(members)
    for i, member in enumerate(members):
        assert zs.score(member) == float(i % 3)
    zs._check()
