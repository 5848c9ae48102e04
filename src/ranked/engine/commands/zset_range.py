"""ZRANGE and its relatives: ZRANGESTORE ZREVRANGE ZRANGEBYSCORE ZREVRANGEBYSCORE
ZRANGEBYLEX ZREVRANGEBYLEX, all through one parser as in Redis 7.0.

Redis checks, in order: the options (LIMIT values parsed as they are met),
option conflicts, the range, and only then the key (missing key: empty reply;
another type: WRONGTYPE).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from ..zset import SortedSet
from .common import SYNTAX, CommandTable, Reply, error, int_arg, option, register, register_all
from .zset_common import PARSE_RANGE, Pair, flatten, lookup_zset, pairs, store_emitted

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}

RangeType = Literal["auto", "rank", "score", "lex"]


class _Request:
    """The parsed options of one ZRANGE-family call."""

    def __init__(self, rangetype: RangeType, reverse: bool | None) -> None:
        self.rangetype = rangetype
        self.reverse = reverse
        self.withscores = False
        self.offset = 0
        self.count = -1


def _parse_options(argv: list[bytes], first: int, request: _Request, store: bool) -> None:
    index = first
    while index < len(argv):
        word = option(argv[index])
        left = len(argv) - index - 1
        if not store and word == b"withscores":
            request.withscores = True
        elif word == b"limit" and left >= 2:
            request.offset = int_arg(argv[index + 1])
            request.count = int_arg(argv[index + 2])
            index += 2
        elif request.reverse is None and word == b"rev":
            request.reverse = True
        elif request.rangetype == "auto" and word == b"bylex":
            request.rangetype = "lex"
        elif request.rangetype == "auto" and word == b"byscore":
            request.rangetype = "score"
        else:
            raise error(SYNTAX)
        index += 1
    if request.rangetype == "auto":
        request.rangetype = "rank"
    if request.count != -1 and request.rangetype == "rank":
        raise error(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
        )
    if request.withscores and request.rangetype == "lex":
        raise error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")


# The SortedSet method that selects each kind of range (see PARSE_RANGE).
_SELECT: dict[str, Callable[..., list[tuple[str | bytes, float]]]] = {
    "score": SortedSet.range_by_score,
    "lex": SortedSet.range_by_lex,
}


def _select(zset: SortedSet | None, request: _Request, low: bytes, high: bytes) -> list[Pair]:
    """Parse the range (before the key is used) and collect the matching pairs."""
    reverse = bool(request.reverse)
    if reverse and request.rangetype != "rank":
        low, high = high, low  # BYSCORE/BYLEX REV take max first
    if request.rangetype == "rank":
        start, stop = int_arg(low), int_arg(high)
        return [] if zset is None else pairs(zset.range_by_index(start, stop, reverse=reverse))
    bounds = PARSE_RANGE[request.rangetype](low, high)
    if zset is None or bounds.empty:
        return []
    return pairs(
        _SELECT[request.rangetype](
            zset,
            bounds.min,
            bounds.max,
            min_exclusive=bounds.min_exclusive,
            max_exclusive=bounds.max_exclusive,
            reverse=reverse,
            offset=request.offset,
            count=request.count,
        )
    )


def _zrange(rangetype: RangeType, reverse: bool | None, ks: Keyspace, argv: list[bytes]) -> Reply:
    request = _Request(rangetype, reverse)
    _parse_options(argv, 4, request, store=False)
    _select(None, request, argv[2], argv[3])  # range errors come before the key lookup
    zset = lookup_zset(ks, argv[1])
    found = _select(zset, request, argv[2], argv[3]) if zset is not None else []
    return flatten(found, request.withscores)


# The family, each member as (range type, reverse); ZRANGE reads both from its options.
register_all(
    COMMANDS,
    -4,
    _zrange,
    {
        "zrange": ("auto", None),
        "zrevrange": ("rank", True),
        "zrangebyscore": ("score", False),
        "zrevrangebyscore": ("score", True),
        "zrangebylex": ("lex", False),
        "zrevrangebylex": ("lex", True),
    },
)


@register(COMMANDS, "zrangestore", -5)
def zrangestore(ks: Keyspace, argv: list[bytes]) -> Reply:
    request = _Request("auto", None)
    _parse_options(argv, 5, request, store=True)
    _select(None, request, argv[3], argv[4])
    zset = lookup_zset(ks, argv[2])
    found = _select(zset, request, argv[3], argv[4]) if zset is not None else []
    # Redis sizes a rank-range destination up front; score/lex results grow one by one.
    size_hint = len(found) if request.rangetype == "rank" else 0
    return store_emitted(ks, argv[1], found, size_hint)
