"""Sans-I/O board logic: method arguments -> backend calls -> typed results.

:class:`BoardPlan` assembles the concerns, each in its own module on top of
:class:`~ranked.leaderboard._plan_core.PlanCore`:

- ``_plan_core``: configuration, targets, windows, value conversion, the sync/async drivers;
- ``_plan_write``: submissions (prepare, finish, rehydrate);
- ``_plan_read``: score, ranks, pages, around, score ranges, percentile;
- ``_plan_social``: friends, member data, metadata;
- ``_plan_life``: remove, clear, expire;
- ``_plan_ties``: the secondary tie-break's reads (over-fetch and re-sort);
- ``_plan_lex``: member-encoded lexicographic boards.

The hottest path (a plain submission) is split into :meth:`BoardPlan.prepare` and
:meth:`BoardPlan.finish` so the shells call the backend directly, without a generator.
"""

from __future__ import annotations

from ._plan_core import (
    Call,
    Steps,
    TrimmedLookup,
    from_ms,
    member_bytes,
    run_async,
    run_sync,
    to_ms,
)
from ._plan_lex import LexWritePlan
from ._plan_life import LifePlan
from ._plan_read import ReadPlan
from ._plan_social import SocialPlan
from ._plan_write import Prepared

__all__ = [
    "BoardPlan",
    "Call",
    "Prepared",
    "Steps",
    "TrimmedLookup",
    "from_ms",
    "member_bytes",
    "run_async",
    "run_sync",
    "to_ms",
]


class BoardPlan(LexWritePlan, ReadPlan, SocialPlan, LifePlan):
    """A board's logic with no I/O: one per :class:`Leaderboard` / :class:`AsyncLeaderboard`."""
