"""Sans-I/O board logic: method arguments -> backend calls -> typed results.

One object per concept, each in its own module, none inheriting from another; each holds
the core and, passed to its constructor, the concept objects it calls:

- ``_plan_core``: :class:`PlanCore`, configuration, keys, value conversion, the board's
  clock and deadline; the sync/async drivers;
- ``_plan_windows``: :class:`Windows` (core), targets, window ids, the windows a write
  falls in, the registry of windows;
- ``_plan_write``: :class:`Writes` (core, windows), submissions (prepare, finish,
  rehydrate) and the fan-out's preparation;
- ``_plan_ties``: :class:`Ties` (core), the secondary tie-break's reads (over-fetch and
  re-sort);
- ``_plan_lex``: :class:`Lex` (core, windows), member-encoded lexicographic boards, reads
  and the write;
- ``_plan_read``: :class:`Reads` (core, windows, ties, lex), score, ranks, pages, around,
  score ranges, percentile;
- ``_plan_social``: :class:`Social` (core, windows, ties), friends, member data, metadata;
- ``_plan_life``: :class:`Life` (core, windows), remove, clear, expire.

:class:`BoardPlan` builds them for one board and holds them; the shells call them
(``plan.reads.score(...)``). The hottest paths are split into the arguments of one step
and the reading of its answer (``Writes.prepare_one`` / ``finish_single``,
``Reads.plain_ranks`` / ``entry_from``, ...) so the shells call the backend directly,
without a generator.
"""

from __future__ import annotations

from ._plan_core import (
    Call,
    PlanCore,
    Steps,
    TrimmedLookup,
    from_ms,
    member_bytes,
    run_async,
    run_sync,
    to_ms,
)
from ._plan_lex import Lex
from ._plan_life import Life
from ._plan_read import Reads
from ._plan_social import Social
from ._plan_ties import Ties
from ._plan_windows import Windows
from ._plan_write import Prepared, Writes, fan_out, one_instant

__all__ = [
    "BoardPlan",
    "Call",
    "PlanCore",
    "Prepared",
    "Steps",
    "TrimmedLookup",
    "fan_out",
    "from_ms",
    "member_bytes",
    "one_instant",
    "run_async",
    "run_sync",
    "to_ms",
]


class BoardPlan:
    """A board's logic with no I/O: one per :class:`Leaderboard` / :class:`AsyncLeaderboard`,
    its concepts built once and held."""

    __slots__ = ("core", "lex", "life", "reads", "social", "ties", "windows", "writes")

    def __init__(self, core: PlanCore) -> None:
        self.core = core
        self.windows = Windows(core)
        self.writes = Writes(core, self.windows)
        self.ties = Ties(core)
        self.lex = Lex(core, self.windows)
        self.reads = Reads(core, self.windows, self.ties, self.lex)
        self.social = Social(core, self.windows, self.ties)
        self.life = Life(core, self.windows)
