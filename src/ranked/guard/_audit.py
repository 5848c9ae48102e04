"""Verdicts as journal events, and back.

A board's verdicts go to the board's journal under the board's audit stream
(:func:`ranked.journal.events.audit_stream`: ``<board>~guard``), one ``verdict`` event
each: ``member``, ``score``, ``actor`` and ``reason`` in their columns, the rest (the
action, pending id, IP, z-score, message) as a JSON ``value``. The board's replay reads
its own stream only, so a verdict can neither change a replayed score nor slow a rebuild.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..journal.events import VERDICT, Event, NewEvent, audit_stream
from .verdict import AuditRecord

__all__ = ["record", "verdict_event"]

_MAX_TEXT: Final = 500


def verdict_event(
    board: str,
    action: str,
    member: bytes | None,
    score: float | None,
    at_us: int,
    *,
    actor: str | None,
    reason: str | None,
    detail: dict[str, Any] | None = None,
) -> NewEvent:
    """The event of one verdict or moderation action on ``board``."""
    value = {"action": action, **(detail or {})}
    return NewEvent(
        board=audit_stream(board),
        operation=VERDICT,
        member=member,
        score=None if score is None else float(score),
        value=json.dumps(value, separators=(",", ":"), default=str).encode(),
        at_us=at_us,
        actor=actor or None,
        reason=(reason or None) and reason[:_MAX_TEXT],
    )


def record(board: str, event: Event) -> AuditRecord:
    """An audit stream's event read back."""
    detail = json.loads(event.value) if event.value else {}
    action = str(detail.pop("action", "?"))
    member = None if event.member is None else event.member.decode("utf-8", "surrogateescape")
    return AuditRecord(
        event.seq,
        event.at_us / 1e6,
        board,
        member,
        action,
        event.score,
        event.actor,
        event.reason,
        detail,
    )
