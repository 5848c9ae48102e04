"""Journal events: what a caller appends (:class:`NewEvent`) and what the store hands back
(:class:`Event`, the same fields plus the sequence numbers the store assigned: ``seq``
over the whole journal, ``board_seq`` within the event's board).

Both are immutable. Every field is checked when the record is built and again when it is
appended (a frozen dataclass can still be forged), so a bad event is refused with a typed
error before anything is written: :class:`~ranked.errors.InvalidEventError` for a wrong
type or value, :class:`~ranked.errors.InvalidNameError` for a bad board name,
:class:`~ranked.errors.OutOfRangeError` for an instant outside the one range every backend
holds (:mod:`ranked.core.limits`). Checking an event is O(size of its text fields).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from operator import is_
from typing import Any, Final

from ..core._names import check_name
from ..core.limits import MAX_INSTANT_US, check_instant_us
from ..errors import InvalidEventError, JournalError, RankedError

__all__ = [
    "AUDIT_SUFFIX",
    "MAX_AT_US",
    "OUTBOX_SUFFIX",
    "VERDICT",
    "Event",
    "NewEvent",
    "audit_stream",
    "check_event",
    "event_from_row",
    "is_audit_stream",
    "is_side_stream",
    "outbox_stream",
    "recorded",
    "stored_fields",
]

_OPERATION: Final = re.compile(r"[a-z][a-z0-9_]{0,31}")
"""An operation's name: what the caller's operation is called (``incr``, ``remove``...);
the store treats it, like ``value``, as the caller's."""

MAX_AT_US: Final = MAX_INSTANT_US
"""The latest instant an event may count at, in Unix microseconds (2140-01-01T00:00:00Z)."""


AUDIT_SUFFIX: Final = "~guard"
"""A board's audit stream is a stream of its own beside the board's: ``<board>~guard``.
It holds the write guard's ``verdict`` events (docs/guard.md); a board's replay reads only
its own stream, so verdicts never change a replayed score nor slow a rebuild, and the
journal's list of boards to reopen (``recorded_configs``) leaves audit streams out."""

VERDICT: Final = "verdict"
"""The operation of an audit stream's events: a verdict or a moderation action."""


def audit_stream(board: str) -> str:
    """The name of ``board``'s audit stream."""
    return board + AUDIT_SUFFIX


def is_audit_stream(name: str) -> bool:
    """Whether a journal stream name is a board's audit stream."""
    return name.endswith(AUDIT_SUFFIX)


OUTBOX_SUFFIX: Final = "~notify"
"""A board's webhook outbox is a stream of its own beside the board's: ``<board>~notify``
(the notifications produced for the board's webhook, and which of them were settled:
docs/live.md, Notifications)."""


def outbox_stream(board: str) -> str:
    """The name of ``board``'s webhook outbox."""
    return board + OUTBOX_SUFFIX


def is_side_stream(name: str) -> bool:
    """Whether a journal stream name is one of a board's side streams (its audit stream,
    its webhook outbox), not a board."""
    return name.endswith((AUDIT_SUFFIX, OUTBOX_SUFFIX))


_GOOD_BOARDS: set[str] = set()
"""Board names already checked (a board writes many events): the first 4,096 seen."""


_GOOD_OPERATIONS: Final = frozenset(("best", "set", "incr", "decr", "verdict"))
"""The operations written most (a cheaper check; any other is matched against the
pattern)."""


def _optional_text(value: object, name: str) -> None:
    if value is not None and not isinstance(value, str):
        raise InvalidEventError(f"{name} must be a str or None, not {type(value).__name__}")
    if value == "":
        raise InvalidEventError(f"{name} must not be empty (use None for no {name})")


