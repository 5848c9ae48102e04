"""Secondary tie-break: the sorted set orders by score, a separate value orders ties.

Seed 000's "secondary hash" strategy keeps the plain score in the sorted set and a
tie-break value per member in a Redis hash (for example the time the score was
reached); ties are re-ordered on read. Redis itself orders ties by member bytes, so a
page cut by index may split a group of tied members the wrong way: the right members
for the page may lie just outside it. The fix is to over-fetch around the page,
re-sort, and use the result only where the fetched window holds every tied member.

These functions are that algorithm, with no I/O:

1. :func:`overfetch` says which index window to read (``ZRANGE ... REV`` by index);
2. :func:`resort_page` re-sorts it by (score best-first, tie-break value) and returns
   the page, or ``None`` when a tie group at a window edge may continue beyond the
   window and overlaps the page: read again with a larger ``extra`` (doubling it).

:func:`tie_hash` is one deterministic tie-break value: a stable 64-bit hash of the
member (the same in every process, unlike :func:`hash`), for boards that want ties in
an arbitrary but fixed and unbiased order instead of by member bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["IndexWindow", "overfetch", "resort_page", "tie_hash"]

M = TypeVar("M")


def tie_hash(member: str | bytes, salt: bytes = b"") -> int:
    """A stable unsigned 64-bit hash of ``member`` (BLAKE2b), the same in every process.

    ``salt`` (up to 16 bytes) gives a different fixed order per board or season.
    """
    raw = member.encode("utf-8") if isinstance(member, str) else bytes(member)
    digest = hashlib.blake2b(raw, digest_size=8, salt=salt).digest()
    return int.from_bytes(digest, "big")


@dataclass(frozen=True, slots=True)
class IndexWindow:
    """A 0-based index range ``[start, stop)`` to read from the sorted set."""

    start: int
    stop: int


def overfetch(offset: int, limit: int, extra: int) -> IndexWindow:
    """The window to read for the page ``[offset, offset + limit)`` with ``extra`` more each side.

    ``extra`` is clipped at index 0 above the page. Raises ``ValueError`` for a
    negative argument or a zero ``limit``.
    """
    if offset < 0 or limit < 1 or extra < 0:
        raise ValueError(
            f"need offset >= 0, limit >= 1, extra >= 0, not {offset}, {limit}, {extra}"
        )
    return IndexWindow(max(0, offset - extra), offset + limit + extra)


def resort_page(
    rows: Sequence[tuple[M, float]],
    window: IndexWindow,
    offset: int,
    limit: int,
    tiebreak: Callable[[M], int | float | str | bytes],
    *,
    higher_is_better: bool = True,
) -> list[tuple[M, float]] | None:
    """The page ``[offset, offset + limit)`` in (score best-first, ``tiebreak`` ascending) order.

    ``rows`` are the (member, score) pairs read at indices ``window.start`` onwards,
    best first; fewer rows than the window asked for means the set ended. Returns
    ``None`` if the page overlaps a tie group at a window edge that may continue
    outside the window (read again with more ``extra``). O(k log k) for k rows.
    """
    if len(rows) > window.stop - window.start:
        raise ValueError("more rows than the window asked for")
    if offset < window.start or offset + limit > window.stop:
        raise ValueError(f"page [{offset}, {offset + limit}) is not inside window {window}")
    sign = -1.0 if higher_is_better else 1.0
    ordered = sorted(rows, key=lambda row: (sign * row[1], tiebreak(row[0])))
    first = offset - window.start
    last = min(first + limit, len(ordered))
    if first >= last:
        return []
    if window.start > 0:  # tied members may continue above the window
        top = ordered[0][1]
        top_group = next((i for i, row in enumerate(ordered) if row[1] != top), len(ordered))
        if first < top_group:
            return None
    if len(rows) == window.stop - window.start:  # tied members may continue below the window
        bottom = ordered[-1][1]
        below = next((i for i in range(len(ordered) - 1, -1, -1) if ordered[i][1] != bottom), -1)
        if last > below + 1:
            return None
    return ordered[first:last]
