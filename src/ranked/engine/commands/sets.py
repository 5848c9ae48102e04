"""Set commands: SADD SREM SMEMBERS SISMEMBER SCARD."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .common import CommandTable, Reply, register, removal, typed_lookup

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}


_set: Callable[[Keyspace, bytes], set[bytes] | None] = typed_lookup(set, "set")


@register(COMMANDS, "sadd", -3)
def sadd(ks: Keyspace, argv: list[bytes]) -> Reply:
    members = _set(ks, argv[1])
    if members is None:
        members = set()
        ks.store(argv[1], members)
    before = len(members)
    members.update(argv[2:])
    return len(members) - before


register(COMMANDS, "srem", -3)(removal(_set, set.remove))


@register(COMMANDS, "smembers", 2)
def smembers(ks: Keyspace, argv: list[bytes]) -> Reply:
    members = _set(ks, argv[1])
    return [] if members is None else list[Reply](sorted(members))


@register(COMMANDS, "sismember", 3)
def sismember(ks: Keyspace, argv: list[bytes]) -> Reply:
    members = _set(ks, argv[1])
    return int(members is not None and argv[2] in members)


@register(COMMANDS, "scard", 2)
def scard(ks: Keyspace, argv: list[bytes]) -> Reply:
    members = _set(ks, argv[1])
    return 0 if members is None else len(members)