def _check_fields(
    board: object,
    member: object,
    operation: object,
    score: object,
    value: object,
    at_us: object,
    key: object,
    actor: object,
    reason: object,
) -> None:
    """Raise the typed error of the first bad field; return None when all are good."""
    if not isinstance(board, str):
        raise InvalidEventError(f"board must be a str, not {type(board).__name__}")
    if board not in _GOOD_BOARDS:
        check_name(board, "board")
        if len(_GOOD_BOARDS) < 4096:
            _GOOD_BOARDS.add(board)
    if member is not None and not isinstance(member, bytes):
        raise InvalidEventError(f"member must be bytes or None, not {type(member).__name__}")
    known = operation.__class__ is str and operation in _GOOD_OPERATIONS
    if not known and (not isinstance(operation, str) or _OPERATION.fullmatch(operation) is None):
        raise InvalidEventError(
            f"operation {operation!r} is not a name of 1 to 32 characters [a-z0-9_],"
            " starting with a letter"
        )
    if score is not None and (
        not isinstance(score, float) or score != score or score in (math.inf, -math.inf)
    ):
        raise InvalidEventError(f"score must be a finite float or None, not {score!r}")
    if not isinstance(value, bytes):
        raise InvalidEventError(f"value must be bytes, not {type(value).__name__}")
    if isinstance(at_us, bool) or not isinstance(at_us, int):
        raise InvalidEventError(f"at_us must be an int (microseconds), not {type(at_us).__name__}")
    check_instant_us(at_us, "at_us")
    _optional_text(key, "key")
    _optional_text(actor, "actor")
    _optional_text(reason, "reason")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class NewEvent:
    """An event to append: the store assigns its ``seq``.

    ``board``: the board's name. ``member``: the member's bytes, or None for a board-wide
    operation. ``operation``: the caller's name of the operation (``[a-z][a-z0-9_]*``, at
    most 32 characters). ``score``: the score a submission carries (a finite float, kept
    in a column of its own so that the store can aggregate it), None for other
    operations. ``value``: the operation's other arguments, encoded by the caller (opaque
    here). ``at_us``: the instant it counts at,
    Unix microseconds. ``key``: an idempotency key (a second append with the same board
    and key returns the first one's record). ``actor`` / ``reason``: who did it and why
    (moderation).
    """

    board: str
    operation: str
    at_us: int
    value: bytes = b""
    member: bytes | None = None
    score: float | None = None
    key: str | None = None
    actor: str | None = None
    reason: str | None = None
    _checked: tuple[Any, ...] = field(default=(), init=False, repr=False, compare=False)
    """The fields as they were checked at construction (see :func:`check_event`)."""

    def __init__(
        self,
        *,
        board: str,
        operation: str,
        at_us: int,
        value: bytes = b"",
        member: bytes | None = None,
        score: float | None = None,
        key: str | None = None,
        actor: str | None = None,
        reason: str | None = None,
    ) -> None:
        # the dataclass's own __init__ would set each field through the frozen
        # __setattr__ guard: the slots are filled directly, once the fields are checked
        fields = (board, member, operation, score, value, at_us, key, actor, reason)
        _check_fields(*fields)
        for put, given in zip(_NEW_SETTERS, fields, strict=True):
            put(self, given)
        _SET_CHECKED(self, fields)


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """An appended event: :class:`NewEvent`'s fields plus ``seq``, the store's sequence
    number (strictly increasing from 1 in append order), and ``board_seq``, the event's
    number within its board (1, 2, 3, ... in the same order)."""

    seq: int
    board_seq: int
    board: str
    operation: str
    at_us: int
    value: bytes
    member: bytes | None
    score: float | None
    key: str | None
    actor: str | None
    reason: str | None

    def __post_init__(self) -> None:
        for name in ("seq", "board_seq"):
            number = getattr(self, name)
            if isinstance(number, bool) or not isinstance(number, int) or number < 1:
                raise InvalidEventError(f"{name} must be an int >= 1, not {number!r}")
        check_event(self)


def stored_fields(event: NewEvent | Event) -> tuple[Any, ...]:
    """An event's fields but its sequence numbers, in the order the store keeps them:
    board, member, operation, score, value, at_us, key, actor, reason."""
    return (
        event.board,
        event.member,
        event.operation,
        event.score,
        event.value,
        event.at_us,
        event.key,
        event.actor,
        event.reason,
    )


def check_event(event: object) -> None:
    """Raise the typed error of ``event``'s first bad field (or of ``event`` not being an
    event at all); return None when it may be appended."""
    if not isinstance(event, NewEvent | Event):
        raise InvalidEventError(f"expected a NewEvent, not {type(event).__name__}")
    fields = stored_fields(event)
    if isinstance(event, NewEvent) and _unchanged(fields, event._checked):
        return  # checked at construction, and no field replaced since (the same objects)
    _check_fields(*fields)


def _unchanged(fields: tuple[Any, ...], checked: tuple[Any, ...]) -> bool:
    return len(fields) == len(checked) and all(map(is_, fields, checked))


def recorded(event: NewEvent, seq: int, board_seq: int) -> Event:
    """The record of ``event`` appended at ``seq`` (``board_seq`` in its board). Not
    checked again: ``event`` was checked when it was appended, and the store gave the
    numbers."""
    record = object.__new__(Event)
    for put, value in zip(_RECORD_SETTERS, (seq, board_seq, *stored_fields(event)), strict=True):
        put(record, value)
    return record


_RECORD_FIELDS: Final = (
    "seq",
    "board_seq",
    "board",
    "member",
    "operation",
    "score",
    "value",
    "at_us",
    "key",
    "actor",
    "reason",
)
_RECORD_SETTERS: Final = tuple(getattr(Event, name).__set__ for name in _RECORD_FIELDS)
"""Each field's slot setter: a frozen record is filled without its ``__setattr__``."""
_NEW_SETTERS: Final = tuple(getattr(NewEvent, name).__set__ for name in _RECORD_FIELDS[2:])
"""A new event's slot setters, in :func:`stored_fields`' order."""
_SET_CHECKED: Final = getattr(NewEvent, "_checked").__set__  # noqa: B009 - a slot descriptor
"""The setter of a new event's ``_checked`` slot."""


def event_from_row(row: tuple[object, ...]) -> Event:
    """The event a stored row ``(seq, board_seq, *stored_fields)`` holds, or
    :class:`~ranked.errors.JournalError` naming the row if it does not parse."""
    try:
        return _event(*row)
    except RankedError as error:
        raise JournalError(f"journal row seq={row[0]!r} does not parse: {error}") from error


def _event(
    seq: Any,
    board_seq: Any,
    board: Any,
    member: Any,
    operation: Any,
    score: Any,
    value: Any,
    at_us: Any,
    key: Any,
    actor: Any,
    reason: Any,
) -> Event:
    # the fields are checked by Event
    return Event(
        seq=seq,
        board_seq=board_seq,
        board=board,
        member=member,
        operation=operation,
        score=score,
        value=value,
        at_us=at_us,
        key=key,
        actor=actor,
        reason=reason,
    )
