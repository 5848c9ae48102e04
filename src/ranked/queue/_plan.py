"""Sans-I/O queue logic: validation, the procedure calls, and shaping their replies.

:class:`Queue` and :class:`AsyncQueue` only send the calls built here to their backend
(``backend.run``), and sleep between polls of a blocking pop on the schedule of
:func:`pauses`: nothing else is written twice.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, Generic

from ..backends._scripts import Arg
from ..backends.procedure import Procedure
from ..errors import InvalidItemError, InvalidPriorityError, QueueArgumentError
from ._procedures import ACK, CLEAR, COUNT, DEAD, EXTEND, NACK, POP, PUSH, TAKE, Taken
from .keys import QueueKeys, leased, split_leased
from .results import Counts, DeadLetter, ItemT, Lease, NackOutcome

__all__ = ["POLL_CAP", "Call", "QueuePlan", "item_bytes", "pauses", "priority_of"]

Call = tuple[Procedure[Any], Sequence[bytes], Sequence[Arg], "int | None"]
"""One ``backend.run`` call: procedure, keys, arguments, instant (None: the server's)."""

POLL_FIRST: Final = 0.001
POLL_CAP: Final = 0.05
"""A blocked pop polls after 1 ms, then doubles the pause up to this cap (seconds): it
sees a push at most ~50 ms (plus one round trip) late and costs at most ~20 calls/s idle."""

MAX_SAFE_INTEGER: Final = 2**53
_NACKS: Final[tuple[NackOutcome, ...]] = ("not held", "requeued", "delayed", "dead", "dropped")


def priority_of(value: object) -> float:
    """``value`` as a stored priority: a finite float (``-0.0`` as ``0.0``); an int must be
    within +-2**53 (stored exactly). Anything else raises :class:`InvalidPriorityError`."""
    if type(value) is float:
        if value - value == 0.0:  # false for NaN and both infinities
            return value + 0.0
    elif isinstance(value, int) and not isinstance(value, bool):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return float(value)
    elif isinstance(value, float) and math.isfinite(value):
        return float(value) + 0.0
    raise InvalidPriorityError(f"a priority must be a finite number, not {value!r}")


def item_bytes(item: object) -> bytes:
    """An item as stored: ``bytes`` as is, ``str`` as UTF-8; anything else raises
    :class:`InvalidItemError`."""
    if type(item) is bytes:
        return item
    if isinstance(item, str):
        try:
            return item.encode()
        except UnicodeEncodeError as error:
            raise InvalidItemError(f"item {item!r} is not valid Unicode text") from error
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item)
    raise InvalidItemError(f"an item must be bytes or str, not {type(item).__name__}")


