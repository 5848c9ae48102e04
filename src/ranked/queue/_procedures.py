"""The queue's atomic steps: each a Lua script (``lua/<name>.lua``), its Python reference
(:mod:`._memory`) and a decoder from the reply to the step's result.

Steps whose result carries items come twice, for items as ``bytes`` and as ``str``
(``text=True``), so that the decoded reply is already what the queue method returns.
``native="queue"`` marks the steps the memory backend does its own way
(``ranked.backends.native.queue``): the C lane for push and pop, the wait of a blocking
pop, the wake-up after a write that may make items ready.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NamedTuple

from ..backends.procedure import Procedure
from . import _memory
from .results import Counts, NackOutcome

__all__ = [
    "ACK",
    "CLEAR",
    "COUNTS",
    "DEAD",
    "EXTEND",
    "NACK",
    "NATIVE",
    "PEEK",
    "POP",
    "POP_MANY",
    "POP_PAIR",
    "PUSH",
    "PUSH_MANY",
    "RESERVE",
    "TAKE",
    "Taken",
    "item_of",
]

_PACKAGE: Final = "ranked.queue"
NATIVE: Final = "queue"
"""The name the memory backend's native queue steps are registered under."""

_NACKS: Final[tuple[NackOutcome, ...]] = ("not held", "requeued", "delayed", "dead", "dropped")


class Taken(NamedTuple):
    """A decoded take reply: the instant used, whether the expected head was missing,
    and the rows (id, priority, deliveries)."""

    now_us: int
    conflict: bool
    rows: list[tuple[bytes, float, int]]


def item_of(text: bool) -> Callable[[bytes], Any]:
    """Stored bytes -> the queue's item: the bytes, or their UTF-8 text."""
    if text:
        return lambda data: data.decode("utf-8", "surrogateescape")
    return bytes


def _none(reply: Any) -> None:
    return None


def _int(reply: Any) -> int:
    return int(reply)


def _optional_int(reply: Any) -> int | None:
    return None if reply is None else int(reply)


def _taken(reply: Any) -> Taken:
    if len(reply) == 5:  # one row: the commonest reserve
        return Taken(int(reply[0]), reply[1] == 1, [(reply[2], float(reply[3]), int(reply[4]))])
    values = reply[2:]
    rows = [
        (values[index], float(values[index + 1]), int(values[index + 2]))
        for index in range(0, len(values), 3)
    ]
    return Taken(int(reply[0]), reply[1] == 1, rows)


def _reserved(reply: Any) -> Taken | None:
    """A reserve: None when nothing was taken (what a blocking reserve waits on)."""
    return _taken(reply) if len(reply) > 2 else None


def _counts(reply: Any) -> Counts:
    return Counts(*(int(value) for value in reply[2:6]))


def _nack(reply: Any) -> NackOutcome:
    return _NACKS[int(reply)]


def _dead(reply: Any) -> Any:
    if isinstance(reply, list):
        return [(reply[index], int(float(reply[index + 1]))) for index in range(0, len(reply), 2)]
    return int(reply)


def _popped(text: bool) -> Callable[[Any], Any]:
    """A pop (or peek) of one: the item (its id without the sequence), or None."""
    if not text:
        return lambda reply: reply[2][8:] if len(reply) > 2 else None
    item = item_of(text)
    return lambda reply: item(reply[2][8:]) if len(reply) > 2 else None


def _popped_pair(text: bool) -> Callable[[Any], Any]:
    """A pop of one: (item, priority), or None."""
    item = item_of(text)
    return lambda reply: (item(reply[2][8:]), float(reply[3])) if len(reply) > 2 else None


def _popped_many(text: bool) -> Callable[[Any], Any]:
    """A pop of many: the items, head first."""
    item = item_of(text)
    return lambda reply: [item(reply[index][8:]) for index in range(2, len(reply), 3)]


def _take(decode: Callable[[Any], Any], native: str | None = None) -> Procedure[Any]:
    return Procedure(_PACKAGE, "take", _memory.take, decode, native=native)


PUSH: Final[Procedure[None]] = Procedure(_PACKAGE, "push", _memory.push, _none, native=NATIVE)
PUSH_MANY: Final[Procedure[int]] = Procedure(_PACKAGE, "push", _memory.push, _int, native=NATIVE)
POP: Final = {text: _take(_popped(text), NATIVE) for text in (False, True)}
POP_PAIR: Final = {text: _take(_popped_pair(text), NATIVE) for text in (False, True)}
POP_MANY: Final = {text: _take(_popped_many(text), NATIVE) for text in (False, True)}
PEEK: Final = {text: _take(_popped(text)) for text in (False, True)}
TAKE: Final[Procedure[Taken]] = _take(_taken)
RESERVE: Final[Procedure[Taken | None]] = _take(_reserved, NATIVE)
COUNTS: Final[Procedure[Counts]] = _take(_counts)
ACK: Final[Procedure[int]] = Procedure(_PACKAGE, "ack", _memory.ack, _int)
NACK: Final[Procedure[NackOutcome]] = Procedure(
    _PACKAGE, "nack", _memory.nack, _nack, native=NATIVE
)
EXTEND: Final[Procedure[int | None]] = Procedure(_PACKAGE, "extend", _memory.extend, _optional_int)
CLEAR: Final[Procedure[int]] = Procedure(_PACKAGE, "clear", _memory.clear, _int)
DEAD: Final[Procedure[Any]] = Procedure(_PACKAGE, "dead", _memory.dead, _dead, native=NATIVE)
