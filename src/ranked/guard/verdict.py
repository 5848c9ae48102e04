"""What a guard answers: a :class:`Verdict` per submission, a :class:`PendingEntry` per
held one, an :class:`AuditRecord` per journaled verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from ..leaderboard.results import Submission
from ..ratelimit import Decision

__all__ = ["REASONS", "AuditRecord", "Outcome", "PendingEntry", "Verdict"]

Outcome = Literal["accepted", "rejected", "pending"]

REASONS: Final = {
    "banned": "the member is banned from this board",
    "untrusted": "this board takes scores from trusted writers only",
    "operator": "a client submits with the board's own operator only",
    "out-of-bounds": "the score is outside the board's bounds",
    "missing-signature": "this board takes signed scores only (client_time, nonce, signature)",
    "bad-signature": "the signature does not match the submission",
    "clock-skew": "the client time is too far from the server's",
    "rate-limited": "too many submissions for this member",
    "rate-limited-ip": "too many submissions from this address",
    "replayed-nonce": "this nonce was used before",
    "velocity-step": "the score changed more than one submission allows",
    "velocity-span": "the score changed more than the time span allows",
    "z-score": "the score is far from the member's history (held for review)",
    "rank-tier": "the score would enter the board's top tier (held for review)",
}
"""Every reason code a verdict may carry, and what it means."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """One submission's verdict.

    - ``outcome``: ``accepted`` (the board took it: ``submission`` is the board's answer),
      ``rejected`` (nothing was written: ``reason`` says why) or ``pending`` (held on the
      board's pending list under ``pending_id``, with the ``reason`` it was held).
    - ``limit``: the rate-limit decision that refused it, else the tightest one made
      (None when no rate limit ran): for the ``RateLimit`` headers.
    - ``zscore``: the score's z-score against the member's history, when computed.
    """

    outcome: Outcome
    reason: str | None = None
    message: str | None = None
    pending_id: str | None = None
    submission: Submission | None = None
    limit: Decision | None = None
    zscore: float | None = None

    @property
    def accepted(self) -> bool:
        return self.outcome == "accepted"

    @property
    def rejected(self) -> bool:
        return self.outcome == "rejected"

    @property
    def pending(self) -> bool:
        return self.outcome == "pending"


_SETTERS: Final = tuple(
    getattr(Verdict, name).__set__
    for name in ("outcome", "reason", "message", "pending_id", "submission", "limit", "zscore")
)


def accepted(submission: Submission, limit: Decision | None, zscore: float | None) -> Verdict:
    """``Verdict("accepted", submission=..., limit=..., zscore=...)``, made without the
    frozen dataclass's keyword ``__init__`` (each field set through its slot): the verdict
    of every accepted submission."""
    verdict = object.__new__(Verdict)
    outcome, reason, message, pending_id, given, tightest, z = _SETTERS
    outcome(verdict, "accepted")
    reason(verdict, None)
    message(verdict, None)
    pending_id(verdict, None)
    given(verdict, submission)
    tightest(verdict, limit)
    z(verdict, zscore)
    return verdict


@dataclass(frozen=True, slots=True)
class PendingEntry:
    """A held submission: what the client sent and when (``at``: Unix seconds, the
    instant it will count at if promoted), why it was held, and its replay payload."""

    id: str
    board: str
    member: str
    score: float
    at: float
    reason: str
    client_time: int | None = None
    nonce: str | None = None
    ip: str | None = None
    replay: Any = None
    operator: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "board": self.board,
            "member": self.member,
            "score": self.score,
            "at": self.at,
            "reason": self.reason,
            "client_time": self.client_time,
            "nonce": self.nonce,
            "ip": self.ip,
            "replay": self.replay,
            "operator": self.operator,
        }


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """A journaled verdict or moderation action.

    ``action``: ``accepted``, ``rejected``, ``held``, ``promoted``, ``dismissed`` (a
    pending submission rejected later), ``banned``, ``unbanned``, ``removed``. ``actor``:
    who (a key, ``validator``, ``webhook``, ``guard``); ``reason``: the reason code or the
    moderator's words; ``detail``: the rest (pending id, IP, z-score, message)."""

    seq: int
    at: float
    board: str
    member: str | None
    action: str
    score: float | None
    actor: str | None
    reason: str | None
    detail: dict[str, Any]
