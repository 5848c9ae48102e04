"""Composite packing shared by the backends: integer arithmetic, checked budgets.

The arithmetic is the one :class:`ranked.backends.base.Composite` specifies: whole
milliseconds, floor division, every bound checked before a value is produced, so nothing is
ever rounded or wrapped. The memory backend packs with :func:`pack`; the Redis backends
check the layout and compute the time field here, and the Lua submit script repeats only
the score step (it needs the stored score, which lives on the server).
"""

from __future__ import annotations

import math

from ..core.scores import EXACT_BITS
from ..errors import LayoutError, OutOfRangeError
from ._requests import Composite

__all__ = [
    "check_layout",
    "integer_score",
    "pack",
    "score_bounds",
    "stored_score",
    "time_field",
]


def check_layout(layout: Composite) -> None:
    """Raise ``LayoutError`` for a layout whose packed values could not be exact."""
    if layout.score_bits < 1 or layout.time_bits < 1:
        raise LayoutError(
            f"score_bits and time_bits must be positive, not "
            f"{layout.score_bits} and {layout.time_bits}"
        )
    if layout.score_bits + layout.time_bits > EXACT_BITS:
        raise LayoutError(
            f"score_bits + time_bits = {layout.score_bits + layout.time_bits} > {EXACT_BITS}: "
            "packed values would not be exact in a float64"
        )
    if layout.unit_ms < 1:
        raise LayoutError(f"unit_ms must be a positive number of ms, not {layout.unit_ms}")


def integer_score(value: float) -> int:
    """The submitted value as an exact integer score (``value`` is already finite)."""
    if value != math.floor(value):
        raise OutOfRangeError(f"a composite score must be a whole number, not {value!r}")
    return int(value)


def stored_score(layout: Composite, packed: float) -> int:
    """The integer score inside a stored packed value (``packed // 2**time_bits``)."""
    if not math.isfinite(packed):
        raise OutOfRangeError(f"stored value {packed!r} is not a packed composite score")
    return math.floor(packed) >> layout.time_bits


def time_field(layout: Composite, now_ms: int) -> int:
    """The low bits for the instant ``now_ms``: the offset, reversed unless lower is better."""
    span = 1 << layout.time_bits
    offset = (now_ms - layout.epoch_ms) // layout.unit_ms
    if not 0 <= offset < span:
        raise OutOfRangeError(
            f"time {now_ms} ms is outside the composite budget: offset {offset} units of "
            f"{layout.unit_ms} ms from epoch {layout.epoch_ms} ms is not in [0, {span - 1}]"
        )
    return offset if layout.lower_is_better else span - 1 - offset


def score_bounds(layout: Composite) -> tuple[int, int]:
    """The smallest and largest integer score the layout's score bits hold."""
    low = -(1 << layout.score_bits) if layout.signed else 0
    return low, (1 << layout.score_bits) - 1


def pack(layout: Composite, score: int, now_ms: int) -> float:
    """``score * 2**time_bits + time field`` for the instant ``now_ms``, as an exact float."""
    field = time_field(layout, now_ms)
    low, high = score_bounds(layout)
    if not low <= score <= high:
        raise OutOfRangeError(
            f"score {score} is outside [{low}, {high}], the range of "
            f"{layout.score_bits} score bits" + ("" if layout.signed else " (unsigned)")
        )
    return float(score * (1 << layout.time_bits) + field)
