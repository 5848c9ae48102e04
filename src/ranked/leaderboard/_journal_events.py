"""A board's writes as journal events, and back (docs/durability.md, "What is journaled").

One write call is one append of one or more events: a submission batch is one event per
member, every other call one event. An event holds what the call was given, resolved: the
instant it counts at (``at_us``: the board's clock when the caller gave none), the
operator (the board's when the caller gave none) and the tie value; so replaying it with
the same configuration writes exactly what the call wrote.

``operation`` and ``value`` per call (``member`` is the member's bytes where there is one):

- ``best`` / ``set`` / ``incr`` / ``decr``: a submission; ``score`` the value as given
  (as a float, exact for every score a board accepts), ``value`` ``i`` when it was an
  ``int``, then ``|<tie>`` on a secondary tie-break board; ``actor`` / ``reason`` the
  caller's notes if it gave any (not replayed);
- ``lex``: ``submit_lex``; ``value`` the JSON list of fields, then ``|<operator>``;
- ``remove``, ``clear``: nothing more;
- ``member_data``: ``value`` the JSON ``{"name", "meta"}``;
- ``friends_add`` / ``friends_remove``: ``value`` the friends, each a u32 length and bytes;
- ``metadata`` / ``metadata_merge``: ``value`` the JSON object;
- ``expire``: ``value`` the deadline in Unix ms;
- ``config``: ``value`` the JSON of the board's configuration (recorded, not applied).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..journal.events import Event, NewEvent

__all__ = [
    "SUBMITS",
    "Decoded",
    "decode",
    "friends_value",
    "json_value",
    "submit_event",
]

SUBMITS: Final = frozenset(("best", "set", "incr", "decr"))
"""The operations of a submission (one per operator)."""

_U32: Final = struct.Struct("<I")


def submit_event(
    board: str,
    member: bytes,
    score: float,
    operator: str,
    at_ms: int,
    tie: int | None,
    key: str | None,
    batch: int = 1,
    actor: str | None = None,
    reason: str | None = None,
) -> NewEvent:
    """The event of one member's submission (``score`` already accepted by the board).
    ``batch``: on the first event of a submission of several members, how many there are
    (``n<count>`` in the flags), so that a replay applies them together, atomically, as
    the live call did. ``actor`` / ``reason``: the caller's notes (``submit(actor=,
    reason=)``), kept in their columns; :func:`decode` ignores them."""
    value = b"i" if isinstance(score, int) else b""
    if batch > 1:
        value += b"n%d" % batch
    if tie is not None:
        value += b"|%d" % tie
    return NewEvent(
        board=board,
        operation=operator,
        member=member,
        score=float(score),
        value=value,
        at_us=at_ms * 1000,
        key=key,
        actor=actor,
        reason=reason,
    )


def json_value(value: Any) -> bytes:
    """A JSON value as an event's ``value`` (compact, key order kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def friends_value(friends: Iterable[bytes]) -> bytes:
    """A list of members as an event's ``value``: each a u32 length and its bytes."""
    return b"".join(_U32.pack(len(friend)) + friend for friend in friends)


@dataclass(frozen=True, slots=True)
class Decoded:
    """An event read back: the call's arguments."""

    operation: str
    member: bytes | None
    at_ms: int
    score: float | None = None
    tie: int | None = None
    payload: Any = None
    """``lex``: (fields, operator); ``friends_*``: the list of friends; ``member_data``,
    ``metadata*``, ``config``: the JSON value; ``expire``: the deadline (ms)."""
    batch: int = 1
    """A submission's first event: how many events its call appended (applied together)."""


def _friends(value: bytes) -> list[bytes]:
    found, at = [], 0
    while at < len(value):
        (size,) = _U32.unpack_from(value, at)
        at += _U32.size
        found.append(value[at : at + size])
        at += size
    return found


def decode(event: Event) -> Decoded:
    """The call an event records (the inverse of the encoders above)."""
    operation = event.operation
    at_ms = event.at_us // 1000
    value = event.value
    if operation in SUBMITS:
        flags, _, tie = value.partition(b"|")
        score = event.score
        assert score is not None, event
        count = flags.find(b"n")
        return Decoded(
            operation,
            event.member,
            at_ms,
            int(score) if flags[:1] == b"i" else score,
            int(tie) if tie else None,
            batch=int(flags[count + 1 :]) if count >= 0 else 1,
        )
    if operation == "lex":
        fields, _, operator = value.rpartition(b"|")
        return Decoded(
            operation, event.member, at_ms, payload=(json.loads(fields), operator.decode())
        )
    if operation in ("friends_add", "friends_remove"):
        return Decoded(operation, event.member, at_ms, payload=_friends(value))
    if operation == "expire":
        return Decoded(operation, event.member, at_ms, payload=int(value))
    if operation in ("member_data", "metadata", "metadata_merge", "config"):
        return Decoded(operation, event.member, at_ms, payload=json.loads(value))
    return Decoded(operation, event.member, at_ms)


def lex_value(fields: int | Sequence[int], operator: str) -> bytes:
    """The ``value`` of a ``lex`` event."""
    values = [fields] if isinstance(fields, int) else list(fields)
    return json_value(values) + b"|" + operator.encode()
