"""Verdicts as journal events, and back.

An accepted submission's verdict rides in the board's own submission event (no row of
its own): the board's ``submit(actor=, reason=)`` keeps the caller in ``actor`` and
:func:`accepted_note` in ``reason`` (``guard:accepted``, then a space and the detail's
JSON when there is any). Replay ignores both columns, so it writes what it always did.

Every other verdict and moderation action (rejected, held, promoted, dismissed, banned,
unbanned, removed) goes to the board's audit stream
(:func:`ranked.journal.events.audit_stream`: ``<board>~guard``), one ``verdict`` event
each: ``member``, ``score``, ``actor`` and ``reason`` in their columns, the rest (the
action, pending id, IP, z-score, message) as a JSON ``value``. The board's replay reads
its own stream only, so a verdict can neither change a replayed score nor slow a rebuild.

:func:`verdicts` reads both back in journal order.
"""

from __future__ import annotations

import heapq
import json
import math
import re
from collections.abc import Iterable
from typing import Any, Final

from ..journal.events import VERDICT, Event, NewEvent, audit_stream
from ..journal.store import JournalStore
from .verdict import AuditRecord

__all__ = ["ACCEPTED", "Restored", "accepted_note", "record", "verdict_event", "verdicts"]

_MAX_TEXT: Final = 500

_ENCODE: Final = json.JSONEncoder(separators=(",", ":"), default=str).encode
"""json.dumps's encoding, made once (json.dumps makes an encoder per call given options)."""

ACCEPTED: Final = "guard:accepted"
"""The ``reason`` of a board's submission event that the guard accepted (then a space and
the verdict's detail as JSON, when there is any)."""


_PLAIN: Final = re.compile(r"[ !#-\[\]-~]*")
"""Printable ASCII but ``"`` and ``\\``: a JSON string's text as it is."""


def accepted_note(
    ip: str | None, scope: str | None, nonce: str | None, z: float | None, rank: int | None
) -> str:
    """The ``reason`` an accepted submission's event carries: :data:`ACCEPTED` and, when
    any field is not None, a space and the JSON object of those fields (in this order).
    ``nonce`` was checked by :func:`~ranked.guard.signing.check_nonce` (its characters
    need no escaping). The ip and scope part is made once per pair."""
    head = _HEADS.get((ip, scope))
    if head is None:
        if len(_HEADS) >= 4096:
            _HEADS.clear()
        head = _HEADS[ip, scope] = _members({"ip": ip, "scope": scope})
    if head and nonce is not None and type(z) is float and rank is None and math.isfinite(z):
        return f'{ACCEPTED} {{{head},"nonce":"{nonce}","z":{z!r}}}'  # a client's common note
    parts = [head] if head else []
    if nonce is not None:
        parts.append(f'"nonce":"{nonce}"')
    if type(z) is float and rank is None and math.isfinite(z):
        parts.append(f'"z":{z!r}')  # the common case, as _members writes it
    elif z is not None or rank is not None:
        rest = _members({"z": z, "rank": rank})
        if rest:
            parts.append(rest)
    if not parts:
        return ACCEPTED
    return ACCEPTED + " {" + ",".join(parts) + "}"


_HEADS: dict[tuple[str | None, str | None], str] = {}
"""The ip and scope members of recent notes."""


def _members(fields: dict[str, Any]) -> str:
    """The JSON object members (no braces) of the fields whose value is not None: plain
    strings, ints and finite floats written directly (what ``json.dumps`` writes for
    them), anything else through the JSON encoder."""
    parts = []
    for name, value in fields.items():
        kind = type(value)
        if value is None:
            continue
        if kind is str and _PLAIN.fullmatch(value) is not None:
            parts.append(f'"{name}":"{value}"')
        elif kind is int or (kind is float and math.isfinite(value)):
            parts.append(f'"{name}":{value!r}')
        else:
            parts.append(_ENCODE({name: value})[1:-1])
    return ",".join(parts)


def _accepted(board: str, event: Event) -> AuditRecord:
    """A board's submission event carrying an accepted verdict, read back."""
    reason = event.reason or ""
    body = reason[len(ACCEPTED) + 1 :]
    member = None if event.member is None else event.member.decode("utf-8", "surrogateescape")
    return AuditRecord(
        event.seq,
        event.at_us / 1e6,
        board,
        member,
        "accepted",
        event.score,
        event.actor,
        None,
        json.loads(body) if body else {},
    )


def _is_accepted(event: Event) -> bool:
    reason = event.reason
    return (
        reason is not None
        and (reason == ACCEPTED or reason.startswith(ACCEPTED + " "))
        and event.operation != VERDICT
    )


def verdicts(store: JournalStore, board: str, member: bytes | None = None) -> list[AuditRecord]:
    """Every journaled verdict of ``board`` (of ``member`` only, if given), in journal
    order: the audit stream's events merged with the accepted ones in the board's own
    stream. Reads both streams (of the member only, if given): O(events)."""
    stream = audit_stream(board)
    own: Iterable[Event]
    if member is None:
        audited: Iterable[Event] = store.read(board=stream)
        own = store.read(board=board)
    else:
        audited = store.member_events(stream, member)
        own = store.member_events(board, member)
    found = (record(board, event) for event in audited)
    accepted = (_accepted(board, event) for event in own if _is_accepted(event))
    return list(heapq.merge(found, accepted, key=lambda r: r.seq))


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
