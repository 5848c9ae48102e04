"""Whole-set operations: snapshot / restore (byte format, corruption), copy, memory."""

from __future__ import annotations

import math
import struct

import pytest

from ranked.errors import SnapshotError

from .conftest import IMPLEMENTATIONS, Impl, load_implementation

INF = float("inf")


def expected_snapshot(pairs: list[tuple[bytes, float]]) -> bytes:
    """The documented format, built independently of both implementations."""
    out = b"RKZS" + bytes([1]) + struct.pack("<Q", len(pairs))
    for member, score in pairs:
        out += struct.pack("<d", score) + struct.pack("<I", len(member)) + member
    return out


def entry(score: float, member: bytes) -> bytes:
    return struct.pack("<dI", score, len(member)) + member


def header(count: int, version: int = 1) -> bytes:
    return b"RKZS" + bytes([version]) + struct.pack("<Q", count)


def test_snapshot_format(impl: Impl) -> None:
    zset = impl({"b": 2, "a": -0.0, "\udcff": INF, "": 2})
    expected = expected_snapshot([(b"a", -0.0), (b"", 2.0), (b"b", 2.0), (b"\xff", INF)])
    assert zset.snapshot() == expected
    assert impl().snapshot() == header(0)


def test_snapshot_round_trip(impl: Impl) -> None:
    zset = impl({f"m{i}": (i % 7) - 3.5 for i in range(300)})
    zset.add("neg-zero", -0.0)
    zset.add(b"\x00bin\xff", -INF)
    copy = impl.restore(zset.snapshot())
    copy._check()
    assert list(copy.items()) == list(zset.items())
    kept = copy.score("neg-zero")
    assert kept is not None and math.copysign(1.0, kept) < 0
    assert copy.snapshot() == zset.snapshot()
    assert copy.raw is False
    raw = impl.restore(zset.snapshot(), raw=True)
    assert raw.raw is True and raw.at(0) == (b"\x00bin\xff", -INF)
    empty = impl.restore(impl().snapshot())
    assert len(empty) == 0
    empty._check()


def test_restore_accepts_bytes_like(impl: Impl) -> None:
    data = impl({"a": 1}).snapshot()
    assert list(impl.restore(bytearray(data)).items()) == [("a", 1.0)]  # type: ignore[arg-type]
    assert list(impl.restore(memoryview(data)).items()) == [("a", 1.0)]  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        impl.restore("RKZS")  # type: ignore[arg-type]


def test_snapshots_are_identical_across_implementations() -> None:
    classes = [load_implementation(name) for name in IMPLEMENTATIONS]
    pairs = [(f"member-{i}", float((i * 7919) % 101) / 4) for i in range(2000)]
    pairs += [("zero", -0.0), (b"\xfe\xff", INF), ("", -INF)]  # type: ignore[list-item]
    snapshots = []
    for cls in classes:
        zset = cls(pairs)
        zset.remove("member-5", "member-77")
        zset.incr("member-9", 0.5)
        snapshots.append(zset.snapshot())
    assert all(snapshot == snapshots[0] for snapshot in snapshots)
    for cls in classes:
        for data in snapshots:
            assert cls.restore(data).snapshot() == snapshots[0]


CORRUPT = {
    "empty": b"",
    "short header": b"RKZS\x01\x00",
    "bad magic": b"RKZX" + bytes([1]) + struct.pack("<Q", 0),
    "bad version": header(0, version=2),
    "version zero": header(0, version=0),
    "missing entry": header(1),
    "truncated entry": header(1) + entry(1.0, b"a")[:5],
    "truncated member": header(1) + entry(1.0, b"abc")[:-1],
    "member length too big": header(1) + struct.pack("<dI", 1.0, 2**32 - 1) + b"x",
    "huge count": header(2**63) + entry(1.0, b"a"),
    "trailing byte": header(1) + entry(1.0, b"a") + b"\x00",
    "count too small": header(1) + entry(1.0, b"a") + entry(2.0, b"b"),
    "nan score": header(1) + entry(float("nan"), b"a"),
    "unordered scores": header(2) + entry(2.0, b"a") + entry(1.0, b"b"),
    "unordered members": header(2) + entry(1.0, b"b") + entry(1.0, b"a"),
    "repeated entry": header(2) + entry(1.0, b"a") + entry(1.0, b"a"),
    "repeated member": header(2) + entry(1.0, b"a") + entry(2.0, b"a"),
    "negative zero tie repeated": header(2) + entry(-0.0, b"a") + entry(0.0, b"a"),
}


@pytest.mark.parametrize("data", list(CORRUPT.values()), ids=list(CORRUPT))
def test_corrupt_snapshots_raise(impl: Impl, data: bytes) -> None:
    with pytest.raises(SnapshotError):
        impl.restore(data)
    assert issubclass(SnapshotError, ValueError)


def test_copy_is_independent(impl: Impl) -> None:
    zset = impl({"a": 1, "b": 2}, raw=True)
    clone = zset.copy()
    assert isinstance(clone, impl)
    assert clone.raw is True
    assert list(clone.items()) == list(zset.items())
    clone.add("c", 3)
    clone.incr("a", 10)
    zset.remove("b")
    assert list(zset.items()) == [(b"a", 1.0)]
    assert list(clone.items()) == [(b"b", 2.0), (b"c", 3.0), (b"a", 11.0)]
    zset._check()
    clone._check()


def test_memory_usage_grows_with_members(impl: Impl) -> None:
    zset = impl()
    empty = zset.memory_usage()
    assert empty > 0
    zset.load({f"member-{i:05d}": i for i in range(1000)})
    full = zset.memory_usage()
    assert full > empty + 1000 * 16  # at least a member and a score per entry
    zset.remove_range_by_index(0, 499)
    assert empty < zset.memory_usage() < full
    zset.clear()
    assert zset.memory_usage() < full
