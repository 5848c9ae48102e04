"""Set commands: SADD SREM SMEMBERS SISMEMBER SCARD."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .common import CommandTable, Reply, register, wrongtype

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}


def _set(ks: Keyspace, key: bytes) -> set[bytes] | None:
    value = ks.get(key)
    if value is None or isinstance(value, set):
        return value
    raise wrongtype()


@register(COMMANDS, "sadd", -3)
def sadd(ks: Keyspace, argv: list[bytes]) -> Reply:
    members = _set(ks, argv[1])
    if members is None:
        members = set()
        ks.store(argv[1], members)
    before = len(members)
    members.update(argv[2:])
    return len(members) - before


@register(COMMANDS, "srem", -3)
def srem(ks: Keyspace, argv: list[bytes]) -> Reply:
    members = _set(ks, argv[1])
    if members is None:
        return 0
    removed = 0
    for member in argv[2:]:
        if member in members:
            members.discard(member)
            removed += 1
    if not members:
        ks.delete(argv[1])
    return removed


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
