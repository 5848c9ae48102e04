"""Hash commands: HSET HGET HMGET HDEL HGETALL HINCRBY."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..redisfloat import LLONG_MAX, LLONG_MIN, parse_int
from .common import (
    OVERFLOW,
    CommandTable,
    Reply,
    arity_error,
    error,
    int_arg,
    register,
    removal,
    typed_lookup,
)

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}


_hash: Callable[[Keyspace, bytes], dict[bytes, bytes] | None] = typed_lookup(dict, "hash")


def _hash_for_write(ks: Keyspace, key: bytes) -> dict[bytes, bytes]:
    found = _hash(ks, key)
    if found is not None:
        return found
    created: dict[bytes, bytes] = {}
    ks.store(key, created)
    return created


@register(COMMANDS, "hset", -4)
def hset(ks: Keyspace, argv: list[bytes]) -> Reply:
    if len(argv) % 2:
        raise error(arity_error("hset"))
    fields = _hash_for_write(ks, argv[1])
    added = 0
    for index in range(2, len(argv), 2):
        if argv[index] not in fields:
            added += 1
        fields[argv[index]] = argv[index + 1]
    return added


@register(COMMANDS, "hget", 3)
def hget(ks: Keyspace, argv: list[bytes]) -> Reply:
    fields = _hash(ks, argv[1])
    return None if fields is None else fields.get(argv[2])


@register(COMMANDS, "hmget", -3)
def hmget(ks: Keyspace, argv: list[bytes]) -> Reply:
    fields = _hash(ks, argv[1]) or {}
    return [fields.get(name) for name in argv[2:]]


register(COMMANDS, "hdel", -3)(removal(_hash, dict.pop))


@register(COMMANDS, "hgetall", 2)
def hgetall(ks: Keyspace, argv: list[bytes]) -> Reply:
    fields = _hash(ks, argv[1]) or {}
    flat: list[Reply] = []
    for name, value in fields.items():
        flat += [name, value]
    return flat


@register(COMMANDS, "hincrby", 4)
def hincrby(ks: Keyspace, argv: list[bytes]) -> Reply:
    amount = int_arg(argv[3])
    fields = _hash_for_write(ks, argv[1])
    stored = fields.get(argv[2])
    current = 0 if stored is None else parse_int(stored)
    if current is None:
        if not fields:
            ks.delete(argv[1])
        raise error("ERR hash value is not an integer")
    result = current + amount
    if result > LLONG_MAX or result < LLONG_MIN:
        raise error(OVERFLOW)
    fields[argv[2]] = b"%d" % result
    return result
