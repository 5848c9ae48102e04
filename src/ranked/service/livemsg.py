"""The messages of the live channels (docs/live.md), as msgspec types: every one is a JSON
object with a ``type`` and the ``id`` of the board's last event it covers.

Event ids are numbered per board by the process's hub (:mod:`.live`), from 1, with an
``epoch`` naming the process: a client resuming with ids of another epoch gets a fresh
snapshot (``reset``), never events of another numbering.
"""

from __future__ import annotations

from typing import Final

import msgspec

from .schemas import EntryOut

__all__ = [
    "Event",
    "MemberSnapshot",
    "MemberUpdate",
    "Ping",
    "Snapshot",
    "Update",
    "encode",
]


class Event(msgspec.Struct, omit_defaults=True):
    """One write to a board, as the service applied it: ``submit`` (the member's standing
    in the board's primary window after it, and its score in every window written),
    ``remove`` (a member) or ``clear`` (the whole board)."""

    id: int
    op: str
    member: str | None = None
    window: str | None = None
    score: float | None = None
    rank: int | None = None
    previous_score: float | None = None
    previous_rank: int | None = None
    windows: dict[str, float] | None = None
    """Every window the submission went to, with the member's score there (boards of
    more than one window)."""


class Snapshot(msgspec.Struct, tag="snapshot", tag_field="type"):
    """The top of a window as it stood after event ``id`` (or later: at-least-once).
    ``reset``: the client asked to resume from an id the buffer no longer covers (or of
    another epoch); its view is replaced, not continued."""

    id: int
    epoch: str
    window: str
    top: list[EntryOut]
    reset: bool = False


class Update(msgspec.Struct, tag="update", tag_field="type"):
    """The events since the previous message (ids contiguous, in order; ``id`` is the
    last) and the top of the channel's window read after them."""

    id: int
    epoch: str
    window: str
    events: list[Event]
    top: list[EntryOut]


class MemberSnapshot(msgspec.Struct, tag="snapshot", tag_field="type"):
    """A member's standing in a window (``score`` and ``rank`` null: not on it)."""

    id: int
    epoch: str
    window: str
    member: str
    score: float | None
    rank: int | None
    reset: bool = False


class MemberUpdate(msgspec.Struct, tag="update", tag_field="type"):
    """A member's standing changed (its own writes, or others passing it): the new
    standing, the one last sent, and the member's own events since the last message."""

    id: int
    epoch: str
    window: str
    member: str
    score: float | None
    rank: int | None
    previous_score: float | None
    previous_rank: int | None
    events: list[Event]


class Ping(msgspec.Struct, tag="ping", tag_field="type"):
    """A heartbeat, sent after a quiet interval: the board's last event id."""

    id: int
    epoch: str


_ENCODER: Final = msgspec.json.Encoder()


def encode(message: msgspec.Struct) -> str:
    """``message`` as the text of one WebSocket frame."""
    return _ENCODER.encode(message).decode()
