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

__all__ = ["Restored", "record", "verdict_event"]

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


class Restored:
    """A guard's state as its audit stream tells it (see ``AsyncGuard.restore``): bans,
    held submissions, nonces with the instant they were used, members' histories as the
    fields of their state hash (Welford over the accepted and promoted scores)."""

    def __init__(self) -> None:
        self.bans: set[bytes] = set()
        self.held: dict[bytes, bytes] = {}
        self.nonces: dict[str, float] = {}
        self._history: dict[bytes, list[float]] = {}

    def add(self, found: AuditRecord) -> None:
        action, detail = found.action, found.detail
        who = None if found.member is None else found.member.encode("utf-8", "surrogateescape")
        nonce = detail.get("nonce")
        if isinstance(nonce, str) and action in ("accepted", "held"):
            self.nonces[nonce] = found.at
        pending = detail.get("id")
        if action == "held" and isinstance(pending, str) and "entry" in detail:
            text = json.dumps(detail["entry"], separators=(",", ":"))
            self.held[pending.encode()] = (found.reason or "held").encode() + b"|" + text.encode()
        elif action in ("promoted", "dismissed") and isinstance(pending, str):
            self.held.pop(pending.encode(), None)
        if who is None:
            return
        if action == "banned":
            self.bans.add(who)
        elif action == "unbanned":
            self.bans.discard(who)
        elif action in ("accepted", "promoted") and found.score is not None:
            # n, mean, M2, last
            state = self._history.setdefault(who, [0.0, 0.0, 0.0, 0.0])
            n = state[0] + 1
            delta = found.score - state[1]
            state[1] += delta / n
            state[2] += delta * (found.score - state[1])
            state[0], state[3] = n, found.score

    @property
    def stats(self) -> dict[bytes, dict[bytes, bytes]]:
        return {
            who: {
                b"n": b"%d" % n,
                b"mean": repr(mean).encode(),
                b"m2": repr(m2).encode(),
                b"last": repr(last).encode(),
            }
            for who, (n, mean, m2, last) in self._history.items()
        }
