"""ZUNION / ZINTER / ZDIFF arithmetic for the pure-Python sorted set.

The rules follow Redis 7.0 to the bit, because float sums depend on the order
of the additions:

* inputs are visited in ascending order of size (ties keep argument order);
* ``weight * score`` is computed per input; in a union every NaN product
  (``0 * inf``) counts as 0, in an intersection only the product of the
  smallest (driving) input does: the others go into the aggregate as they are;
* SUM turns a NaN total (``inf + -inf``) into 0; MIN/MAX keep the current
  value unless the new one is strictly smaller/greater (so NaN never wins).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from ._skiplist_args import AGGREGATES, to_score

__all__ = [
    "Combine",
    "Source",
    "diff_pairs",
    "inter_scores",
    "smallest_first",
    "union_scores",
    "weigh_inputs",
]


class Source(Protocol):
    """What the algebra needs from a sorted set."""

    def __len__(self) -> int: ...

    def _pairs(self) -> Iterator[tuple[bytes, float]]: ...

    def _lookup(self, member: bytes) -> float | None: ...


Combine = Callable[[list[tuple[Source, float]], str], dict[bytes, float]]
"""``union_scores`` or ``inter_scores``: the (set, weight) inputs and the aggregate."""


def weigh_inputs(
    sets: Sequence[Source], weights: Sequence[object] | None, aggregate: object
) -> list[tuple[Source, float]]:
    """Validate the arguments and pair each set with its weight, in argument order.

    The weights are converted here (``__len__``, iteration and each ``__float__`` may
    run any code, even change a set): the sets are read only afterwards.
    """
    if len(sets) == 0:
        raise ValueError("at least one input set is required")
    if weights is None:
        weight_values = [1.0] * len(sets)
    else:
        if len(weights) != len(sets):
            raise ValueError("weights must have one entry per input set")
        weight_values = [to_score(weight, "weight") for weight in weights]
        if len(weight_values) != len(sets):
            raise ValueError("weights must have one entry per input set")
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, not {aggregate!r}")
    return list(zip(sets, weight_values, strict=True))


def smallest_first(paired: list[tuple[Source, float]]) -> list[tuple[Source, float]]:
    """The (set, weight) pairs by ascending set size; ties keep argument order, as Redis."""
    return sorted(paired, key=lambda entry: len(entry[0]))  # sorted() is stable


def _combine(current: float, value: float, aggregate: str) -> float:
    if aggregate == "sum":
        total = current + value
        return 0.0 if total != total else total
    if aggregate == "min":
        return value if value < current else current
    return value if value > current else current


def union_scores(inputs: list[tuple[Source, float]], aggregate: str) -> dict[bytes, float]:
    """member -> aggregated score over every input."""
    result: dict[bytes, float] = {}
    for source, weight in inputs:
        for member, score in source._pairs():
            value = weight * score
            if value != value:
                value = 0.0
            current = result.get(member)
            result[member] = value if current is None else _combine(current, value, aggregate)
    return result


def inter_scores(inputs: list[tuple[Source, float]], aggregate: str) -> dict[bytes, float]:
    """member -> aggregated score, for members present in every input."""
    result: dict[bytes, float] = {}
    (driver, driver_weight), others = inputs[0], inputs[1:]
    for member, score in driver._pairs():
        total = driver_weight * score
        if total != total:
            total = 0.0
        for source, weight in others:
            found = source._lookup(member)
            if found is None:
                break
            total = _combine(total, found * weight, aggregate)
        else:
            result[member] = total
    return result


def diff_pairs(sets: Sequence[Source]) -> list[tuple[bytes, float]]:
    """(member, score) of the first set for members absent from all the others."""
    if len(sets) == 0:
        raise ValueError("at least one input set is required")
    first, others = sets[0], sets[1:]
    return [
        (member, score)
        for member, score in first._pairs()
        if all(other._lookup(member) is None for other in others)
    ]
