"""A rate limit's policy: which algorithm, how many units per how long, and its name.

A :class:`Policy` is immutable and validated once, when it is made; a limiter built from it
never meets a bad limit or window at decision time. Its durations stay within
:mod:`ranked.core.limits` (100 years), so every backend computes them exactly: the scripts
count microseconds in Lua doubles, where a window past 2**53 us would round and a reply
past 2**63 us would wrap (a denied hit read back as allowed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal, get_args

from ..core.limits import check_duration
from ..errors import RateLimitConfigError, RateLimitTypeError

__all__ = ["ALGORITHMS", "Algorithm", "Policy", "RateLimitConfigError", "RateLimitTypeError"]

Algorithm = Literal["fixed_window", "sliding_log", "sliding_counter", "token_bucket", "gcra"]
"""The five algorithms (see ``docs/ratelimit.md`` for each one's boundary behaviour):

- ``fixed_window``: a counter that starts with the first hit and lives ``window`` seconds;
  up to 2x ``limit`` can pass around a window boundary.
- ``sliding_log``: every admitted hit in a sorted set scored by time; exact.
- ``sliding_counter``: the current and previous clock-aligned window's counts, the previous
  weighted by how much of it still overlaps the sliding window; bounded overage.
- ``token_bucket``: ``burst`` tokens, refilled continuously at ``limit / window`` per second.
- ``gcra``: the generic cell rate algorithm (one timestamp per key); same admissions as a
  token bucket of the same rate and burst, with less state.
"""

ALGORITHMS: Final[tuple[Algorithm, ...]] = get_args(Algorithm)

_NAME_FORBIDDEN: Final = frozenset('"\\')
_HORIZONS: Final[dict[Algorithm, str]] = {
    "sliding_counter": "the sliding counter's horizon (2 * window)",
    "token_bucket": "the token bucket's refill time (window * burst / limit)",
    "gcra": "the GCRA refill time (window * burst / limit)",
}
"""The algorithms whose :attr:`Policy.horizon` may exceed the window, with its name."""


@dataclass(frozen=True, slots=True)
class Policy:
    """``limit`` units per ``window`` seconds, decided by ``algorithm``.

    - ``limit``: the quota, a positive integer (the IETF ``q``).
    - ``window``: seconds, positive, at most :data:`~ranked.core.limits.MAX_DURATION_S`
      (may be fractional; the IETF ``w`` is it rounded up to whole seconds).
    - ``algorithm``: one of :data:`ALGORITHMS` (default ``sliding_log``: exact).
    - ``burst``: bucket size of ``token_bucket`` and ``gcra`` (default ``limit``);
      refused for the window algorithms, which have no separate burst.
    - ``name``: the policy's name in ``RateLimit`` / ``RateLimit-Policy`` headers and its
      part of every key, so two policies on one identity never share state.

    Raises :class:`RateLimitConfigError` for a value that cannot be a policy (a window
    that is not a positive number), :class:`~ranked.errors.OutOfRangeError` for one past
    the durations every backend holds exactly: the window, and the :attr:`horizon` (the
    sliding counter's two windows, the bucket algorithms' time to refill the burst).
    """

    limit: int
    window: float
    algorithm: Algorithm = "sliding_log"
    burst: int | None = None
    name: str = "default"

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1:
            raise RateLimitConfigError(f"limit must be a positive integer, not {self.limit!r}")
        window = self.window
        if isinstance(window, bool) or not isinstance(window, int | float):
            raise RateLimitConfigError(f"window must be a number of seconds, not {window!r}")
        if not math.isfinite(window) or window <= 0:
            raise RateLimitConfigError(f"window must be positive and finite, not {window!r}")
        if self.algorithm not in ALGORITHMS:
            raise RateLimitConfigError(
                f"unknown algorithm {self.algorithm!r}; choose one of {', '.join(ALGORITHMS)}"
            )
        if self.burst is not None:
            if self.algorithm not in ("token_bucket", "gcra"):
                raise RateLimitConfigError("burst applies to token_bucket and gcra only")
            if isinstance(self.burst, bool) or not isinstance(self.burst, int) or self.burst < 1:
                raise RateLimitConfigError(f"burst must be a positive integer, not {self.burst!r}")
        if not self.name or _NAME_FORBIDDEN & set(self.name) or not self.name.isprintable():
            raise RateLimitConfigError(f"name must be printable, without quotes: {self.name!r}")
        check_duration(window, "window")
        if self.algorithm in ("token_bucket", "gcra") and window * 1_000_000 < self.limit:
            raise RateLimitConfigError(
                f"{self.limit} per {window} s is more than 1,000,000 a second: an interval"
                " under a microsecond rounds away against the instants (Unix"
                " microseconds) every backend computes with"
            )
        if self.algorithm in _HORIZONS:
            check_duration(self.horizon, _HORIZONS[self.algorithm])

    @property
    def capacity(self) -> int:
        """The most units one instant can admit: ``burst`` (bucket algorithms) or ``limit``."""
        return self.limit if self.burst is None else self.burst

    @property
    def horizon(self) -> float:
        """The longest duration a decision computes, in seconds: ``window`` (fixed window,
        sliding log), ``2 * window`` (the sliding counter weighs the previous window),
        ``window * capacity / limit`` (token bucket, GCRA: the time to refill the burst)."""
        if self.algorithm == "sliding_counter":
            return 2 * self.window
        if self.algorithm in ("token_bucket", "gcra"):
            try:
                return self.window * (self.capacity / self.limit)
            except OverflowError:  # a burst beyond any float: no finite horizon
                return math.inf
        return float(self.window)

    @property
    def window_us(self) -> int:
        """The window in whole microseconds (at least 1)."""
        return max(1, round(self.window * 1_000_000))
