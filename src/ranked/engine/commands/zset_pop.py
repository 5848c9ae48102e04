"""Pops: ZPOPMIN ZPOPMAX ZMPOP, and the blocking forms BZPOPMIN BZPOPMAX BZMPOP.

ZPOPMIN / ZPOPMAX pop from one key. The multi-key forms follow Redis 7.0
(``zmpopGenericCommand``, ``blockingGenericZpopCommand``) and check, in order: arity;
for (B)ZMPOP numkeys, MIN|MAX and COUNT; for a blocking form the timeout
(``timeout.py``); then the keys in order: a missing key is skipped, another type is
WRONGTYPE, the first non-empty sorted set is popped at once. When every key is missing
ZMPOP replies nil, and a blocking form blocks until a write makes one of them a
non-empty sorted set or the timeout passes (nil). How threads wait and get served is in
``blocked.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..zset import SortedSet
from .blocked import block
from .common import SYNTAX, CommandTable, Reply, error, int_arg, register, register_all
from .timeout import parse_timeout
from .zset_common import first_pop, lookup_zset, parse_multi_pop, pop_flat

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}


def _zpop(highest: bool, ks: Keyspace, argv: list[bytes]) -> Reply:
    """ZPOPMIN / ZPOPMAX key [count]."""
    if len(argv) > 3:
        raise error(SYNTAX)
    count = 1
    if len(argv) == 3:
        count = int_arg(argv[2], "ERR value is out of range, must be positive")
        if count < 0:
            raise error("ERR value is out of range, must be positive")
    zset = lookup_zset(ks, argv[1])
    if zset is None or count == 0:
        return []
    return pop_flat(ks, argv[1], zset, count, highest)


def _bzpop(highest: bool, ks: Keyspace, argv: list[bytes]) -> Reply:
    """BZPOPMIN / BZPOPMAX key [key ...] timeout: one member, with its key."""
    timeout_ms = parse_timeout(argv[-1])

    def pop(ks: Keyspace, key: bytes, zset: SortedSet) -> Reply:
        return [key, *pop_flat(ks, key, zset, 1, highest)]

    return block(ks, argv[1:-1], pop, timeout_ms)


# Each name with its ``highest``: which end it pops.
register_all(COMMANDS, -2, _zpop, {"zpopmin": (False,), "zpopmax": (True,)})
register_all(COMMANDS, -3, _bzpop, {"bzpopmin": (False,), "bzpopmax": (True,)})


@register(COMMANDS, "zmpop", -4)
def zmpop(ks: Keyspace, argv: list[bytes]) -> Reply:
    request = parse_multi_pop(argv, 1)
    return first_pop(ks, request.keys, request.pop)


@register(COMMANDS, "bzmpop", -5)
def bzmpop(ks: Keyspace, argv: list[bytes]) -> Reply:
    request = parse_multi_pop(argv, 2)  # numkeys, MIN|MAX and COUNT come before the timeout
    return block(ks, request.keys, request.pop, parse_timeout(argv[1]))
