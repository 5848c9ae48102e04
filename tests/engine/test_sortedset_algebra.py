"""union / inter / diff with Redis 7.0's weight, aggregate and ordering rules (checked
against a real redis-server 7.0.15 when these expectations were written)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ranked.errors import InvalidScoreError

from .conftest import Impl

INF = float("inf")


def as_dict(zset: Any) -> dict[str, float]:
    zset._check()
    return {str(member): score for member, score in zset.items()}


def test_union_sum_default(impl: Impl) -> None:
    a = impl({"x": 1, "y": 2})
    b = impl({"y": 3, "z": 4})
    result = impl.union([a, b])
    assert isinstance(result, impl)
    assert list(result.items()) == [("x", 1.0), ("z", 4.0), ("y", 5.0)]
    assert as_dict(a) == {"x": 1.0, "y": 2.0}  # inputs untouched


def test_union_weights_and_aggregates(impl: Impl) -> None:
    a = impl({"x": 1, "y": 2})
    b = impl({"y": 3, "z": 4})
    assert as_dict(impl.union([a, b], [2, 10])) == {"x": 2.0, "y": 34.0, "z": 40.0}
    assert as_dict(impl.union([a, b], aggregate="min")) == {"x": 1.0, "y": 2.0, "z": 4.0}
    assert as_dict(impl.union([a, b], aggregate="max")) == {"x": 1.0, "y": 3.0, "z": 4.0}
    assert as_dict(impl.union([a, b], [1, -1], "min")) == {"x": 1.0, "y": -3.0, "z": -4.0}


def test_union_nan_products_and_sums_become_zero(impl: Impl) -> None:
    a = impl({"z": INF})
    b = impl({"z": -INF})
    assert as_dict(impl.union([a, b])) == {"z": 0.0}  # inf + -inf
    assert as_dict(impl.union([a, b], [0, 1])) == {"z": -INF}  # 0 * inf counts as 0
    assert as_dict(impl.union([a], [0])) == {"z": 0.0}


def test_inter_basics(impl: Impl) -> None:
    a = impl({"x": 1, "y": 2, "w": 7})
    b = impl({"y": 3, "x": 4})
    c = impl({"y": 10})
    assert as_dict(impl.inter([a, b])) == {"x": 5.0, "y": 5.0}
    assert as_dict(impl.inter([a, b, c], aggregate="max")) == {"y": 10.0}
    assert as_dict(impl.inter([a, b], [1, 0.5], "min")) == {"x": 1.0, "y": 1.5}
    assert len(impl.inter([a, impl()])) == 0
    assert as_dict(impl.inter([a])) == as_dict(a)


def test_inter_nan_rules_follow_redis(impl: Impl) -> None:
    # Only the smallest input's NaN product is zeroed; a later NaN product poisons a SUM
    # (-> 0) and is ignored by MIN/MAX.
    a = impl({"m": 5, "x": 1})
    b = impl({"m": INF, "x": 2, "y": 3})
    assert as_dict(impl.inter([a, b], [1, 0])) == {"m": 0.0, "x": 1.0}
    assert as_dict(impl.inter([a, b], [1, 0], "min")) == {"x": 0.0, "m": 5.0}
    assert as_dict(impl.inter([a, b], [1, 0], "max")) == {"x": 1.0, "m": 5.0}
    c = impl({"y": INF, "x": 1})
    d = impl({"y": -INF, "x": 1})
    assert as_dict(impl.inter([c, d])) == {"y": 0.0, "x": 2.0}
    assert as_dict(impl.inter([c, d], [0, 1])) == {"y": -INF, "x": 1.0}


def test_inputs_are_summed_smallest_first(impl: Impl) -> None:
    # 1e16 + 1 rounds back to 1e16, but 1 + 1 + 1e16 is exact: the order shows.
    big = impl({"m": 1e16, "p": 0, "q": 0})
    one = impl({"m": 1})
    two = impl({"m": 1, "r": 0})
    expected = 1e16 + 2
    assert impl.union([big, one, two]).score("m") == expected
    assert impl.inter([big, one, two]).score("m") == expected
    assert expected != 1e16 + 1 + 1  # the argument order would round differently


def test_equal_sizes_keep_argument_order(impl: Impl) -> None:
    a = impl({"m": 1e16})
    b = impl({"m": 1})
    c = impl({"m": 1})
    assert impl.union([a, b, c]).score("m") == 1e16 + 1 + 1
    assert impl.union([b, c, a]).score("m") == 1 + 1 + 1e16


def test_same_set_twice(impl: Impl) -> None:
    a = impl({"x": 1, "y": 2})
    assert as_dict(impl.union([a, a])) == {"x": 2.0, "y": 4.0}
    assert as_dict(impl.inter([a, a], [1, 3])) == {"x": 4.0, "y": 8.0}
    assert len(impl.diff([a, a])) == 0


def test_diff(impl: Impl) -> None:
    a = impl({"x": 1, "y": 2, "z": -0.0})
    b = impl({"y": 100})
    c = impl({"w": 1})
    result = impl.diff([a, b, c])
    assert as_dict(result) == {"x": 1.0, "z": 0.0}
    kept = result.score("z")
    assert kept is not None and math.copysign(1.0, kept) < 0  # first-set score, exactly
    assert as_dict(impl.diff([a])) == as_dict(a)
    assert len(impl.diff([impl(), a])) == 0


def test_results_keep_ties_ordered_and_raw_flag(impl: Impl) -> None:
    a = impl({"b": 1, "a": 1})
    b = impl({"c": 1})
    assert list(impl.union([a, b])) == ["a", "b", "c"]
    raw = impl.union([a, b], raw=True)
    assert raw.raw is True
    assert list(raw) == [b"a", b"b", b"c"]
    assert list(impl.inter([a, a], raw=True)) == [b"a", b"b"]
    assert list(impl.diff([a, b], raw=True)) == [b"a", b"b"]


def test_bad_arguments(impl: Impl) -> None:
    a = impl({"x": 1})
    with pytest.raises(ValueError):
        impl.union([])
    with pytest.raises(ValueError):
        impl.inter([])
    with pytest.raises(ValueError):
        impl.diff([])
    with pytest.raises(ValueError):
        impl.union([a, a], [1])
    with pytest.raises(ValueError):
        impl.inter([a], [1, 2])
    with pytest.raises(InvalidScoreError):
        impl.union([a], [float("nan")])
    with pytest.raises(ValueError):
        impl.union([a], aggregate="avg")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        impl.union([a, {"x": 1}])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        impl.union([a], ["1"])  # type: ignore[list-item]
    assert as_dict(a) == {"x": 1.0}
