"""Sorted-set writes: ZADD ZINCRBY ZREM ZREMRANGEBYRANK/SCORE/LEX (the pops: ``zset_pop.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import InvalidScoreError
from ..redisfloat import format_double
from ..zset import SortedSet
from .common import SYNTAX, CommandTable, Reply, error, float_arg, int_arg, option, register
from .zset_common import (
    LISTPACK_ENTRIES,
    LISTPACK_VALUE,
    delete_if_empty,
    lookup_zset,
    range_handler,
)

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}

_ZADD_FLAGS = (b"nx", b"xx", b"gt", b"lt", b"ch", b"incr")
NAN_RESULT = "ERR resulting score is not a number (NaN)"


def _zadd_zset(ks: Keyspace, key: bytes, first_member: bytes, xx: bool) -> SortedSet | None:
    """Look up or create the target; a new key starts as a listpack unless its first
    member is longer than 64 bytes. XX on a missing key creates nothing."""
    zset = lookup_zset(ks, key)
    if zset is None and not xx:
        zset = SortedSet(raw=True)
        ks.store(key, zset)
        ks.set_listpack(key, len(first_member) <= LISTPACK_VALUE)
    return zset


def _converts_on_insert(ks: Keyspace, key: bytes, zset: SortedSet, member: bytes) -> None:
    # A listpack converts *before* an insert that would make it too long or too wide.
    if len(zset) + 1 > LISTPACK_ENTRIES or len(member) > LISTPACK_VALUE:
        ks.set_listpack(key, False)


def _zadd_incr(
    ks: Keyspace, key: bytes, zset: SortedSet, member: bytes, amount: float, flags: set[bytes]
) -> Reply:
    if member not in zset:
        if b"xx" in flags:
            return None
        if ks.is_listpack(key):
            _converts_on_insert(ks, key, zset, member)
        # A new member gets the increment itself (so -0 stays -0 in the reply).
        zset.add(member, 0.0 if ks.is_listpack(key) and amount == 0.0 else amount)
        return format_double(amount)
    try:
        result = zset.incr(member, amount, nx=b"nx" in flags, gt=b"gt" in flags, lt=b"lt" in flags)
    except InvalidScoreError:
        raise error(NAN_RESULT) from None
    return None if result is None else format_double(result)


def _zadd_apply(
    ks: Keyspace, key: bytes, zset: SortedSet, scored: list[tuple[bytes, float]], flags: set[bytes]
) -> int:
    nx, xx, gt, lt, ch = (word in flags for word in (b"nx", b"xx", b"gt", b"lt", b"ch"))
    changed = 0
    index = 0
    # While the key is a listpack, apply pair by pair: conversion happens mid-command.
    while index < len(scored) and ks.is_listpack(key):
        member, score = scored[index]
        if member not in zset and not xx:
            _converts_on_insert(ks, key, zset, member)
        if ks.is_listpack(key) and score == 0.0:
            score = 0.0
        changed += zset.add(member, score, nx=nx, xx=xx, gt=gt, lt=lt, ch=ch)
        index += 1
    if index < len(scored):
        changed += zset.add_many(scored[index:], nx=nx, xx=xx, gt=gt, lt=lt, ch=ch)
    return changed


def _zadd(ks: Keyspace, argv: list[bytes], flags: set[bytes], first: int) -> Reply:
    elements = len(argv) - first
    if elements % 2 or elements == 0:
        raise error(SYNTAX)
    if b"nx" in flags and b"xx" in flags:
        raise error("ERR XX and NX options at the same time are not compatible")
    if (b"nx" in flags and (b"gt" in flags or b"lt" in flags)) or {b"gt", b"lt"} <= flags:
        raise error("ERR GT, LT, and/or NX options at the same time are not compatible")
    incr = b"incr" in flags
    if incr and elements > 2:
        raise error("ERR INCR option supports a single increment-element pair")
    scored = [(argv[i + 1], float_arg(argv[i])) for i in range(first, len(argv), 2)]
    key = argv[1]
    zset = _zadd_zset(ks, key, argv[first + 1], b"xx" in flags)
    if zset is None:
        return None if incr else 0
    if incr:
        return _zadd_incr(ks, key, zset, scored[0][0], scored[0][1], flags)
    return _zadd_apply(ks, key, zset, scored, flags)


def _zadd_flags(argv: list[bytes]) -> tuple[set[bytes], int]:
    """The leading ZADD option words and the index of the first score argument."""
    flags: set[bytes] = set()
    first = 2
    while first < len(argv) and option(argv[first]) in _ZADD_FLAGS:
        flags.add(option(argv[first]))
        first += 1
    return flags, first


@register(COMMANDS, "zadd", -4)
def zadd(ks: Keyspace, argv: list[bytes]) -> Reply:
    flags, first = _zadd_flags(argv)
    return _zadd(ks, argv, flags, first)


@register(COMMANDS, "zincrby", 4)
def zincrby(ks: Keyspace, argv: list[bytes]) -> Reply:
    # Redis runs ZADD's option loop here too: an option word in the increment slot is
    # consumed as a flag, which leaves an odd pair count and so a syntax error.
    flags, first = _zadd_flags(argv)
    return _zadd(ks, argv, flags | {b"incr"}, first)


@register(COMMANDS, "zrem", -3)
def zrem(ks: Keyspace, argv: list[bytes]) -> Reply:
    zset = lookup_zset(ks, argv[1])
    if zset is None:
        return 0
    removed = zset.remove(*argv[2:])
    delete_if_empty(ks, argv[1], zset)
    return removed


@register(COMMANDS, "zremrangebyrank", 4)
def zremrangebyrank(ks: Keyspace, argv: list[bytes]) -> Reply:
    start, stop = int_arg(argv[2]), int_arg(argv[3])
    zset = lookup_zset(ks, argv[1])
    if zset is None:
        return 0
    removed = zset.remove_range_by_index(start, stop)
    delete_if_empty(ks, argv[1], zset)
    return removed


register(COMMANDS, "zremrangebyscore", 4)(range_handler("score", SortedSet.remove_range_by_score))
register(COMMANDS, "zremrangebylex", 4)(range_handler("lex", SortedSet.remove_range_by_lex))
