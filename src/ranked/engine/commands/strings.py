"""String commands: SET (7.0 options) GET INCR INCRBY DECR DECRBY."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..redisfloat import LLONG_MAX, LLONG_MIN, parse_int
from .common import (
    NOT_INT,
    OVERFLOW,
    SYNTAX,
    CommandTable,
    Reply,
    error,
    int_arg,
    option,
    register,
    typed_lookup,
    wrongtype,
)

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}

_EXPIRY_WORDS = (b"ex", b"px", b"exat", b"pxat")


_get_string: Callable[[Keyspace, bytes], bytes | None] = typed_lookup(bytes, "string")


@register(COMMANDS, "get", 2)
def get(ks: Keyspace, argv: list[bytes]) -> Reply:
    return _get_string(ks, argv[1])


def _parse_set_options(argv: list[bytes]) -> tuple[set[bytes], bytes | None, bytes | None]:
    """Redis's SET option grammar: each option may repeat, but not conflict."""
    flags: set[bytes] = set()
    unit: bytes | None = None
    amount: bytes | None = None
    index = 3
    while index < len(argv):
        word = option(argv[index])
        has_value = index + 1 < len(argv)
        if (
            (word == b"nx" and b"xx" not in flags)
            or (word == b"xx" and b"nx" not in flags)
            or word == b"get"
            or (word == b"keepttl" and unit is None)
        ):
            flags.add(word)
        elif (
            word in _EXPIRY_WORDS and b"keepttl" not in flags and unit in (None, word) and has_value
        ):
            unit = word
            amount = argv[index + 1]
            index += 1
        else:
            raise error(SYNTAX)
        index += 1
    return flags, unit, amount


def _deadline(ks: Keyspace, unit: bytes, amount: bytes) -> int:
    invalid = error("ERR invalid expire time in 'set' command")
    when = int_arg(amount)
    seconds = unit in (b"ex", b"exat")
    if when <= 0 or (seconds and when > LLONG_MAX // 1000):
        raise invalid
    if seconds:
        when *= 1000
    if unit in (b"ex", b"px"):
        when += ks.now_ms()
    if when > LLONG_MAX:  # C wraps to a negative value there
        raise invalid
    return when


@register(COMMANDS, "set", -3)
def set_(ks: Keyspace, argv: list[bytes]) -> Reply:
    flags, unit, amount = _parse_set_options(argv)
    deadline = None if unit is None or amount is None else _deadline(ks, unit, amount)
    key = argv[1]
    old = _get_string(ks, key) if b"get" in flags else None
    found = ks.get(key) is not None
    if (b"nx" in flags and found) or (b"xx" in flags and not found):
        return old
    ks.store(key, argv[2], keep_ttl=b"keepttl" in flags)
    if deadline is not None:
        ks.put_deadline(key, deadline)
    return old if b"get" in flags else b"OK"


def _incr(ks: Keyspace, key: bytes, amount: int) -> Reply:
    value = ks.get(key)
    if value is not None and not isinstance(value, bytes):
        raise wrongtype()
    current = 0 if value is None else parse_int(value)
    if current is None:
        raise error(NOT_INT)
    result = current + amount
    if result > LLONG_MAX or result < LLONG_MIN:
        raise error(OVERFLOW)
    ks.store(key, b"%d" % result, keep_ttl=True)
    return result


@register(COMMANDS, "incr", 2)
def incr(ks: Keyspace, argv: list[bytes]) -> Reply:
    return _incr(ks, argv[1], 1)


@register(COMMANDS, "decr", 2)
def decr(ks: Keyspace, argv: list[bytes]) -> Reply:
    return _incr(ks, argv[1], -1)


@register(COMMANDS, "incrby", 3)
def incrby(ks: Keyspace, argv: list[bytes]) -> Reply:
    return _incr(ks, argv[1], int_arg(argv[2]))


@register(COMMANDS, "decrby", 3)
def decrby(ks: Keyspace, argv: list[bytes]) -> Reply:
    amount = int_arg(argv[2])
    if amount == LLONG_MIN:
        raise error("ERR decrement would overflow")
    return _incr(ks, argv[1], -amount)
