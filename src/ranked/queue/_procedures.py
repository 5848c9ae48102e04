"""The queue's atomic steps: each a Lua script plus its Python twin and one decoder."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..backends.procedure import Procedure
from . import _memory

__all__ = ["ACK", "CLEAR", "COUNT", "DEAD", "EXTEND", "NACK", "POP", "PUSH", "TAKE", "Taken"]

_PACKAGE = "ranked.queue"


class Taken(NamedTuple):
    """A decoded take reply: the instant used, whether the expected head was missing,
    and the rows (id, priority, deliveries), or the four counts."""

    now_us: int
    conflict: bool
    rows: list[tuple[bytes, float, int]]

    def __bool__(self) -> bool:
        """True when rows came back (what a blocking call waits for)."""
        return bool(self.rows)


def _int(reply: Any) -> int:
    return int(reply)


def _optional_int(reply: Any) -> int | None:
    return None if reply is None else int(reply)


def _taken(reply: Any) -> Taken:
    if len(reply) == 5:  # one row: the common pop
        return Taken(reply[0], reply[1] == 1, [(reply[2], float(reply[3]), int(reply[4]))])
    values = reply[2:]
    rows = [
        (values[index], float(values[index + 1]), int(values[index + 2]))
        for index in range(0, len(values), 3)
    ]
    return Taken(int(reply[0]), reply[1] == 1, rows)


def _head(reply: Any) -> tuple[bytes, float] | None:
    """A pop of one, decoded without building rows: (id, priority) or None."""
    return (reply[2], float(reply[3])) if len(reply) > 2 else None


def _counts(reply: Any) -> Any:
    return reply


def _dead(reply: Any) -> Any:
    if isinstance(reply, list):
        return [(reply[index], int(float(reply[index + 1]))) for index in range(0, len(reply), 2)]
    return int(reply)


PUSH: Procedure[int] = Procedure(_PACKAGE, "push", _memory.push, _int)
TAKE: Procedure[Taken] = Procedure(_PACKAGE, "take", _memory.take, _taken)
POP: Procedure[tuple[bytes, float] | None] = Procedure(_PACKAGE, "take", _memory.take, _head)
COUNT: Procedure[Any] = Procedure(_PACKAGE, "take", _memory.take, _counts)
ACK: Procedure[int] = Procedure(_PACKAGE, "ack", _memory.ack, _int)
NACK: Procedure[int] = Procedure(_PACKAGE, "nack", _memory.nack, _int)
EXTEND: Procedure[int | None] = Procedure(_PACKAGE, "extend", _memory.extend, _optional_int)
CLEAR: Procedure[int] = Procedure(_PACKAGE, "clear", _memory.clear, _int)
DEAD: Procedure[Any] = Procedure(_PACKAGE, "dead", _memory.dead, _dead)
