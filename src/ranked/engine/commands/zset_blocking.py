"""Blocking pops: BZPOPMIN BZPOPMAX BZMPOP (Redis 7.0 ``blockingGenericZpopCommand``).

Redis checks, in order: arity; for BZMPOP numkeys, MIN|MAX and COUNT as ZMPOP does; the
timeout (``timeout.py``); then the keys in order: a missing key is skipped, another type
is WRONGTYPE, the first non-empty sorted set is popped at once. Only when every key is
missing does the call block, until a write makes one of them a non-empty sorted set or
the timeout passes (nil). How threads wait and get served is in ``blocked.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..zset import SortedSet
from .blocked import block
from .common import CommandTable, Reply, register
from .timeout import parse_timeout
from .zset_common import multi_pop_reply, parse_multi_pop, pop_flat

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}


def _bzpop(ks: Keyspace, argv: list[bytes], highest: bool) -> Reply:
    timeout_ms = parse_timeout(argv[-1])

    def pop(ks: Keyspace, key: bytes, zset: SortedSet) -> Reply:
        return [key, *pop_flat(ks, key, zset, 1, highest)]

    return block(ks, argv[1:-1], pop, timeout_ms)


@register(COMMANDS, "bzpopmin", -3)
def bzpopmin(ks: Keyspace, argv: list[bytes]) -> Reply:
    return _bzpop(ks, argv, highest=False)


@register(COMMANDS, "bzpopmax", -3)
def bzpopmax(ks: Keyspace, argv: list[bytes]) -> Reply:
    return _bzpop(ks, argv, highest=True)


@register(COMMANDS, "bzmpop", -5)
def bzmpop(ks: Keyspace, argv: list[bytes]) -> Reply:
    request = parse_multi_pop(argv, 2)
    timeout_ms = parse_timeout(argv[1])

    def pop(ks: Keyspace, key: bytes, zset: SortedSet) -> Reply:
        return multi_pop_reply(ks, key, zset, request)

    return block(ks, request.keys, pop, timeout_ms)
