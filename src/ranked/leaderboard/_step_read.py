"""A board's reads as steps: each its Lua script (Redis, Redis Cluster: one round trip)
and its reference on the memory backend's keyspace (under the backend's lock), with the
same checks in both, so every backend answers the same and refuses the same.

Rows are ``(member, score, rank)`` in board order, ranks in the requested style; only
the first row costs a rank lookup, the rest follow from it (see :mod:`._rows`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from ..backends._scripts import Arg, feature_script
from ..backends.checks import (
    MAX_POSITION,
    STYLES,
    check_style,
    flag,
    not_negative,
    range_bound,
)
from ..backends.procedure import Call, Step, answer
from ..core.ranks import RankStyle
from ..engine.keyspace import Keyspace
from ._requests import Row, Target
from ._rows import rows

__all__ = ["AROUND", "BY_SCORE", "PAGE", "PAGE_AFTER", "PERCENTILE", "RANKS"]

_PACKAGE: Final = "ranked.leaderboard"


def _rows_decoder(style: RankStyle) -> Callable[[Any], list[Row]]:
    """The decoder of a row script's reply {first rank, first index, skip, rows} (Lua
    ``ranked_reply``): the rows after the first ``skip`` of the flat ZRANGE WITHSCORES
    output, ranked from the first one's rank as the style counts (unique: one more per
    row; competition: the row's position + 1 when the score changes; dense: one more when
    the score changes)."""
    unique, competition = style == "unique", style == "competition"

    def decode(reply: Any) -> list[Row]:
        rank, first_index, skip, flat = reply
        start, stop = 2 * skip, len(flat)
        if start >= stop:
            return []
        previous = float(flat[start + 1])
        found: list[Row] = [(flat[start], previous, rank)]
        append = found.append
        for i in range(start + 2, stop, 2):
            score = float(flat[i + 1])
            if unique:
                rank += 1
            elif score != previous:
                rank = first_index + len(found) + 1 if competition else rank + 1
            append((flat[i], score, rank))
            previous = score
        return found

    return decode


_ROWS: Final = {style: _rows_decoder(style) for style in RankStyle}


def _window_decoder(style: RankStyle) -> Callable[[Any], tuple[int, list[Row]] | None]:
    rows_of = _ROWS[style]

    def decode(reply: Any) -> tuple[int, list[Row]] | None:
        if reply is None:
            return None
        index, found = reply
        return int(index), rows_of(found)

    return decode


_WINDOWS: Final = {style: _window_decoder(style) for style in RankStyle}


def _rows_call(name: str, target: Target, args: list[Arg], style: str) -> Call[list[Row]]:
    return Call(feature_script(_PACKAGE, name), (target.key, target.dense_key), args, _ROWS[style])  # type: ignore[index]


# -- ranks ------------------------------------------------------------------------------


def _rank_pairs(flat: Any) -> list[tuple[float, int] | None]:
    """The flat reply (score, rank per member; nil, nil when absent) as pairs."""
    return [
        None if flat[i] is None else (float(flat[i]), flat[i + 1]) for i in range(0, len(flat), 2)
    ]


def _ranks_call(
    target: Target, members: Sequence[bytes], high_first: bool, style: str
) -> Call[list[tuple[float, int] | None]]:
    style = check_style(style)
    if not members:
        return answer([])
    args: list[Arg] = [flag(high_first), style, *members]
    return Call(
        feature_script(_PACKAGE, "ranks"), (target.key, target.dense_key), args, _rank_pairs
    )


def _ranks(
    keyspace: Keyspace, target: Target, members: Sequence[bytes], high_first: bool, style: str
) -> list[tuple[float, int] | None]:
    if style not in STYLES:
        check_style(style)
    zset = keyspace.zset(target.key)
    if zset is None:
        return [None] * len(members)
    # One C call for every score; only members present pay a rank descent.
    rank = zset.rank
    return [
        None if score is None else (score, rank(member, style=style, reverse=high_first))  # type: ignore[arg-type,misc]
        for member, score in zip(members, zset.scores(members), strict=True)
    ]


RANKS: Final = Step(_ranks_call, _ranks, writes=False)
"""``(target, members, high_first, style) -> (score, rank) per member, None when
absent``. O(k log n). Redis: ZMSCORE + one O(log n) count (or ZREVRANK) per member."""


# -- pages ------------------------------------------------------------------------------


def _page_call(
    target: Target, start: int, stop: int, high_first: bool, style: str
) -> Call[list[Row]]:
    not_negative(start=start, stop=stop)
    style = check_style(style)
    stop = min(stop, MAX_POSITION)
    if stop < start:
        return answer([])
    return _rows_call("page", target, [start, stop, flag(high_first), style], style)


def _page(
    keyspace: Keyspace, target: Target, start: int, stop: int, high_first: bool, style: str
) -> list[Row]:
    not_negative(start=start, stop=stop)
    check_style(style)
    stop = min(stop, MAX_POSITION)
    zset = keyspace.zset(target.key)
    if zset is None or start > stop:
        return []
    pairs = zset.range_by_index(start, stop, reverse=high_first)
    return rows(zset, pairs, start, high_first, style)


PAGE: Final = Step(_page_call, _page, writes=False)
"""``(target, start, stop, high_first, style) -> rows`` at 0-based positions start..stop
inclusive in board order (no negative indexes; clamped to the board). O(log n + k).
Redis: ZRANGE [REV] WITHSCORES + the first row's rank."""


