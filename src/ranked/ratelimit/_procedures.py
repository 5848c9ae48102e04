"""One :class:`~ranked.backends.procedure.Procedure` per algorithm and policy.

The script and its Python twin are shared; the decoder is bound to the policy, so a reply
(``[allowed, remaining, reset_after_us, retry_after_us or -1]``) becomes a
:class:`~.result.Decision` in one step on every backend.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from ..backends.procedure import Local, Procedure
from . import _memory
from .policy import Algorithm, Policy
from .result import Decision

__all__ = ["limiter_procedure", "policy_args"]

_PACKAGE: Final = "ranked.ratelimit"

_TWINS: Final[dict[Algorithm, Local]] = {
    "fixed_window": _memory.fixed_window,
    "sliding_log": _memory.sliding_log,
    "sliding_counter": _memory.sliding_counter,
    "token_bucket": _memory.token_bucket,
    "gcra": _memory.gcra,
}


def _decoder(policy: Policy) -> Callable[[Any], Decision]:
    limit = policy.limit

    def decode(reply: Sequence[int]) -> Decision:
        allowed, remaining, reset_us, retry_us = reply
        return Decision(
            allowed == 1,
            limit,
            remaining,
            reset_us / 1e6,
            None if retry_us < 0 else retry_us / 1e6,
            policy,
        )

    return decode


def limiter_procedure(policy: Policy) -> Procedure[Decision]:
    """The policy's algorithm as a procedure whose result is a :class:`Decision`."""
    algorithm = policy.algorithm
    return Procedure(_PACKAGE, algorithm, _TWINS[algorithm], _decoder(policy))


def policy_args(policy: Policy) -> tuple[int, ...]:
    """The script arguments after ``cost`` and ``consume``: ``limit, window_us[, burst]``."""
    if policy.algorithm in ("token_bucket", "gcra"):
        return (policy.limit, policy.window_us, policy.capacity)
    return (policy.limit, policy.window_us)
