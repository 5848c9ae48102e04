"""Python code run by an argument in the middle of a call: both engines give one answer.

A weight's ``__float__``, a weights sequence's ``__len__`` / ``__getitem__`` /
``__iter__`` and a score's ``__float__`` / ``__index__`` are Python code that the
engine runs while it converts its arguments. Such code may drop the last other
reference to an input set, or change an input set. The rule on both engines: every
argument is converted first and the inputs are held by the call, so the answer is the
one for the sets as they are once the arguments are converted, and nothing is read from
freed memory (the C engine once read the freed sets: a crash, or an AddressSanitizer
heap-use-after-free under ``make asan``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import pytest

from .conftest import Impl


def churn(impl: Impl) -> None:
    """Reuse freed memory, so a read of a freed set sees other data (or crashes)."""
    junk = [impl({f"junk{i}:{j}": float(j) for j in range(40)}) for i in range(60)]
    del junk
    gc.collect()


def two_sets(impl: Impl) -> list[Any]:
    """A list holding the only references to two fresh sets."""
    return [impl({"a": 1.0, "b": 2.0}), impl({"b": 3.0, "c": 4.0, "d": 5.0})]


class DroppingWeight:
    """A weight whose ``__float__`` empties the list that holds the input sets."""

    def __init__(self, holder: list[Any], impl: Impl, value: float) -> None:
        self.holder = holder
        self.impl = impl
        self.value = value

    def __float__(self) -> float:
        self.holder.clear()
        churn(self.impl)
        return self.value


class DroppingWeights:
    """Weights with the old sequence protocol (``__len__`` and ``__getitem__``, which
    iteration falls back to) and, when ``hook`` is "iter", an ``__iter__`` too; the hook
    named by ``hook`` empties the list that holds the input sets the first time it runs."""

    def __init__(self, holder: list[Any], impl: Impl, values: list[float], hook: str) -> None:
        self.holder = holder
        self.impl = impl
        self.values = values
        self.hook = hook

    def drop(self, where: str) -> None:
        if where == self.hook and self.holder:
            self.holder.clear()
            churn(self.impl)

    def __len__(self) -> int:
        self.drop("len")
        return len(self.values)

    def __getitem__(self, index: int) -> float:
        self.drop("getitem")
        return self.values[index]


class DroppingIterWeights(DroppingWeights):
    def __iter__(self) -> Iterator[float]:
        self.drop("iter")
        return iter(list(self.values))


UNION = {"a": 1.0, "b": 2.0 + 3.0 * 2, "c": 8.0, "d": 10.0}  # weights [1, 2], SUM
INTER = {"b": 2.0 + 3.0 * 2}


def as_dict(zset: Any) -> dict[str, float]:
    zset._check()
    return {str(member): score for member, score in zset.items()}


@pytest.mark.parametrize("operation", ["union", "inter"])
def test_weight_float_that_drops_the_input_sets(impl: Impl, operation: str) -> None:
    sets = two_sets(impl)
    algebra: Callable[..., Any] = getattr(impl, operation)
    result = algebra(sets, weights=[1.0, DroppingWeight(sets, impl, 2.0)])
    assert sets == []
    assert as_dict(result) == (UNION if operation == "union" else INTER)


@pytest.mark.parametrize("operation", ["union", "inter"])
@pytest.mark.parametrize("hook", ["len", "getitem", "iter"])
def test_weights_sequence_that_drops_the_input_sets(impl: Impl, operation: str, hook: str) -> None:
    sets = two_sets(impl)
    algebra: Callable[..., Any] = getattr(impl, operation)
    kind = DroppingIterWeights if hook == "iter" else DroppingWeights
    result = algebra(sets, weights=kind(sets, impl, [1.0, 2.0], hook))
    assert sets == []
    assert as_dict(result) == (UNION if operation == "union" else INTER)


@pytest.mark.parametrize("operation", ["union", "inter", "diff"])
def test_aggregate_and_raw_that_drop_the_input_sets(impl: Impl, operation: str) -> None:
    sets = two_sets(impl)

    class DroppingFlag:
        def __bool__(self) -> bool:
            sets.clear()
            churn(impl)
            return False

    algebra: Callable[..., Any] = getattr(impl, operation)
    result = algebra(sets, raw=DroppingFlag())
    assert not result.raw
    expected = {
        "union": {"a": 1.0, "b": 5.0, "c": 4.0, "d": 5.0},
        "inter": {"b": 5.0},
        "diff": {"a": 1.0},
    }[operation]
    assert as_dict(result) == expected


def test_input_sets_changed_by_a_weight_count_as_changed(impl: Impl) -> None:
    """A weight's ``__float__`` that writes to an input set: the result is that of the
    sets after the write (the arguments are converted before any set is read)."""
    sets = two_sets(impl)

    class WritingWeight:
        def __float__(self) -> float:
            sets[0].add("z", 100.0)
            sets[1].clear()
            sets[1].add("a", 7.0)
            return 3.0

    weights: list[Any] = [WritingWeight(), 1.0]
    result = impl.union(sets, weights=weights)
    assert as_dict(result) == {"a": 3.0 + 7.0, "b": 6.0, "z": 300.0}
    weights = [1.0, WritingWeight()]
    result = impl.inter(sets, weights=weights)
    assert as_dict(result) == {"a": 1.0 + 21.0}


def test_a_lazy_sequence_of_fresh_sets_is_held_by_the_call(impl: Impl) -> None:
    """``sets`` whose items exist only while the call holds them."""

    class Fresh(Sequence[Any]):
        @overload
        def __getitem__(self, index: int) -> Any: ...
        @overload
        def __getitem__(self, index: slice) -> Sequence[Any]: ...
        def __getitem__(self, index: int | slice) -> Any:
            if isinstance(index, slice):
                raise TypeError("no slices")
            if index > 1:
                raise IndexError(index)
            return impl({"m": float(index + 1), f"only{index}": 1.0})

        def __len__(self) -> int:
            churn(impl)
            return 2

    class ChurningWeight:
        def __float__(self) -> float:
            churn(impl)
            return 1.0

    weights: list[Any] = [ChurningWeight(), ChurningWeight()]
    assert as_dict(impl.union(Fresh(), weights)) == {"m": 3.0, "only0": 1.0, "only1": 1.0}
    assert as_dict(impl.inter(Fresh(), weights)) == {"m": 3.0}
    assert as_dict(impl.diff(Fresh())) == {"only0": 1.0}
