"""When a policy's snapshot diffs run: pure arithmetic on Unix microseconds, no clock of
its own (the caller passes ``now``).

Diffs run on a grid of the policy's interval counted from the Unix epoch (a 30-minute
interval: at :00 and :30 of every hour, UTC), so that every process computes the same
slots and the same notification ids. With ``within``, only the slots in
``[end - within, end]`` run; the first of them takes the baseline snapshot, each later
one diffs against the one before.
"""

from __future__ import annotations

from datetime import datetime

from ..core._time import UNIX_EPOCH, micros
from .policy import NotifyPolicy

__all__ = ["active", "epoch_us", "first_slot_from", "slot_of"]


def slot_of(now_us: int, interval_us: int) -> int:
    """The grid slot ``now_us`` falls in (its start, Unix us). O(1)."""
    return now_us - now_us % interval_us


def active(policy: NotifyPolicy, now_us: int, end_us: int | None) -> bool:
    """Whether ``policy`` looks for changes at ``now_us``: always without ``within``;
    otherwise in ``[end - within, end]`` (never when the window has no end)."""
    if policy.within is None:
        return True
    if end_us is None:
        return False
    return end_us - micros(policy.within) <= now_us <= end_us


def first_slot_from(policy: NotifyPolicy, after_us: int | None, end_us: int | None) -> int | None:
    """The first slot later than ``after_us`` (None: any) at which ``policy`` is active,
    or None if there is none (the window has ended, or never ends with ``within``)."""
    interval = micros(policy.interval)
    start = -(1 << 62) if after_us is None else after_us + 1
    if policy.within is not None:
        if end_us is None:
            return None
        start = max(start, end_us - micros(policy.within))
    slot = slot_of(start, interval)
    if slot < start:
        slot += interval
    if policy.within is not None and end_us is not None and slot > end_us:
        return None
    return slot


def epoch_us(when: datetime) -> int:
    """An aware datetime's Unix microseconds (window ends)."""
    return micros(when - UNIX_EPOCH)
