"""Rank-change notifications (docs/live.md, "Notifications"): per-board policies that
diff a board's ranks at an interval and tell only the changes worth telling, only near
the end of a window if asked; pure logic (:mod:`.policy`, :mod:`.schedule`, :mod:`.diff`)
and a watcher that reads the board through its public API (:class:`AsyncRankWatcher`,
:class:`RankWatcher`). ``sign`` and ``verify`` (:mod:`ranked.core.webhook_signature`) sign
and verify webhook bodies."""

from __future__ import annotations

from ..core.webhook_signature import sign, verify
from ._async.watcher import AsyncRankWatcher
from ._sync.watcher import RankWatcher
from .diff import Change, Notification, changes, notification_id
from .policy import DEFAULT_THRESHOLDS, FINAL_DAY, MEANINGFUL, PRESETS, ChangeKind, NotifyPolicy

__all__ = [
    "DEFAULT_THRESHOLDS",
    "FINAL_DAY",
    "MEANINGFUL",
    "PRESETS",
    "AsyncRankWatcher",
    "Change",
    "ChangeKind",
    "Notification",
    "NotifyPolicy",
    "RankWatcher",
    "changes",
    "notification_id",
    "sign",
    "verify",
]
