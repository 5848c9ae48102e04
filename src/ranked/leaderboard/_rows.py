"""Rows of a board read from the engine: consecutive pairs plus ranks in one style.

Only the first row costs engine descents (O(log n)); every later rank follows from the
row before it, because the rows are consecutive in board order.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.zset import SortedSet
from ._requests import Row

__all__ = ["rows"]


def rows(
    zset: SortedSet,
    pairs: Sequence[tuple[str | bytes, float]],
    first_index: int | None,
    reverse: bool,
    style: str,
) -> list[Row]:
    """Rows for consecutive ``pairs`` starting at 0-based board position ``first_index``
    (looked up when None). O(log n + k)."""
    if not pairs:
        return []
    first_member = pairs[0][0]
    if first_index is None and style != "dense":
        first_index = zset.index(first_member, reverse=reverse)
        assert first_index is not None
    if style == "unique":
        assert first_index is not None
        return [
            (member, score, first_index + offset + 1)  # type: ignore[misc]
            for offset, (member, score) in enumerate(pairs)
        ]
    rank = zset.rank(first_member, style=style, reverse=reverse)  # type: ignore[arg-type]
    assert rank is not None
    result: list[Row] = []
    previous = pairs[0][1]
    dense = style == "dense"
    for offset, (member, score) in enumerate(pairs):
        if score != previous:
            # A new score: dense ranks step by one; a competition rank is the position.
            rank = rank + 1 if dense else first_index + offset + 1  # type: ignore[operator]
            previous = score
        result.append((member, score, rank))  # type: ignore[arg-type]
    return result
