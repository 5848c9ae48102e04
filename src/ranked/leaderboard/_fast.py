"""The one-call submit of the most common board on ``memory://``.

A board with one all-time window, plain scores (no time or secondary tie-break, not
lexicographic), no ``keep``, no deadline and no board clock submits through the memory
backend's :meth:`~ranked.backends.memory.MemoryBackend.board_writer`: one C call that
validates, writes, ranks and builds the :class:`Submission` that the general path
(``prepare_one``, ``backend.submit``, ``finish_single``) would build. The writer returns
None, having changed nothing, whenever the general path must run (other argument types,
bad scores, the key missing or expiring, the lock held), so errors and rare cases keep
today's code. Any other board, backend or engine (``RANKED_PUREPYTHON=1``) has no writer.

An eligible board also gets a :func:`method_shortcut`: a C ``BoardSubmit`` in the
instance's ``__dict__`` under ``submit``, so ``board.submit(...)`` reaches the writer
without a Python frame (about 80 ns of a 500 ns submit at 10k members). It takes the
method's exact signature and hands every call it does not finish to the class's
``submit`` bound to the board, unchanged; ``inspect.signature`` and ``help`` see that
method through ``__wrapped__`` and ``__doc__``. A subclass that overrides ``submit``
gets no shortcut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..backends.base import Backend, Operator
from ..backends.memory import MemoryBackend
from ..core.models import Member
from ..core.windows import WindowKind
from ._plan_write import WritePlan
from .results import Submission, WindowResult

__all__ = ["FastSubmit", "fast_eligible", "memory_writer", "method_shortcut"]

FastSubmit = Callable[[Member, float, Operator | None], Submission | None]
"""``(member, score, operator or None) -> Submission``, or None: run the general path."""

_ALL_TIME = "all"


def fast_eligible(plan: WritePlan, backend: Backend) -> bool:
    """Whether the board's configuration allows the one-call submit (checked once)."""
    windows = plan.windows
    return (
        type(backend) is MemoryBackend
        and windows.kinds == (WindowKind.ALL_TIME,)
        and not windows.seasons
        and plan.lex is None
        and not plan.secondary
        and plan.layout is None
        and plan.composite is None
        and plan.trim_to is None
        and plan.on_trimmed_lookup is None
        and plan.clock is None
    )


def memory_writer(plan: WritePlan, backend: Backend) -> FastSubmit | None:
    """The writer of an eligible board (:func:`fast_eligible`) once its window is
    registered and while it has no deadline; None until then (or on the pure-Python
    engine)."""
    if plan.deadline_ms is not None or not plan.is_registered(_ALL_TIME):
        return None
    assert isinstance(backend, MemoryBackend)
    return backend.board_writer(
        plan.target(_ALL_TIME).key,
        _ALL_TIME,
        plan.high_first,
        plan.style.value,
        plan.config.operator,
        WindowResult,
        Submission,
    )


def method_shortcut(fallback: Callable[..., Any]) -> Any | None:
    """A C ``BoardSubmit`` standing for ``fallback`` (the bound ``Leaderboard.submit``)
    with no writer yet, or None on the pure-Python engine."""
    from ..engine.zset import IMPLEMENTATION

    if IMPLEMENTATION != "c":
        return None
    from ..backends.native._native import BoardSubmit

    return BoardSubmit(fallback)
