"""A board's steps, by name, bound to its backend.

Every board operation is a plan (:mod:`._plan_core`) that yields ``(step name, args)``;
:class:`BoundSteps` answers each name with what ``backend.bind`` handed back for the step
of that name (bound on first use, then kept), so a plan runs on every backend unchanged.
The steps: the board's own (:mod:`._step_write`, :mod:`._step_read`, :mod:`._step_lex`,
:mod:`._procedures`) and the generic ones on keys (:mod:`ranked.backends.generic`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..backends import generic
from ..backends.dump import DUMP_PREFIX, LOAD_SORTED, RESTORE_DUMP
from ..backends.procedure import Bindable
from ..backends.sequenced import READ_SEQ, RECORD_SEQ, sequenced
from ._procedures import FRIEND_SCORES_STEP, MOVE_KEYS_STEP, SWAP_FIELD_STEP
from ._step_lex import LEX_REPLACE
from ._step_read import AROUND, BY_SCORE, PAGE, PAGE_AFTER, PERCENTILE, RANKS
from ._step_write import REMOVE, SUBMIT, SUBMIT_BATCH

__all__ = ["STEPS", "BoundSteps"]

STEPS: Final[Mapping[str, Bindable[Any]]] = {
    "submit": SUBMIT,
    "submit_batch": SUBMIT_BATCH,
    "remove": REMOVE,
    "ranks": RANKS,
    "page": PAGE,
    "page_after": PAGE_AFTER,
    "around": AROUND,
    "by_score": BY_SCORE,
    "percentile": PERCENTILE,
    "lex_replace": LEX_REPLACE,
    "count": generic.COUNT,
    "scores": generic.SCORES,
    "lex_count": generic.LEX_COUNT,
    "lex_range": generic.LEX_RANGE,
    "delete": generic.DELETE,
    "expire_at": generic.EXPIRE_AT,
    "hash_set": generic.HASH_SET,
    "hash_get": generic.HASH_GET,
    "hash_delete": generic.HASH_DELETE,
    "set_add": generic.SET_ADD,
    "set_remove": generic.SET_REMOVE,
    "set_members": generic.SET_MEMBERS,
    "friend_scores": FRIEND_SCORES_STEP,
    "swap_field": SWAP_FIELD_STEP,
    # a journaled board's (see ._plan_journal)
    "submit_seq": sequenced(SUBMIT),
    "submit_batch_seq": sequenced(SUBMIT_BATCH),
    "read_seq": READ_SEQ,
    "record_seq": RECORD_SEQ,
    "dump": DUMP_PREFIX,
    "restore_dump": RESTORE_DUMP,
    "load_sorted": LOAD_SORTED,
    "move_keys": MOVE_KEYS_STEP,
}
"""Every step a board's plan names."""


class BoundSteps:
    """``steps.page(...)``: the step named ``page`` run on the backend (awaitable on an
    asyncio backend). Each step is bound once, on first use (an attribute of the instance
    from then on, read without a lookup here)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    def __getattr__(self, name: str) -> Any:
        step = STEPS.get(name)
        if step is None:
            raise AttributeError(f"a board has no step {name!r}")
        bound = self.backend.bind(step)
        setattr(self, name, bound)
        return bound
