"""``ranked serve`` with the write guard's stateful step taken out: a diagnostic server.

    python -m benchmarks.stack_apps.guard_without_step serve --data-dir DIR ...

The ``ranked`` command, with ``AsyncGuard.submit`` replaced (in this process only) by what
the guard does for a client's common submission minus its one backend step: the
in-process C stage (argument checks, bounds, HMAC, clock skew, the step's keys), then the
board's write with the accepted verdict's note, then the verdict. The ban list, the rate
limits, the nonce, the velocity cap and the z-score are not run; the verdict carries the
rate-limit decision of the guard's first real submission, so the route writes the same
RateLimit headers. ``benchmarks/guard.py`` runs it as a deployment: the guard's cost
without its stateful layers, through the same service. Reaches into the guard's private
per-board state: a benchmark's tool, not an API.
"""

from __future__ import annotations

import time
from typing import Any

from ranked.cli import main
from ranked.guard import Verdict
from ranked.guard._async.guard import AsyncGuard
from ranked.guard._audit import accepted_note

_full = AsyncGuard.submit
_decisions: dict[int, Any] = {}
"""Each guard's first real verdict's rate-limit decision, by the guard's id."""


async def _without_step(
    self: AsyncGuard,
    board: Any,
    member: Any,
    score: Any,
    *,
    client_time: Any = None,
    nonce: Any = None,
    signature: Any = None,
    ip: Any = None,
    key_scope: Any = None,
    replay: Any = None,
    operator: Any = None,
    actor: Any = None,
) -> Verdict:
    limit = _decisions.get(id(self))
    state = self._board(board)
    found = None
    if limit is not None and operator is None and replay is None and state.front is not None:
        found = state.front(
            member, score, client_time, nonce, signature, ip, key_scope, time.time(),
            state.window_key(board),
        )  # fmt: skip
    if found is None:  # the first submission, and anything unusual: the guard as it is
        verdict = await _full(
            self, board, member, score, client_time=client_time, nonce=nonce,
            signature=signature, ip=ip, key_scope=key_scope, replay=replay,
            operator=operator, actor=actor,
        )  # fmt: skip
        if verdict.limit is not None:
            _decisions.setdefault(id(self), verdict.limit)
        return verdict
    note = None
    if self.config.audit_accepted and board.journal_store is not None:
        note = accepted_note(ip, key_scope, nonce, None, None)
    result = await board.submit(
        member, score, actor=actor if note is not None else None, reason=note
    )
    return Verdict("accepted", submission=result, limit=limit)


AsyncGuard.submit = _without_step  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
