"""copy.copy, copy.deepcopy and pickle of a SortedSet, on both engines.

Each gives a set equal to the original (same pairs in the same order, same score
bits, same ``raw``) and independent of it: writes to one never show in the other.
Pickles carry the snapshot bytes and ``raw`` (``__reduce__`` / ``__setstate__``), for
every pickle protocol. (The C engine's sets could not be copied or pickled at all; the
pure twin's ``copy.copy`` shared the skip list's nodes with the original.)
"""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from ranked.errors import SnapshotError

from .conftest import Impl

INF = float("inf")
PAIRS: dict[str, float] = {
    "ann": 3.0,
    "bob": -0.0,
    "cat": 0.0,
    "dan": INF,
    "eve": -INF,
    "\u00e9l\u00e9onore": 2.5,
    "\udcff\udcfe": 1e-300,  # invalid UTF-8 bytes, kept through surrogateescape
    "": 3.0,
}
PROTOCOLS = list(range(pickle.HIGHEST_PROTOCOL + 1))


def sample(impl: Impl, raw: bool) -> Any:
    zset = impl(PAIRS.items(), raw=raw)
    zset.load((f"p{i:04}", float(i % 37)) for i in range(300))
    return zset


def same_set(a: Any, b: Any) -> None:
    """Equal as sets go: type, raw, pairs in order and score bits (-0.0 stays -0.0)."""
    assert type(a) is type(b)
    assert a.raw == b.raw
    pairs_a, pairs_b = list(a.items()), list(b.items())
    assert pairs_a == pairs_b
    assert [math.copysign(1.0, s) for _, s in pairs_a] == [
        math.copysign(1.0, s) for _, s in pairs_b
    ]
    assert a.snapshot() == b.snapshot()
    a._check()
    b._check()


def independent(original: Any, clone: Any) -> None:
    """Writes to either one leave the other as it was."""
    before = original.snapshot()
    member = b"new" if clone.raw else "new"
    clone.add(member, 1.0)
    clone.pop_min(3)
    clone.incr(next(iter(clone)), 5.0)
    assert original.snapshot() == before
    after = clone.snapshot()
    original.clear()
    assert clone.snapshot() == after
    clone._check()


def pickled(protocol: int) -> Callable[[Any], Any]:
    """A round trip through pickle with ``protocol``."""
    return lambda zset: pickle.loads(pickle.dumps(zset, protocol))


COPIERS: dict[str, Callable[[Any], Any]] = {
    "copy.copy": copy.copy,
    "copy.deepcopy": copy.deepcopy,
    "method": lambda zset: zset.copy(),
    **{f"pickle-{p}": pickled(p) for p in PROTOCOLS},
}


@pytest.mark.parametrize("how", list(COPIERS))
@pytest.mark.parametrize("raw", [False, True], ids=["str", "raw"])
def test_a_copy_is_equal_and_independent(impl: Impl, how: str, raw: bool) -> None:
    original = sample(impl, raw)
    clone = COPIERS[how](original)
    same_set(clone, original)
    independent(original, clone)


@pytest.mark.parametrize("how", list(COPIERS))
def test_an_empty_set_copies(impl: Impl, how: str) -> None:
    for raw in (False, True):
        clone = COPIERS[how](impl(raw=raw))
        same_set(clone, impl(raw=raw))


def test_deepcopy_keeps_shared_references_shared(impl: Impl) -> None:
    zset = sample(impl, False)
    nested = copy.deepcopy({"a": zset, "b": [zset]})
    assert nested["a"] is nested["b"][0]
    assert nested["a"] is not zset
    same_set(nested["a"], zset)
    restored = pickle.loads(pickle.dumps([zset, zset]))
    assert restored[0] is restored[1]
    same_set(restored[0], zset)


def test_reduce_names_the_class_and_the_state(impl: Impl) -> None:
    zset = impl({"a": 1.0}, raw=True)
    cls, args, state = zset.__reduce__()
    assert (cls, args) == (impl, ())
    assert state == (zset.snapshot(), True)


@pytest.mark.parametrize(
    "state",
    [
        pytest.param(None, id="none"),
        pytest.param((b"RKZS",), id="short-tuple"),
        pytest.param(("text", False), id="str-data"),
        pytest.param([b"", False], id="list"),
    ],
)
def test_setstate_refuses_other_shapes_and_changes_nothing(impl: Impl, state: Any) -> None:
    zset = impl({"a": 1.0})
    with pytest.raises(TypeError, match="state must be"):
        zset.__setstate__(state)
    assert list(zset.items()) == [("a", 1.0)]
    assert not zset.raw


def test_setstate_refuses_a_corrupt_snapshot_and_changes_nothing(impl: Impl) -> None:
    zset = impl({"a": 1.0})
    data = impl({"b": 2.0, "c": 3.0}).snapshot()
    with pytest.raises(SnapshotError):
        zset.__setstate__((data[:-1], True))
    assert list(zset.items()) == [("a", 1.0)]
    assert not zset.raw


def test_setstate_replaces_contents_under_a_cursor(impl: Impl) -> None:
    """A cursor open on the set re-seeks from its point in the new contents."""
    zset = impl({f"m{i}": float(i) for i in range(10)})
    cursor = zset.items()
    assert next(cursor) == ("m0", 0.0)
    assert next(cursor) == ("m1", 1.0)
    zset.__setstate__((impl({"x": 0.5, "y": 1.5, "z": 9.5}).snapshot(), False))
    assert list(cursor) == [("y", 1.5), ("z", 9.5)]
    assert list(zset.items()) == [("x", 0.5), ("y", 1.5), ("z", 9.5)]
    zset._check()
