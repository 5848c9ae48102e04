"""One snapshot diff: which members changed in a way the policy tells, as
:class:`Notification` values with stable ids. Pure: no I/O, no clock.

A notification's id is a digest of the board, the window, the diff's slot (the grid
instant it ran for), the member, the kind and the threshold: the same change found by
the same diff has the same id in every process and on every delivery attempt, so a
receiver that keeps the ids it has seen drops duplicates.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..core._time import UNIX_EPOCH
from .policy import ChangeKind, NotifyPolicy

__all__ = ["Change", "Notification", "changes", "notification_id", "notifications"]


@dataclass(frozen=True, slots=True)
class Change:
    """One member's change between two snapshots: ``old_rank`` None when the member was
    not on the board, or below the ranks read, at the previous snapshot; ``new_rank`` and
    ``score`` None when it is not on the board now."""

    member: str
    kind: ChangeKind
    threshold: int | None
    old_rank: int | None
    new_rank: int | None
    score: float | None


@dataclass(frozen=True, slots=True)
class Notification:
    """A change worth telling: its stable ``id``, where (``board``, ``window``), who
    (``member``), what (``kind``, ``threshold`` for ``entered_top``), the ranks at the
    previous snapshot and now, the member's score now, and ``at``: the diff's slot."""

    id: str
    board: str
    window: str
    member: str
    kind: ChangeKind
    threshold: int | None
    old_rank: int | None
    new_rank: int | None
    score: float | None
    at: datetime

    def to_json(self) -> dict[str, Any]:
        """The notification as a JSON object (``at`` in ISO 8601, UTC)."""
        return {
            "id": self.id,
            "board": self.board,
            "window": self.window,
            "member": self.member,
            "kind": self.kind.value,
            "threshold": self.threshold,
            "old_rank": self.old_rank,
            "new_rank": self.new_rank,
            "score": self.score,
            "at": self.at.isoformat(),
        }


def _classify(
    policy: NotifyPolicy, old: int | None, new: int | None
) -> tuple[ChangeKind, int | None] | None:
    """The most significant change from rank ``old`` to ``new`` the policy tells."""
    kinds = policy.kinds
    if new == old:
        return None
    if ChangeKind.FIRST_TAKEN in kinds and new == 1:
        return ChangeKind.FIRST_TAKEN, None
    if ChangeKind.FIRST_LOST in kinds and old == 1:
        return ChangeKind.FIRST_LOST, None
    if ChangeKind.ENTERED_TOP in kinds and new is not None:
        for threshold in policy.thresholds:  # ascending: the smallest top entered
            if new <= threshold and (old is None or old > threshold):
                return ChangeKind.ENTERED_TOP, threshold
    if old is not None and new is not None:
        if ChangeKind.RANK_UP in kinds and new < old:
            return ChangeKind.RANK_UP, None
        if ChangeKind.RANK_DOWN in kinds and new > old:
            return ChangeKind.RANK_DOWN, None
    return None


def changes(
    policy: NotifyPolicy,
    before: Mapping[str, int | None],
    now: Mapping[str, tuple[int | None, float | None]],
) -> list[Change]:
    """The changes ``policy`` tells, one at most per member: ``before`` maps members to
    their rank at the previous snapshot, ``now`` to their (rank, score) now; a member
    missing from ``before`` had no known rank. In ``now``'s order. O(len(now) * t) for
    t thresholds."""
    found = []
    for member, (new, score) in now.items():
        kind = _classify(policy, before.get(member), new)
        if kind is not None:
            found.append(Change(member, kind[0], kind[1], before.get(member), new, score))
    return found


def notification_id(
    board: str, window: str, slot_us: int, member: str, kind: str, threshold: int | None
) -> str:
    """The stable id of one change found by one diff (32 hex digits of a SHA-256)."""
    material = json.dumps([board, window, slot_us, member, kind, threshold], ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def notifications(board: str, window: str, slot_us: int, found: list[Change]) -> list[Notification]:
    """``found`` as notifications of the diff of slot ``slot_us`` (Unix us)."""
    at = UNIX_EPOCH + timedelta(microseconds=slot_us)
    return [
        Notification(
            notification_id(board, window, slot_us, c.member, c.kind.value, c.threshold),
            board,
            window,
            c.member,
            c.kind,
            c.threshold,
            c.old_rank,
            c.new_rank,
            c.score,
            at,
        )
        for c in found
    ]
