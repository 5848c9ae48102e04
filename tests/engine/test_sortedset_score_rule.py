"""How a score argument becomes a float: as Python's ``float(x)`` makes it, on both engines.

Exact floats and ints are taken by value. Anything else whose type has ``__float__``
or ``__index__`` goes through ``float(x)``: a float subclass with its own ``__float__``
is converted by that method, as ``float()`` converts it (the C engine once read the
subclass's stored value instead, so the two engines disagreed). Text is refused, even
where ``float()`` would parse it. The rule holds for every argument read as a score:
scores, increments, range bounds, cursor points and weights.
"""

from __future__ import annotations

import array
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from ranked.errors import InvalidScoreError

from .conftest import Impl

INF = float("inf")


class OwnFloat(float):
    """A float subclass whose ``__float__`` answers something else than its value."""

    def __float__(self) -> float:
        return float.__float__(self) + 100.0


class PlainFloat(float):
    """A float subclass that keeps float's own ``__float__``."""


class IntWithFloat(int):
    def __float__(self) -> float:
        return int(self) + 0.5


class OnlyIndex:
    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


class NaNFloat(float):
    def __float__(self) -> float:
        return float("nan")


NUMBERS: list[Any] = [
    OwnFloat(1.0),
    PlainFloat(2.5),
    IntWithFloat(3),
    OnlyIndex(7),
    True,
    Fraction(1, 3),
    Decimal("2.25"),
    -0.0,
    10**20,
]


def test_python_float_honours_a_subclass_float() -> None:
    """The rule is float()'s own: the reference both engines follow."""
    assert float(OwnFloat(1.0)) == 101.0
    assert float(PlainFloat(2.5)) == 2.5
    assert float(IntWithFloat(3)) == 3.5
    assert float(OnlyIndex(7)) == 7.0


def number_id(number: Any) -> str:
    return f"{type(number).__name__}({float(number)!r})"


@pytest.mark.parametrize("number", NUMBERS, ids=number_id)
def test_a_score_is_float_of_the_argument(impl: Impl, number: Any) -> None:
    expected = float(number)
    zset = impl()
    zset.add("a", number)
    zset.add_many([("b", number)])
    zset.load({"c": number})
    assert impl({"d": number}).score("d") == expected
    assert zset.scores(["a", "b", "c"]) == [expected] * 3
    assert zset.incr("e", number) == expected
    assert zset.incr("e", number) == expected + expected
    zset._check()


@pytest.mark.parametrize("number", NUMBERS, ids=number_id)
def test_bounds_points_and_weights_are_float_of_the_argument(impl: Impl, number: Any) -> None:
    value = float(number)
    zset = impl({"below": value - 1.0, "at": value, "above": value + 1.0})
    if value - 1.0 == value:  # too large to have neighbours
        return
    assert [m for m, _ in zset.range_by_score(number, number)] == ["at"]
    assert zset.count_by_score(number, INF) == 2
    assert zset.count_by_score(-INF, number, max_exclusive=True) == 1
    assert [m for m, _ in zset.items_after(number, "at", 5)] == ["above"]
    assert [m for m, _ in zset.items(after=(number, "at"))] == ["above"]
    assert zset.remove_range_by_score(number, number) == 1
    weighted = impl.union([impl({"x": 2.0})], weights=[number])
    assert weighted.score("x") == 2.0 * value
    weighted = impl.inter([impl({"x": 2.0})], weights=[number])
    assert weighted.score("x") == 2.0 * value


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("1.5", id="str"),
        pytest.param(b"1.5", id="bytes"),
        pytest.param(bytearray(b"1.5"), id="bytearray"),
        pytest.param(memoryview(b"1.5"), id="memoryview"),
        pytest.param(array.array("b", b"1.5"), id="array"),
    ],
)
def test_text_is_refused_even_where_float_parses_it(impl: Impl, text: Any) -> None:
    zset = impl()
    uses: list[Callable[[], object]] = [
        lambda: zset.add("a", text),
        lambda: zset.incr("a", text),
        lambda: zset.range_by_score(text, 2.0),
        lambda: impl.union([zset], weights=[text]),
    ]
    for use in uses:
        with pytest.raises(TypeError, match="must be a number"):
            use()
    assert len(zset) == 0


def test_a_subclass_float_that_answers_nan_is_refused(impl: Impl) -> None:
    zset = impl({"a": 1.0})
    with pytest.raises(InvalidScoreError):
        zset.add("b", NaNFloat(1.0))
    with pytest.raises(InvalidScoreError):
        impl.union([zset], weights=[NaNFloat(1.0)])
    assert list(zset.items()) == [("a", 1.0)]


def test_a_float_that_returns_no_float_is_a_type_error(impl: Impl) -> None:
    class Broken:
        def __float__(self) -> Any:
            return "1.0"

    with pytest.raises(TypeError, match="score must be a number, not Broken"):
        impl().add("a", Broken())  # type: ignore[arg-type]
