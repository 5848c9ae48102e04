"""One :class:`~ranked.backends.procedure.Procedure` per algorithm and policy.

The script and its Python twin are shared; the decoder is bound to the policy, so a reply
(``[remaining, reset_after_us, retry_after_us]``, a retry of -1 meaning allowed) becomes a
:class:`~.result.Decision` in one step on every backend. Its native name, ``ratelimit``,
is the memory backend's C decider (``ranked/backends/native/ratelimit.py``), which
returns the Decision itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from ..backends.procedure import Procedure
from . import _memory
from .policy import Policy
from .result import Decision

__all__ = ["NATIVE", "decoder", "limiter_procedure", "policy_args"]

_PACKAGE: Final = "ranked.ratelimit"
NATIVE: Final = "ratelimit"
"""The procedures' name in the memory backend's native registry."""


def decoder(policy: Policy) -> Callable[[Any], Decision]:
    """Reply ``[remaining, reset_after_us, retry_after_us]`` to a Decision. A denied hit
    always has a positive retry, so -1 marks an allowed one: no fourth element to send."""
    limit = policy.limit
    new = tuple.__new__

    def decode(reply: Sequence[int]) -> Decision:
        remaining, reset_us, retry_us = reply
        # tuple.__new__: the NamedTuple constructor costs a Python call more
        return new(
            Decision,
            (
                retry_us < 0,
                limit,
                remaining,
                reset_us / 1e6,
                None if retry_us < 0 else retry_us / 1e6,
                policy,
            ),
        )

    return decode


def limiter_procedure(policy: Policy) -> Procedure[Decision]:
    """The policy's algorithm as a procedure whose result is a :class:`Decision`."""
    algorithm = policy.algorithm
    return Procedure(_PACKAGE, algorithm, _memory.twin(policy), decoder(policy), native=NATIVE)


def policy_args(policy: Policy) -> tuple[int, ...]:
    """The script arguments after ``cost`` and ``consume``: ``limit, window_us[, burst]``."""
    if policy.algorithm in ("token_bucket", "gcra"):
        return (policy.limit, policy.window_us, policy.capacity)
    return (policy.limit, policy.window_us)
