"""Sorted-set point reads: ZSCORE ZMSCORE ZCARD ZCOUNT ZLEXCOUNT ZRANK ZREVRANK
ZRANDMEMBER ZSCAN."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..redisfloat import LLONG_MAX, format_double, format_listpack_score, parse_cursor
from ..zset import SortedSet
from .common import SYNTAX, CommandTable, Reply, error, int_arg, option, register
from .scan import page, parse_scan_options
from .zset_common import flatten, lookup_zset, pairs, pairs_of, range_handler

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}


@register(COMMANDS, "zscore", 3)
def zscore(ks: Keyspace, argv: list[bytes]) -> Reply:
    zset = lookup_zset(ks, argv[1])
    score = None if zset is None else zset.score(argv[2])
    return None if score is None else format_double(score)


@register(COMMANDS, "zmscore", -3)
def zmscore(ks: Keyspace, argv: list[bytes]) -> Reply:
    zset = lookup_zset(ks, argv[1])
    if zset is None:
        return [None for _ in argv[2:]]
    return [None if s is None else format_double(s) for s in zset.scores(argv[2:])]


@register(COMMANDS, "zcard", 2)
def zcard(ks: Keyspace, argv: list[bytes]) -> Reply:
    zset = lookup_zset(ks, argv[1])
    return 0 if zset is None else len(zset)


register(COMMANDS, "zcount", 4)(range_handler("score", SortedSet.count_by_score))
register(COMMANDS, "zlexcount", 4)(range_handler("lex", SortedSet.count_by_lex))


@register(COMMANDS, "zrank", 3)
def zrank(ks: Keyspace, argv: list[bytes]) -> Reply:
    zset = lookup_zset(ks, argv[1])
    return None if zset is None else zset.index(argv[2])


@register(COMMANDS, "zrevrank", 3)
def zrevrank(ks: Keyspace, argv: list[bytes]) -> Reply:
    zset = lookup_zset(ks, argv[1])
    return None if zset is None else zset.index(argv[2], reverse=True)


@register(COMMANDS, "zrandmember", -2)
def zrandmember(ks: Keyspace, argv: list[bytes]) -> Reply:
    if len(argv) == 2:
        zset = lookup_zset(ks, argv[1])
        drawn = None if zset is None else pairs_of(zset.random_member())
        return None if drawn is None else drawn[0]
    count = int_arg(argv[2])
    if count < -LLONG_MAX:
        raise error(
            "ERR value is out of range, value must between "
            "-9223372036854775807 and 9223372036854775807"
        )
    if len(argv) > 4 or (len(argv) == 4 and option(argv[3]) != b"withscores"):
        raise error(SYNTAX)
    withscores = len(argv) == 4
    if withscores and (count < -(LLONG_MAX // 2) or count > LLONG_MAX // 2):
        raise error("ERR value is out of range")
    zset = lookup_zset(ks, argv[1])
    if zset is None or count == 0:
        return []
    return flatten(pairs(zset.random_members(count)), withscores)


@register(COMMANDS, "zscan", -3)
def zscan(ks: Keyspace, argv: list[bytes]) -> Reply:
    cursor = parse_cursor(argv[2])
    if cursor is None:
        raise error("ERR invalid cursor")
    key = argv[1]
    zset = lookup_zset(ks, key)
    if zset is None:
        return [b"0", []]
    options = parse_scan_options(argv, 3, allow_type=False)
    flat: list[Reply] = []
    if ks.is_listpack(key):
        # Redis returns a whole listpack at once, scores as the listpack stores them.
        for member, score in pairs(zset.items()):
            if options.matches(member):
                flat += [member, format_listpack_score(score)]
        return [b"0", flat]
    following, members = page(pairs_members(zset), cursor, options.hint)
    for member in members:
        found = zset.score(member)
        if found is not None and options.matches(member):
            flat += [member, format_double(found)]
    return [b"%d" % following, flat]


def pairs_members(zset: SortedSet) -> list[bytes]:
    """Every member of a raw zset."""
    return [member for member, _ in pairs(zset.items())]