def seconds_to_us(value: object, what: str, *, zero: bool = True) -> int:
    """Seconds (a finite, non-negative number; positive unless ``zero``) as whole us."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise QueueArgumentError(f"{what} must be a finite number of seconds, not {value!r}")
    micros = round(value * 1_000_000)
    if micros < 0 or (micros == 0 and not zero):
        raise QueueArgumentError(f"{what} must be {'>= 0' if zero else '> 0'}, not {value!r}")
    return micros


def check_timeout(timeout: object) -> None:
    """Raise :class:`QueueArgumentError` unless ``timeout`` is None or a finite number of
    seconds >= 0: checked before anything is popped, so a bad timeout fails the same way
    whether or not an item was ready."""
    if timeout is not None:
        seconds_to_us(timeout, "timeout")


def check_count(count: object) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise QueueArgumentError(f"count must be an int >= 0, not {count!r}")
    return count


def pauses(timeout: float) -> Iterator[float]:
    """The sleeps of a blocking call: 1 ms doubling up to :data:`POLL_CAP`, never past
    ``timeout`` seconds from now (the caller polls after each)."""
    deadline = time.monotonic() + timeout
    pause = POLL_FIRST
    while (left := deadline - time.monotonic()) > 0:
        yield min(pause, left)
        pause = min(pause * 2, POLL_CAP)


class QueuePlan(Generic[ItemT]):
    """One queue's logic with no I/O; see :class:`ranked.queue.Queue` for the semantics."""

    __slots__ = ("_limit", "_max_age", "_pop_one", "_push_keys", "_track", "keys", "text")

    def __init__(
        self, name: str, *, max_attempts: int | None, max_age: float | None, text: bool
    ) -> None:
        if max_attempts is not None and (
            isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1
        ):
            raise QueueArgumentError(f"max_attempts must be None or an int >= 1: {max_attempts!r}")
        self.keys = QueueKeys.of(name)
        self.text = text
        self._limit = max_attempts or 0
        self._max_age = 0 if max_age is None else seconds_to_us(max_age, "max_age", zero=False)
        self._track = 1 if self._max_age else 0
        self._push_keys = (self.keys.ready, self.keys.delayed, self.keys.seq, self.keys.born)
        self._pop_one: Call = (POP, self.keys.all(), self.take("pop", 1)[2], None)

    @property
    def max_age_us(self) -> int:
        """``max_age`` in microseconds (0: none)."""
        return self._max_age

    # -- calls -------------------------------------------------------------------------

    def push(
        self, item: object, priority: object, delay: object, at: object, now_us: int | None
    ) -> Call:
        """The call pushing one item (validated first)."""
        if delay is None and at is None:
            args: Sequence[Arg] = (self._track, priority_of(priority), 0, 0, item_bytes(item))
        else:
            args = (self._track, *self._entry(item, priority, delay, at))
        return (
            PUSH,
            self._push_keys,
            args,
            now_us,
        )

    def push_many(
        self,
        items: Mapping[Any, object] | Iterable[tuple[object, object]],
        delay: object,
        at: object,
        now_us: int | None,
    ) -> Call | None:
        """The call pushing many (item, priority) pairs, or None when there are none."""
        pairs = items.items() if isinstance(items, Mapping) else items
        args: list[Arg] = [self._track]
        for pair in pairs:
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise QueueArgumentError(f"expected (item, priority) pairs, got {pair!r}")
            args += self._entry(pair[0], pair[1], delay, at)
        if len(args) == 1:
            return None
        return (
            PUSH,
            self._push_keys,
            args,
            now_us,
        )

    @staticmethod
    def pairs_of(
        items: Mapping[Any, object] | Iterable[tuple[object, object]],
    ) -> list[tuple[bytes, float]]:
        """(item, priority) pairs validated: items as bytes, priorities as floats."""
        pairs = items.items() if isinstance(items, Mapping) else items
        checked = []
        for pair in pairs:
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise QueueArgumentError(f"expected (item, priority) pairs, got {pair!r}")
            checked.append((item_bytes(pair[0]), priority_of(pair[1])))
        return checked

    def _entry(self, item: object, priority: object, delay: object, at: object) -> tuple[Arg, ...]:
        value = priority_of(priority)
        data = item_bytes(item)
        if delay is not None and at is not None:
            raise QueueArgumentError("give delay or at, not both")
        delay_us = 0 if delay is None else seconds_to_us(delay, "delay")
        at_us = 0 if at is None else seconds_to_us(at, "at")
        return value, at_us, delay_us, data

    def pop_one(self, now_us: int | None) -> Call:
        """The call popping the head, answering (id, priority) or None (built once when
        ``now_us`` is None)."""
        if now_us is None:
            return self._pop_one
        return POP, self.keys.all(), self._pop_one[2], now_us

    def take(
        self,
        mode: str,
        count: int,
        lease_us: int = 0,
        *,
        expect: bytes = b"",
        now_us: int | None = None,
    ) -> Call:
        """Settle, then pop / peek / reserve ``count`` (or count, mode ``counts``)."""
        args = (mode, count, lease_us, self._limit, self._max_age, expect)
        return TAKE if mode != "counts" else COUNT, self.keys.all(), args, now_us

    def ack(self, leases: Sequence[Lease[ItemT]], now_us: int | None) -> Call:
        return ACK, (self.keys.leases, self.keys.born), [lease.token for lease in leases], now_us

    def nack(self, lease: Lease[ItemT], delay: object, now_us: int | None) -> Call:
        args = (lease.token, seconds_to_us(delay, "delay"), self._limit, self._max_age)
        return NACK, self.keys.all(), args, now_us

    def extend(self, lease: Lease[ItemT], seconds: object, now_us: int | None) -> Call:
        return (
            EXTEND,
            (self.keys.leases,),
            (lease.token, seconds_to_us(seconds, "lease", zero=False)),
            now_us,
        )

    def clear(self) -> Call:
        return CLEAR, (*self.keys.all(), self.keys.seq), (), None

    def dead(self, mode: str, count: int | None, now_us: int | None) -> Call:
        if count is not None and (
            isinstance(count, bool) or not isinstance(count, int) or count < 1
        ):
            raise QueueArgumentError(f"count must be None (all) or an int >= 1, not {count!r}")
        args = (mode, -1 if count is None else count, self._track)
        return DEAD, (self.keys.ready, self.keys.dead, self.keys.born), args, now_us

    # -- replies -----------------------------------------------------------------------

    def item(self, data: bytes) -> ItemT:
        """Stored bytes as the queue's item type."""
        return data.decode("utf-8", "surrogateescape") if self.text else data  # type: ignore[return-value]

    def head_item(self, head: tuple[bytes, float] | None) -> ItemT | None:
        return None if head is None else self.item(head[0][8:])

    def head_pair(self, head: tuple[bytes, float] | None) -> tuple[ItemT, float] | None:
        return None if head is None else (self.item(head[0][8:]), head[1])

    def first(self, taken: Taken) -> ItemT | None:
        rows = taken.rows
        return self.item(rows[0][0][8:]) if rows else None

    def items(self, taken: Taken) -> list[ItemT]:
        return [self.item(row[0][8:]) for row in taken.rows]

    def pairs(self, taken: Taken) -> list[tuple[ItemT, float]]:
        return [(self.item(row[0][8:]), row[1]) for row in taken.rows]

    def leases(self, taken: Taken, lease_us: int) -> list[Lease[ItemT]]:
        deadline = taken.now_us + lease_us
        return [
            Lease(
                self.item(item_id[8:]),
                priority,
                delivery,
                deadline,
                leased(priority, delivery, item_id),
            )
            for item_id, priority, delivery in taken.rows
        ]

    @staticmethod
    def counts(reply: Any) -> Counts:
        return Counts(*(int(value) for value in reply[2:6]))

    @staticmethod
    def nack_outcome(code: int) -> NackOutcome:
        return _NACKS[code]

    def extended(self, lease: Lease[ItemT], deadline: int | None) -> Lease[ItemT] | None:
        if deadline is None:
            return None
        return Lease(lease.item, lease.priority, lease.delivery, deadline, lease.token)

    def dead_letters(self, rows: list[tuple[bytes, int]]) -> list[DeadLetter[ItemT]]:
        letters = []
        for member, died_at in rows:
            priority, delivery, item_id = split_leased(member)
            letters.append(DeadLetter(self.item(item_id[8:]), priority, delivery, died_at))
        return letters
