"""Secondary tie-break (``tie_break="secondary"``, seed 000's "secondary hash").

The sorted set holds the plain score; the window's ties hash
(:meth:`ranked.core.keys.BoardKeys.ties`) holds one integer per member, the tie-break
value: by default the instant of the submission that set the score, in Unix ms, or the
``tie=`` a caller gives. Among equal scores the LOWER value wins (earlier achiever);
equal values (or members without one, which come last) fall back to member bytes,
ascending.

Writes are atomic: each window's :class:`~ranked.backends.base.Target` names its ties
hash (``ties_key``) and every submission carries the value (``SubmitRequest.tie``, decimal
ASCII), so the backend writes it in the same step as the score, only where the score
changed, and drops the values of members it trims (``keep``) or removes.

Reads re-sort by (score, value) in Python with :mod:`ranked.core.ties`:

- pages, top-N and score ranges over-fetch ``extra`` rows each side, re-sort, and when
  a tie group at the edge of the fetched window may continue past it, read again with
  twice the ``extra``: O(log n + k + g) for a page of k whose edge groups hold g members;
- unique rank = 1 + members with a better score (competition rank, O(log n)) + members
  with an equal score and a better value: the tie group is counted (ZCOUNT s s) and,
  when it has more than one member, read whole (in chunks of ``max_page_size``) with its
  values: O(log n + g) and 2 + 2 * ceil(g / max_page_size) calls for a group of g;
- competition and dense ranks do not depend on the order of ties: unchanged.

Every read here is several backend calls, each atomic, not atomic as a whole.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from ..core.lex import LEX_INT_MAX, LEX_INT_MIN
from ..core.models import Around
from ..core.ranks import RankStyle
from ..core.ties import overfetch, resort_page
from ._plan_core import Call, PlanCore, Steps
from ._requests import Row, Target

__all__ = ["Ties", "tie_value_bytes"]

_BIAS: Final = 1 << 63
_MISSING: Final = b"~"  # sorts after every 20-digit value: members without one come last
_MIN_EXTRA: Final = 8


def tie_value_bytes(value: int) -> bytes:
    """A tie-break value as stored in the ties hash (decimal ASCII)."""
    return b"%d" % value


def _sort_key(member: bytes, stored: bytes | None) -> bytes:
    """Bytes whose order is (value ascending, missing last, member bytes ascending)."""
    if stored is None:
        return _MISSING + b":" + member
    try:
        value = int(stored)
    except ValueError:
        return _MISSING + b":" + member
    value = min(max(value, LEX_INT_MIN), LEX_INT_MAX)
    return b"%020d:%s" % (value + _BIAS, member)


class Ties:
    """Reads of secondary tie-break boards (no I/O)."""

    def __init__(self, core: PlanCore) -> None:
        self.core = core

    def tie_keys(self, window_id: str, members: Sequence[bytes]) -> Steps[dict[bytes, bytes]]:
        """Sort keys of ``members`` from the window's ties hash (one HMGET)."""
        if not members:
            return {}
        stored: list[bytes | None] = yield (
            "hash_get",
            (self.core.ties_key(window_id), list(members)),
        )
        return {m: _sort_key(m, v) for m, v in zip(members, stored, strict=True)}

    def resorted(
        self,
        window_id: str,
        fetch: Call,
        offset: int,
        limit: int,
        style: RankStyle,
    ) -> Steps[list[Row]]:
        """Rows ``[offset, offset + limit)`` of an index range in tie-break order.

        ``fetch`` names a backend read of rows by index with two placeholders: it is
        ``("page", (target, high_first))`` (board positions) or
        ``("by_score", (target, low, high, high_first))`` (positions in a score range).
        Unique ranks are positions; other styles keep the backend's ranks.
        """
        name, args = fetch
        extra = max(limit, _MIN_EXTRA)
        read_style = style
        while True:
            window = overfetch(offset, limit, extra)
            if name == "page":
                target, high_first = args
                call_args: tuple[object, ...] = (
                    target,
                    window.start,
                    window.stop - 1,
                    high_first,
                    read_style,
                )
            else:
                target, low, high, high_first = args
                size = window.stop - window.start
                call_args = (target, low, high, window.start, size, high_first, read_style)
            rows: list[Row] = yield (name, call_args)
            keys = yield from self.tie_keys(window_id, [row[0] for row in rows])
            page = resort_page(
                [(row, row[1]) for row in rows],
                window,
                offset,
                limit,
                lambda row, keys=keys: keys[row[0]],  # type: ignore[misc]
                higher_is_better=self.core.high_first,
            )
            if page is not None:
                break
            extra *= 2
        if style is not RankStyle.UNIQUE or not page:
            return [row for row, _ in page]
        # The unique rank of the range's first row, then positions (tie groups are whole
        # inside a score range, so positions in secondary order are the board's).
        first = 1 if name == "page" else rows[0][2] - window.start
        return [(row[0], row[1], first + offset + i) for i, (row, _) in enumerate(page)]

    def tie_group(
        self, target: Target, window_id: str, score: float, style: RankStyle
    ) -> Steps[list[Row]]:
        """Every member with exactly ``score``, in tie-break order, ranked in ``style``.

        O(log n + g): ZCOUNT, then the group in chunks of ``max_page_size`` and its values.
        """
        size: int = yield ("count", (target.key, score, score))
        read_style = RankStyle.COMPETITION if style is RankStyle.UNIQUE else style
        rows: list[Row] = []
        chunk = self.core.config.max_page_size
        while len(rows) < size:
            got: list[Row] = yield (
                "by_score",
                (target, score, score, len(rows), chunk, self.core.high_first, read_style),
            )
            if not got:
                break
            rows += got
        keys = yield from self.tie_keys(window_id, [row[0] for row in rows])
        rows.sort(key=lambda row: keys[row[0]])
        if style is RankStyle.UNIQUE:
            return [(row[0], row[1], row[2] + i) for i, row in enumerate(rows)]
        return rows

    def secondary_ranks(
        self,
        target: Target,
        window_id: str,
        members: Sequence[bytes],
        style: RankStyle,
    ) -> Steps[list[tuple[float, int] | None]]:
        """(score, rank) per member, None if absent; unique ranks follow the tie-break."""
        read_style = RankStyle.COMPETITION if style is RankStyle.UNIQUE else style
        found: list[tuple[float, int] | None] = yield (
            "ranks",
            (target, list(members), self.core.high_first, read_style),
        )
        if style is not RankStyle.UNIQUE:
            return found
        groups: dict[float, dict[bytes, int]] = {}
        for hit in found:
            if hit is not None and hit[0] not in groups:
                group = yield from self.tie_group(target, window_id, hit[0], style)
                groups[hit[0]] = {row[0]: row[2] for row in group}
        answers: list[tuple[float, int] | None] = []
        for member, hit in zip(members, found, strict=True):
            if hit is None:
                answers.append(None)
            else:  # a member written between the reads may miss its group: keep its rank
                answers.append((hit[0], groups[hit[0]].get(member, hit[1])))
        return answers

    def worse_bounds(self, score: float) -> tuple[float, float]:
        """The score range strictly worse than ``score``."""
        if self.core.high_first:
            return -math.inf, math.nextafter(score, -math.inf)
        return math.nextafter(score, math.inf), math.inf

    def rows(
        self, window_id: str, target: Target, start: int, count: int, style: RankStyle
    ) -> Steps[list[Row]]:
        """``count`` rows from 0-based position ``start`` in tie-break order (the steps of
        :meth:`resorted` over board positions, no generator in between)."""
        fetch: Call = ("page", (target, self.core.high_first))
        return self.resorted(window_id, fetch, start, count, style)

    def after(
        self,
        window_id: str,
        target: Target,
        score: float,
        member: bytes,
        count: int,
        style: RankStyle,
    ) -> Steps[list[Row]]:
        """Up to ``count`` rows after (score, member) in tie-break order: the rest of the
        member's tie group (by its current tie-break value), then worse scores."""
        group = yield from self.tie_group(target, window_id, score, style)
        point = (yield from self.tie_keys(window_id, [member]))[member]
        keys = yield from self.tie_keys(window_id, [row[0] for row in group])
        rows = [row for row in group if keys[row[0]] > point][:count]
        if len(rows) < count:
            low, high = self.worse_bounds(score)
            fetch: Call = ("by_score", (target, low, high, self.core.high_first))
            rows += yield from self.resorted(window_id, fetch, 0, count - len(rows), style)
        return rows

    def around(
        self, window_id: str, target: Target, own: bytes, before: int, size: int, style: RankStyle
    ) -> Steps[Around]:
        """Up to ``size`` entries containing ``own``, ``before`` of them above it where the
        board allows (shifted at the edges), in tie-break order."""
        found = yield from self.secondary_ranks(target, window_id, [own], RankStyle.UNIQUE)
        if found[0] is None:
            return Around((), None)
        index = found[0][1] - 1
        total: int = yield ("count", (target.key,))
        start = max(0, min(index - before, total - size))
        rows = yield from self.rows(window_id, target, start, min(size, total - start), style)
        entries = tuple(self.core.entries(rows))
        position = next((i for i, row in enumerate(rows) if row[0] == own), index - start)
        return Around(entries, min(position, len(entries) - 1) if entries else None)
