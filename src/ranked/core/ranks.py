"""Rank styles: how tied scores turn into 1-based rank numbers.

==============  ===============  ==================  ===========================
style           100,100,90,80    SQL                 from counts (O(log n) each)
==============  ===============  ==================  ===========================
``unique``      1, 2, 3, 4       ``ROW_NUMBER()``    0-based index + 1
``competition`` 1, 1, 3, 4       ``RANK()``          members strictly better + 1
``dense``       1, 1, 2, 3       ``DENSE_RANK()``    distinct scores strictly better + 1
==============  ===============  ==================  ===========================

:func:`ranks` is the plain reference (backends are tested against it);
:func:`rank_from_counts` is the formula a backend uses with counts it reads in
O(log n) (ZREVRANK, ZCOUNT, and for dense the companion zset of distinct scores).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from ..errors import UnknownRankStyleError

__all__ = ["RankStyle", "rank_from_counts", "ranks"]


class RankStyle(StrEnum):
    """How ties share rank numbers. ``str`` valued, so it is its own wire format."""

    UNIQUE = "unique"
    """Every member its own number; ties ordered by the board's tie-break (ROW_NUMBER)."""
    COMPETITION = "competition"
    """Ties share the best number, the next number skips: 1, 1, 3 (RANK; "sparse")."""
    DENSE = "dense"
    """Ties share a number, the next number does not skip: 1, 1, 2 (DENSE_RANK)."""

    @classmethod
    def parse(cls, value: str | RankStyle) -> RankStyle:
        """The style named ``value`` (case-insensitive; ``sparse`` means competition).

        Raises :class:`~ranked.errors.UnknownRankStyleError` for any other name.
        """
        if isinstance(value, RankStyle):
            return value
        if isinstance(value, str):
            name = value.strip().lower()
            if name == "sparse":
                return cls.COMPETITION
            for style in cls:
                if style.value == name:
                    return style
        names = ", ".join(style.value for style in cls)
        raise UnknownRankStyleError(f"unknown rank style {value!r}; expected one of: {names}")


def rank_from_counts(style: RankStyle, *, index: int, better: int, distinct_better: int) -> int:
    """A member's 1-based rank from counts a backend reads in O(log n).

    ``index`` is its 0-based position best-first (ZREVRANK), ``better`` the number
    of members with a strictly better score, ``distinct_better`` the number of
    distinct strictly better scores. Only the count the style needs is used.
    """
    if style is RankStyle.UNIQUE:
        return index + 1
    if style is RankStyle.COMPETITION:
        return better + 1
    return distinct_better + 1


def ranks(scores: Sequence[float], style: RankStyle | str) -> list[int]:
    """The rank of every position of ``scores``, given in board order (best first). O(n).

    Equal neighbouring scores are ties, as in SQL's window functions over an
    ordered partition. Example: ``ranks([100, 100, 90, 80], "dense") == [1, 1, 2, 3]``.
    """
    resolved = RankStyle.parse(style)
    result: list[int] = []
    better = distinct_better = 0
    for index, score in enumerate(scores):
        if index and score != scores[index - 1]:
            better = index
            distinct_better += 1
        result.append(
            rank_from_counts(resolved, index=index, better=better, distinct_better=distinct_better)
        )
    return result
