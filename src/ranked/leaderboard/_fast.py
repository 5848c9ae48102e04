"""The one-call submit of the most common board, where the backend has native code for it.

A board with one all-time window, plain scores (no time or secondary tie-break, not
lexicographic), no ``keep``, no deadline and no board clock describes its submission as
one more step, :func:`plain_submit`: ``(member, score, operator or None) -> Submission``,
or None having changed nothing, meaning "run the general path" (``prepare_one``, the
``submit`` step, ``finish_single``). The board asks the backend to ``accelerate`` it:
``memory://`` on the C engine answers with a native writer (one C call validates, writes,
ranks and builds the :class:`Submission` the general path would build, and answers None
for anything unusual: other argument types, bad scores, the key missing or expiring, the
lock held, so errors and rare cases keep the general path's code). Every other backend
answers None and the board only runs the general path.

An eligible synchronous board also gets a :func:`method_shortcut`: a C ``BoardSubmit`` in
the instance's ``__dict__`` under ``submit``, so ``board.submit(...)`` reaches the writer
without a Python frame. It takes the method's exact signature and hands every call it
does not finish to the class's ``submit`` bound to the board, unchanged;
``inspect.signature`` and ``help`` see that method through ``__wrapped__`` and
``__doc__``. A subclass that overrides ``submit`` gets no shortcut.

Reads have their twin, :func:`plain_entry`: ``member -> Entry``, None when the member is
absent, or False having read nothing, meaning "run the general path" (``entry_of``, the
``ranks`` step). ``memory://`` on the C engine answers with a native reader (one C call
looks the member up and ranks it in the board's own style and order); an eligible board
asks for it once and uses it for ``entry`` and ``rank`` in the board's style on its
current window.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Final

from ..backends.procedure import Call, Step, answer
from ..core.models import Entry, Member
from ..core.windows import WindowKind
from ._plan import BoardPlan
from ._requests import Operator
from .results import Submission, WindowResult

__all__ = [
    "FastSubmit",
    "ask_reader",
    "ask_writer",
    "fast_eligible",
    "method_shortcut",
    "plain_entry",
    "plain_submit",
]

FastSubmit = Callable[[Member, float, Operator | None], Submission | None]
"""``(member, score, operator or None) -> Submission``, or None: run the general path."""

_ALL_TIME: Final = "all"


def fast_eligible(plan: BoardPlan) -> bool:
    """Whether the board's configuration allows the one-call submit (checked once)."""
    core = plan.core
    windows = plan.windows.kept
    return (
        windows.kinds == (WindowKind.ALL_TIME,)
        and not windows.seasons
        and core.lex is None
        and not core.secondary
        and core.layout is None
        and core.composite is None
        and core.trim_to is None
        and core.on_trimmed_lookup is None
        and core.clock is None
    )


def _general_path(*_args: Any) -> None:
    return None


def _general_path_call(*_args: Any) -> Call[Submission | None]:
    return answer(None)


def plain_submit(plan: BoardPlan, seq_key: bytes | None = None) -> Step[Submission | None] | None:
    """The one-call submit step of an eligible board (:func:`fast_eligible`) once its
    window is registered and while it has no deadline; None until then. Its Python and
    Redis forms answer None (the general path is that step there).

    With ``seq_key`` (a journaled board's, :mod:`ranked.backends.sequenced`), the step is
    the sequenced twin: ``(after, last, member, score, operator or None) -> Submission``,
    written only when the index holds event ``after``, recording ``last`` with it; None
    for anything else (the general ``submit_seq`` step then answers APPLIED or a Gap).
    The event's instant does not change an all-time board's plain scores, so the one-call
    submit applies an event as the general step does."""
    core = plan.core
    if core.deadline_ms is not None or not plan.windows.is_registered(_ALL_TIME):
        return None
    return Step(
        _general_path_call,
        _general_path,
        native="board",
        native_args={
            "key": plan.windows.target(_ALL_TIME).key,
            "window": _ALL_TIME,
            "high_first": core.high_first,
            "style": core.style.value,
            "operator": core.config.operator,
            "result_type": WindowResult,
            "submission_type": Submission,
            "seq_key": seq_key,
        },
    )


def ask_writer(
    backend: Any, plan: BoardPlan, seq_key: bytes | None = None, *, now: bool = False
) -> tuple[Any, bool]:
    """The backend's one-call submit of the board (sequenced with ``seq_key``; with
    ``now``, as a plain call that answers at once), and whether to ask again later: (None,
    True) until the board's window is registered, (None, False) for good when the board is
    not eligible or the backend has none."""
    if not fast_eligible(plan):
        return None, False
    step = plain_submit(plan, seq_key)
    if step is None:
        return None, True
    writer = backend.accelerate_now(step) if now else backend.accelerate(step)
    return writer, writer is not None


def method_shortcut(backend: Any, fallback: Callable[..., Any]) -> Any | None:
    """The backend's native ``BoardSubmit`` standing for ``fallback`` (the bound
    ``Leaderboard.submit``), with no writer yet; None for an asyncio board or a backend
    without one."""
    if inspect.iscoroutinefunction(fallback):
        return None
    step: Step[Any] = Step(
        _general_path_call,
        _general_path,
        native="board_method",
        native_args={"fallback": fallback},
    )
    return backend.accelerate(step)


def _general_read(*_args: Any) -> Entry | bool | None:
    return False


def _general_read_call(*_args: Any) -> Call[Entry | bool | None]:
    return answer(False)


def plain_entry(plan: BoardPlan) -> Step[Entry | bool | None] | None:
    """The one-call entry read of an eligible board (:func:`fast_eligible`): ``member ->
    Entry``, None when absent, False for "run the general path"; None (no such step) for
    a board with a deadline. Its Python and Redis forms answer False."""
    core = plan.core
    if not fast_eligible(plan) or core.deadline_ms is not None:
        return None
    return Step(
        _general_read_call,
        _general_read,
        native="board_entry",
        native_args={
            "key": plan.windows.target(_ALL_TIME).key,
            "high_first": core.high_first,
            "style": core.style.value,
            "entry_type": Entry,
        },
        writes=False,
    )


def ask_reader(backend: Any, plan: BoardPlan) -> Callable[[Member], Entry | bool | None] | None:
    """The backend's one-call entry read of the board, as a plain call that answers at
    once; None when the board is not eligible or the backend has none."""
    step = plain_entry(plan)
    if step is None:
        return None
    reader: Callable[[Member], Entry | bool | None] | None = backend.accelerate_now(step)
    return reader
