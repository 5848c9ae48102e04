"""Shared pieces of the command modules: reply types, error texts, argument parsing."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple, TypeAlias, TypeVar

from ...errors import ResponseError
from .. import redisfloat
from ..zset import SortedSet

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = [
    "NOT_FLOAT",
    "NOT_INT",
    "SYNTAX",
    "WRONGTYPE",
    "Command",
    "CommandTable",
    "Handler",
    "Reply",
    "Value",
    "arity_error",
    "error",
    "int_arg",
    "option",
    "register",
    "register_all",
    "removal",
    "typed_lookup",
    "unknown_command",
]

Reply: TypeAlias = "bytes | int | list[Reply] | None"
Value: TypeAlias = "bytes | SortedSet | set[bytes] | dict[bytes, bytes]"
Handler = Callable[["Keyspace", list[bytes]], Reply]
T = TypeVar("T")
Names = TypeVar("Names", dict[bytes, bytes], set[bytes])

SYNTAX = "ERR syntax error"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INT = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
OVERFLOW = "ERR increment or decrement would overflow"


class Command(NamedTuple):
    """One entry of the command table: lowercase name, Redis arity, handler."""

    name: str
    arity: int
    handler: Handler


CommandTable = dict[bytes, Command]


def register(table: CommandTable, name: str, arity: int) -> Callable[[Handler], Handler]:
    """Decorator adding a handler to ``table`` under ``name`` (arity as COMMAND INFO)."""

    def add(handler: Handler) -> Handler:
        table[name.encode("ascii")] = Command(name, arity, handler)
        return handler

    return add


def register_all(
    table: CommandTable,
    arity: int,
    impl: Callable[..., Reply],
    variants: Mapping[str, tuple[object, ...]],
) -> None:
    """Add a family of commands of one arity that share ``impl`` to ``table``: the
    handler of each name is ``impl(*leading, ks, argv)``, ``leading`` being that name's
    one or two arguments (a range type, a direction...)."""
    for name, leading in variants.items():
        register(table, name, arity)(_variant(impl, *leading))


def _variant(impl: Callable[..., Reply], *leading: object) -> Handler:
    """``impl`` with its ``leading`` arguments bound. A Python function rather than a
    ``functools.partial``: the keyspace calls it as cheaply as a handler written out."""
    if len(leading) == 1:
        (first,) = leading

        def handler(ks: Keyspace, argv: list[bytes]) -> Reply:
            return impl(first, ks, argv)

    else:
        first, second = leading

        def handler(ks: Keyspace, argv: list[bytes]) -> Reply:
            return impl(first, second, ks, argv)

    return handler


def error(text: str) -> ResponseError:
    """A ResponseError; CR/LF become spaces as Redis does to keep the reply one line."""
    return ResponseError(text.replace("\r", " ").replace("\n", " "))


def _c_text(arg: bytes) -> str:
    # Redis formats arguments with %s: the C string ends at the first NUL.
    return arg.split(b"\0", 1)[0].decode("utf-8", "replace")


def arity_error(name: str) -> str:
    """``ERR wrong number of arguments for '<name>' command``."""
    return f"ERR wrong number of arguments for '{name}' command"


def unknown_command(argv: list[bytes]) -> str:
    """Redis 7.0's unknown-command text: name and the first ~128 bytes of arguments."""
    shown = b""
    for arg in argv[1:]:
        if len(shown) >= 128:
            break
        piece = arg.split(b"\0", 1)[0][: 128 - len(shown)]
        shown += b"'" + piece + b"' "
    name = argv[0].split(b"\0", 1)[0][:128]
    text = (
        f"ERR unknown command '{name.decode('utf-8', 'replace')}', "
        f"with args beginning with: {shown.decode('utf-8', 'replace')}"
    )
    return text.replace("\r", " ").replace("\n", " ")


def option(arg: bytes) -> bytes:
    """An option keyword as Redis compares it (strcasecmp: case-insensitive, ends at NUL)."""
    return arg.split(b"\0", 1)[0].lower()


def option_text(arg: bytes) -> str:
    """An argument as Redis prints it with %s in an error message."""
    return _c_text(arg)


def int_arg(arg: bytes, message: str = NOT_INT) -> int:
    """Parse a 64-bit integer argument or raise ``message``."""
    value = redisfloat.parse_int(arg)
    if value is None:
        raise error(message)
    return value


def float_arg(arg: bytes, message: str = NOT_FLOAT) -> float:
    """Parse a score/increment/weight argument (Redis string2d) or raise ``message``."""
    value = redisfloat.parse_float(arg)
    if value is None:
        raise error(message)
    return value


def wrongtype() -> ResponseError:
    """The WRONGTYPE error."""
    return ResponseError(WRONGTYPE)


def typed_lookup(kind: type[T], what: str) -> Callable[[Keyspace, bytes], T | None]:
    """A lookup of the ``kind`` values (``what`` names them in its docstring): the value
    at a key, None when the key is missing, WRONGTYPE for a value of another type. O(1).

    Each command family makes its own with this, so a command calls it directly.
    """

    def lookup(ks: Keyspace, key: bytes) -> T | None:
        value = ks.get(key)
        if value is None or isinstance(value, kind):
            return value
        raise wrongtype()

    lookup.__doc__ = f"The {what} at ``key``, None when missing; WRONGTYPE for another type."
    return lookup


def removal(
    lookup: Callable[[Keyspace, bytes], Names | None], remove: Callable[[Names, bytes], object]
) -> Handler:
    """The handler of a ``KEY name [name ...]`` removal from a hash or a set (HDEL, SREM):
    ``lookup`` finds the value, ``remove(value, name)`` takes out a name it holds. The
    reply is how many names were there; a missing key removes nothing, an emptied key is
    deleted. O(names).

    Each command gets its own handler from this, so a call costs no extra layer.
    """

    def handler(ks: Keyspace, argv: list[bytes]) -> Reply:
        found = lookup(ks, argv[1])
        if found is None:
            return 0
        removed = 0
        for name in argv[2:]:
            if name in found:
                remove(found, name)
                removed += 1
        if not found:
            ks.delete(argv[1])
        return removed

    return handler


def type_name(value: Value) -> bytes:
    """The TYPE reply for a value."""
    if isinstance(value, bytes):
        return b"string"
    if isinstance(value, SortedSet):
        return b"zset"
    if isinstance(value, set):
        return b"set"
    return b"hash"
