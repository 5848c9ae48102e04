"""``ranked serve`` with the write guard's stateful step answering at once: a diagnostic
server.

    python -m benchmarks.stack_apps.guard_instant_step serve --data-dir DIR ...

The ``ranked`` command, with each guarded board's check step replaced (in this process
only): it runs the real step until the step accepts a submission with a z-score, then
answers that same verdict to every later call at once, reading and writing nothing.
Everything else of the guard runs as it is (the C stage, the choice of the rate limit, the
accepted verdict's note with its z-score, the board's write, the verdict, the RateLimit
headers). ``benchmarks/guard.py`` runs it as a deployment: what the guard costs when its
stateful layers (ban list, rate limits, nonce, velocity cap, z-score) cost nothing. The
same awaitable as the real step's on the embedded default (``awaitable``). Reaches into the
guard's private per-board state: a benchmark's tool, not an API.
"""

from __future__ import annotations

from typing import Any

from ranked.backends.native import awaitable
from ranked.cli import main
from ranked.guard._async import guard as guard_module

_made = guard_module._Board.__init__


def _instant_after_learning(self: Any, backend: Any, board: Any, config: Any) -> None:
    _made(self, backend, board, config)
    real = self.check
    answer: list[Any] = []

    def instant(keys: Any, args: Any, now_us: Any = None) -> Any:
        return answer[0]

    async def learning(keys: Any, args: Any, now_us: Any = None) -> Any:
        found = await real(keys, args, now_us)
        if found.code == 0 and found.zscore is not None and not answer:
            answer.append(found)
            self.check = awaitable(instant)
        return found

    self.check = learning


guard_module._Board.__init__ = _instant_after_learning  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
