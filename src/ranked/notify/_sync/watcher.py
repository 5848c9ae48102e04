# Generated from ranked/notify/_async/watcher.py by scripts/generate_sync.py: do not edit.
"""A board's rank watcher: runs its policy's snapshot diffs through the board's public
reads (``top``, ``ranks_of``), never a backend (docs/live.md, "Notifications").

What a diff reads, so that a board of a million members is not read whole every
interval: the policy's top ``K`` (:attr:`~ranked.notify.NotifyPolicy.read_top`: the
largest threshold, or 1 for first place) with one ``top(K)``, and the members the
previous snapshot held or that were written since (:meth:`AsyncRankWatcher.observe`),
with ``ranks_of`` in pages of the board's ``max_page_size``: O(log n + K + m log n) for
m such members. The next snapshot keeps the top ``K`` and the members read this time.
A member's rank before is its rank at the previous snapshot when that snapshot read it,
else its rank just before its first write since then (the write's ``previous_rank``).
So a member outside the top ``K`` that nobody wrote and that others passed is not
diffed: ``rank_down`` is told only of members read (raise ``top`` to watch more).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ...core._time import Instant, micros, to_utc
from ...core.models import Member
from ...errors import NotifyConfigError
from ...leaderboard import Leaderboard, Submission
from ..diff import Notification, changes, notifications
from ..policy import NotifyPolicy
from ..schedule import active, epoch_us, first_slot_from, slot_of

__all__ = ["RankWatcher"]


def _text(member: Member) -> str:
    return member if isinstance(member, str) else member.decode("utf-8", "replace")


class RankWatcher:
    """Runs ``policy`` on ``board``: :meth:`observe` each applied submission (O(1)), and
    call :meth:`check` at or after :meth:`next_check` (calling it more often is harmless:
    a slot runs once). ``clock``: the current instant (default ``time.time``)."""

    def __init__(
        self,
        board: Leaderboard,
        policy: NotifyPolicy,
        *,
        clock: Callable[[], Instant] | None = None,
    ) -> None:
        self.board = board
        """The board read (the service swaps in a reopened board of the same name)."""
        self.policy = policy
        self._clock: Callable[[], Instant] = clock or time.time
        self._snapshot: dict[Member, int] | None = None
        """Member -> rank at the previous snapshot (None: no baseline yet)."""
        self._window: str | None = None
        self._written: dict[Member, int | None] = {}
        """Members written since the previous snapshot -> their rank before the first write."""
        self._last_slot: int | None = None
        self.baselines = 0
        """Snapshots taken with nothing to compare with (the first of a period or window)."""
        self.diffs = 0
        """Snapshot diffs run."""
        self._check_window()

    def _check_window(self) -> None:
        window = self.board.config.windows.window_for_id(self.board.window_id(self.policy.window))
        if self.policy.within is not None and window.end is None and self.policy.ends_at is None:
            raise NotifyConfigError(
                f"window {window.id!r} never ends: a policy with `within` needs `ends_at`"
            )

    # -- what the writers tell ------------------------------------------------------------

    def observe(self, submission: Submission) -> None:
        """An applied submission: remember the member's rank before it in the watched
        window (its first write since the snapshot only). O(1)."""
        if self._snapshot is None:
            return
        result = submission.windows.get(self._window or "")
        if result is None and submission.primary.window == self._window:
            result = submission.primary
        if result is not None and submission.member not in self._written:
            self._written[submission.member] = result.previous_rank

    # -- the diffs ------------------------------------------------------------------------

    def _now_us(self) -> int:
        return epoch_us(to_utc(self._clock(), NotifyConfigError))

    def _end_us(self, window_id: str) -> int | None:
        if self.policy.ends_at is not None:
            return epoch_us(self.policy.ends_at)
        end = self.board.config.windows.window_for_id(window_id).end
        return None if end is None else epoch_us(end)

    def next_check(self) -> int | None:
        """When the next diff (or baseline) is due, in Unix microseconds; None: never
        again (the window has ended, with ``within``)."""
        window_id = self.board.window_id(self.policy.window)
        return first_slot_from(self.policy, self._last_slot, self._end_us(window_id))

    def check(self) -> list[Notification]:
        """Run the diff of the current slot if it has not run: the changes the policy
        tells, since the previous snapshot. Outside the policy's period it forgets its
        snapshot (the period's first slot takes a new baseline) and returns nothing.
        Reads: see the module docstring."""
        now = self._now_us()
        policy = self.policy
        window_id = self.board.window_id(policy.window)
        slot = slot_of(now, micros(policy.interval))
        if self._last_slot is not None and slot <= self._last_slot:
            return []
        if not active(policy, now, self._end_us(window_id)):
            self._snapshot, self._written = None, {}
            return []
        self._last_slot = slot
        # writes observed while this diff reads count for the next one
        written, self._written = self._written, {}
        top = self.board.top(policy.read_top, window=window_id)
        current: dict[Member, tuple[int | None, float | None]] = {
            e.member: (e.rank, e.score) for e in top
        }
        if self._snapshot is None or self._window != window_id:
            self._snapshot = {
                member: rank for member, (rank, _) in current.items() if rank is not None
            }
            self._window = window_id
            self.baselines += 1
            return []
        before: dict[Member, int | None] = written
        before.update(self._snapshot)
        self._read_others(current, before, window_id)
        found = changes(
            policy,
            {_text(m): rank for m, rank in before.items()},
            {_text(m): standing for m, standing in current.items()},
        )
        self._snapshot = {m: rank for m, (rank, _) in current.items() if rank is not None}
        self.diffs += 1
        return notifications(self.board.name, window_id, slot, found)

    def _read_others(
        self,
        current: dict[Member, tuple[int | None, float | None]],
        before: dict[Member, Any],
        window_id: str,
    ) -> None:
        """Read the members of ``before`` that the top did not hold, into ``current``."""
        others = [m for m in before if m not in current]
        page = self.board.config.max_page_size
        for start in range(0, len(others), page):
            for found in self.board.ranks_of(others[start : start + page], window=window_id):
                current[found.member] = (found.rank, found.score)
