"""Argument checking for the pure-Python sorted set (``skiplist.py``).

Every public method converts and validates all of its inputs with these helpers
*before* it touches the structure, so a bad argument leaves the set unchanged.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from typing import Literal

from ..errors import InvalidScoreError

__all__ = [
    "AGGREGATES",
    "RANK_STYLES",
    "Aggregate",
    "Member",
    "Pairs",
    "RankStyle",
    "check_flags",
    "to_count",
    "to_member",
    "to_member_or_none",
    "to_pairs",
    "to_score",
]

Member = str | bytes
Pairs = Mapping[str, float] | Mapping[bytes, float] | Iterable[tuple[Member, float]]
RankStyle = Literal["unique", "competition", "dense"]
Aggregate = Literal["sum", "min", "max"]

RANK_STYLES = ("unique", "competition", "dense")
AGGREGATES = ("sum", "min", "max")


def to_member(value: object) -> bytes:
    """A member as the bytes the structure stores (``str`` -> UTF-8, surrogateescape)."""
    if isinstance(value, bytes):
        return value if type(value) is bytes else bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    raise TypeError(f"member must be str or bytes, not {type(value).__name__}")


def to_member_or_none(value: object) -> bytes | None:
    """A lex bound: ``None`` means unbounded (Redis ``-`` / ``+``)."""
    return None if value is None else to_member(value)


def to_score(value: object, what: str = "score") -> float:
    """A finite-or-infinite float, as ``float(value)`` gives it; NaN raises
    ``InvalidScoreError``.

    Exact floats and ints are taken by value; anything else whose type has
    ``__float__`` or ``__index__`` (float and int subclasses included) goes through
    ``float()``, so a subclass's own ``__float__`` is honoured, as ``float()`` honours
    it. Text is refused even though ``float()`` would parse it (``str``, ``bytes``,
    ``bytearray``, ``memoryview`` and other buffers): text parsing is the command
    layer's job, with Redis's own grammar. The C engine follows the same rule.
    """
    kind = type(value)
    if kind is float:
        result: float = value  # type: ignore[assignment]
    elif kind is int:
        result = float(value)  # type: ignore[arg-type]
    elif isinstance(value, str | bytes | bytearray) or not (
        hasattr(kind, "__float__") or hasattr(kind, "__index__")
    ):
        raise TypeError(f"{what} must be a number, not {kind.__name__}")
    else:
        try:
            result = float(value)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(f"{what} must be a number, not {kind.__name__}") from None
    if result != result:
        raise InvalidScoreError(f"{what} is not a number (NaN)")
    return result


def to_count(value: object, what: str = "count") -> int:
    """An integer argument (``bool`` and anything with ``__index__`` accepted)."""
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(value).__name__}") from None


def check_flags(nx: bool, xx: bool, gt: bool, lt: bool) -> None:
    """Refuse the ZADD flag combinations Redis refuses."""
    if nx and xx:
        raise ValueError("XX and NX options at the same time are not compatible")
    if (gt and lt) or (nx and (gt or lt)):
        raise ValueError("GT, LT, and/or NX options at the same time are not compatible")


def to_pairs(pairs: object) -> list[tuple[bytes, float]]:
    """Materialise and validate (member, score) pairs from a mapping or an iterable."""
    if isinstance(pairs, str | bytes | bytearray):
        raise TypeError("pairs must be a mapping or an iterable of (member, score) pairs")
    items: Iterable[object]
    if isinstance(pairs, Mapping):
        items = pairs.items()
    elif isinstance(pairs, Iterable):
        items = pairs
    else:
        raise TypeError(f"pairs must be a mapping or an iterable, not {type(pairs).__name__}")
    result: list[tuple[bytes, float]] = []
    for item in items:
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError("each pair must be a (member, score) tuple")
        result.append((to_member(item[0]), to_score(item[1])))
    return result
