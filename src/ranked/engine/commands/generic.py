"""Keyspace commands: DEL EXISTS TYPE EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL PERSIST
KEYS SCAN DBSIZE FLUSHALL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..glob import glob_match
from ..redisfloat import LLONG_MAX, parse_cursor
from .common import (
    SYNTAX,
    CommandTable,
    Reply,
    error,
    int_arg,
    option,
    option_text,
    register,
    register_all,
    type_name,
)
from .scan import page, parse_scan_options

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}


@register(COMMANDS, "del", -2)
def delete(ks: Keyspace, argv: list[bytes]) -> Reply:
    removed = 0
    for key in argv[1:]:
        if ks.get(key) is not None:
            ks.delete(key)
            removed += 1
    return removed


@register(COMMANDS, "exists", -2)
def exists(ks: Keyspace, argv: list[bytes]) -> Reply:
    return sum(1 for key in argv[1:] if ks.get(key) is not None)


@register(COMMANDS, "type", 2)
def type_(ks: Keyspace, argv: list[bytes]) -> Reply:
    value = ks.get(argv[1])
    return b"none" if value is None else type_name(value)


def _expire_flags(argv: list[bytes]) -> set[bytes]:
    flags: set[bytes] = set()
    for arg in argv[3:]:
        word = option(arg)
        if word not in (b"nx", b"xx", b"gt", b"lt"):
            raise error(f"ERR Unsupported option {option_text(arg)}")
        flags.add(word)
    if b"nx" in flags and len(flags) > 1:
        raise error("ERR NX and XX, GT or LT options at the same time are not compatible")
    if b"gt" in flags and b"lt" in flags:
        raise error("ERR GT and LT options at the same time are not compatible")
    return flags


def _expire(seconds: bool, absolute: bool, ks: Keyspace, argv: list[bytes]) -> Reply:
    flags = _expire_flags(argv)
    when = int_arg(argv[2])
    invalid = f"ERR invalid expire time in '{argv[0].lower().decode('ascii')}' command"
    if seconds:
        if when > LLONG_MAX // 1000 or when < -(LLONG_MAX // 1000):
            raise error(invalid)
        when *= 1000
    base = 0 if absolute else ks.now_ms()
    if when > LLONG_MAX - base:
        raise error(invalid)
    when += base
    key = argv[1]
    if ks.get(key) is None:
        return 0
    current = ks.raw_deadline(key)
    if b"nx" in flags and current is not None:
        return 0
    if b"xx" in flags and current is None:
        return 0
    if b"gt" in flags and (current is None or when <= current):
        return 0
    if b"lt" in flags and current is not None and when >= current:
        return 0
    if when <= ks.now_ms():
        ks.delete(key)
    else:
        ks.put_deadline(key, when)
    return 1


# Each name with (seconds, absolute): the unit, and whether the time is a deadline.
register_all(
    COMMANDS,
    -3,
    _expire,
    {
        "expire": (True, False),
        "pexpire": (False, False),
        "expireat": (True, True),
        "pexpireat": (False, True),
    },
)


def _ttl(millis: bool, ks: Keyspace, argv: list[bytes]) -> int:
    key = argv[1]
    if ks.get(key) is None:
        return -2
    deadline = ks.raw_deadline(key)
    if deadline is None:
        return -1
    left = max(deadline - ks.now_ms(), 0)
    return left if millis else (left + 500) // 1000


register_all(COMMANDS, 2, _ttl, {"ttl": (False,), "pttl": (True,)})


@register(COMMANDS, "persist", 2)
def persist(ks: Keyspace, argv: list[bytes]) -> Reply:
    key = argv[1]
    if ks.get(key) is None or ks.raw_deadline(key) is None:
        return 0
    ks.set_deadline(key, None)
    return 1


@register(COMMANDS, "keys", 2)
def keys(ks: Keyspace, argv: list[bytes]) -> Reply:
    pattern = argv[1]
    if pattern == b"*":
        return list(ks.iter_keys())
    return [key for key in ks.iter_keys() if glob_match(pattern, key)]


@register(COMMANDS, "scan", -2)
def scan(ks: Keyspace, argv: list[bytes]) -> Reply:
    cursor = parse_cursor(argv[1])
    if cursor is None:
        raise error("ERR invalid cursor")
    options = parse_scan_options(argv, 2, allow_type=True)
    following, names = page(ks.iter_keys(), cursor, options.hint)
    found: list[Reply] = []
    for name in names:
        value = ks.get(name)
        if value is None or not options.matches(name):
            continue
        if options.type_name is not None and type_name(value) != options.type_name:
            continue
        found.append(name)
    return [b"%d" % following, found]


@register(COMMANDS, "dbsize", 1)
def dbsize(ks: Keyspace, argv: list[bytes]) -> Reply:
    return len(ks)


@register(COMMANDS, "flushall", -1)
def flushall(ks: Keyspace, argv: list[bytes]) -> Reply:
    if len(argv) > 2 or (len(argv) == 2 and option(argv[1]) not in (b"sync", b"async")):
        raise error(SYNTAX)
    ks.flush()
    return b"OK"
