"""The write guard: every submission to a board treated as hostile, in layers, with a
pending board (docs/guard.md).

:class:`Guard` / :class:`AsyncGuard` judge a submission with a :class:`GuardConfig`
(trusted-only, ban list, bounds, HMAC + clock skew + nonce, rate limits per member and per
IP, velocity, z-score, pending tier) and answer a :class:`Verdict`; held submissions wait
on the board's pending list for a moderator or a validator. The asyncio class is the
source (``_async/``); the blocking one (``_sync/``) is generated from it.
"""

from __future__ import annotations

from ..errors import GuardArgumentError, GuardConfigError, PendingNotFoundError
from ._async.guard import AsyncGuard, Validator
from ._sync.guard import Guard
from .config import GuardConfig, Secret
from .signing import message, score_text, sign, verify
from .verdict import REASONS, AuditRecord, Outcome, PendingEntry, Verdict

__all__ = [
    "REASONS",
    "AsyncGuard",
    "AuditRecord",
    "Guard",
    "GuardArgumentError",
    "GuardConfig",
    "GuardConfigError",
    "Outcome",
    "PendingEntry",
    "PendingNotFoundError",
    "Secret",
    "Validator",
    "Verdict",
    "message",
    "score_text",
    "sign",
    "verify",
]