def _page_after_call(
    target: Target, score: float, member: bytes, count: int, high_first: bool, style: str
) -> Call[list[Row]]:
    not_negative(count=count)
    bound, style = range_bound(score), check_style(style)
    if count == 0:
        return answer([])
    args: list[Arg] = [bound, member, min(count, MAX_POSITION), flag(high_first), style]
    return _rows_call("page_after", target, args, style)


def _page_after(
    keyspace: Keyspace,
    target: Target,
    score: float,
    member: bytes,
    count: int,
    high_first: bool,
    style: str,
) -> list[Row]:
    if count < 0:
        not_negative(count=count)
    if style not in STYLES:
        check_style(style)
    if score != score:  # NaN: the one float unequal to itself
        range_bound(score)
    zset = keyspace.zset(target.key)
    if zset is None or count == 0:
        return []
    pairs = zset.items_after(score, member, min(count, MAX_POSITION), reverse=high_first)
    return rows(zset, pairs, None, high_first, style)


PAGE_AFTER: Final = Step(_page_after_call, _page_after, writes=False)
"""``(target, score, member, count, high_first, style) -> up to count rows strictly
after the point (score, member)`` in board order; the point need not be on the board
(cursor paging that survives concurrent writes). O(log n + k). Redis: ZRANGE BYSCORE from
the point's score, the leading rows that do not come after it skipped (a long tie run:
located by counting), then one rank lookup for the first row."""


def _around_call(
    target: Target, member: bytes, before: int, after: int, high_first: bool, style: str
) -> Call[tuple[int, list[Row]] | None]:
    not_negative(before=before, after=after)
    style = check_style(style)
    before, after = min(before, MAX_POSITION), min(after, MAX_POSITION)
    args: list[Arg] = [member, before, after, flag(high_first), style]
    keys = (target.key, target.dense_key)
    return Call(feature_script(_PACKAGE, "around"), keys, args, _WINDOWS[style])  # type: ignore[index]


def _around(
    keyspace: Keyspace,
    target: Target,
    member: bytes,
    before: int,
    after: int,
    high_first: bool,
    style: str,
) -> tuple[int, list[Row]] | None:
    not_negative(before=before, after=after)
    check_style(style)
    before, after = min(before, MAX_POSITION), min(after, MAX_POSITION)
    zset = keyspace.zset(target.key)
    if zset is None:
        return None
    found = zset.range_around(member, before, after, reverse=high_first)
    if found is None:
        return None
    index, pairs = found
    first = max(0, min(index - before, len(zset) - len(pairs)))
    return index - first, rows(zset, pairs, first, high_first, style)


AROUND: Final = Step(_around_call, _around, writes=False)
"""``(target, member, before, after, high_first, style) -> (the member's index in the
window, rows)``: the window of up to before+after+1 rows containing ``member`` (shifted,
not shrunk, at the edges); None when absent. O(log n + k). Redis: ZREVRANK + ZREVRANGE."""


def _by_score_call(
    target: Target, low: float, high: float, offset: int, count: int, high_first: bool, style: str
) -> Call[list[Row]]:
    not_negative(offset=offset, count=count)
    low_bound, high_bound, style = range_bound(low), range_bound(high), check_style(style)
    if count == 0 or low > high or offset > MAX_POSITION:
        return answer([])
    count = min(count, MAX_POSITION)
    args: list[Arg] = [low_bound, high_bound, offset, count, flag(high_first), style]
    return _rows_call("by_score", target, args, style)


def _by_score(
    keyspace: Keyspace,
    target: Target,
    low: float,
    high: float,
    offset: int,
    count: int,
    high_first: bool,
    style: str,
) -> list[Row]:
    not_negative(offset=offset, count=count)
    check_style(style)
    range_bound(low)  # a NaN bound raises
    range_bound(high)
    zset = keyspace.zset(target.key)
    if zset is None or count == 0 or offset > MAX_POSITION:
        return []
    count = min(count, MAX_POSITION)
    pairs = zset.range_by_score(low, high, reverse=high_first, offset=offset, count=count)
    return rows(zset, pairs, None, high_first, style)


BY_SCORE: Final = Step(_by_score_call, _by_score, writes=False)
"""``(target, low, high, offset, count, high_first, style) -> rows`` with low <= score
<= high in board order, after skipping ``offset``, at most ``count``.
O(log n + offset + k). Redis: ZRANGE BYSCORE [REV] LIMIT + the first row's rank."""


# -- percentile -------------------------------------------------------------------------


def _percentile_reply(reply: Any) -> tuple[float, int, int] | None:
    if reply is None:
        return None
    score, total, worse = reply
    return float(score), int(total), int(worse)


def _percentile_call(
    target: Target, member: bytes, high_first: bool
) -> Call[tuple[float, int, int] | None]:
    args: list[Arg] = [member, flag(high_first)]
    return Call(feature_script(_PACKAGE, "percentile"), (target.key,), args, _percentile_reply)


def _percentile(
    keyspace: Keyspace, target: Target, member: bytes, high_first: bool
) -> tuple[float, int, int] | None:
    zset = keyspace.zset(target.key)
    if zset is None:
        return None
    score = zset.score(member)
    if score is None:
        return None
    if high_first:
        worse = zset.count_by_score(max=score, max_exclusive=True)
    else:
        worse = zset.count_by_score(min=score, min_exclusive=True)
    return score, len(zset), worse


PERCENTILE: Final = Step(_percentile_call, _percentile, writes=False)
"""``(target, member, high_first) -> (the member's score, members on the board, members
with a strictly worse score)``, read in one atomic step; None when absent. O(log n).
Redis: ZSCORE, ZCARD, ZCOUNT with an exclusive bound."""
