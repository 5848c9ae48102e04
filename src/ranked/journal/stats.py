"""What a journal's committer has done: commits, events and rounds, and how long commits
took, in fixed histogram buckets (for the service's metrics). Written by the committer
thread only; a reader may see one round's counts half updated, never wrong by more."""

from __future__ import annotations

import bisect
from typing import Final

__all__ = ["CommitStats", "cumulative"]

SECONDS: Final = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5)
"""Upper bounds of the commit latency buckets (seconds)."""
EVENTS: Final = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
"""Upper bounds of the round size buckets (events)."""


class CommitStats:
    """Counters of one journal's committer."""

    def __init__(self) -> None:
        self.commits = 0
        self.events = 0
        self.seconds = 0.0
        self._latency = [0] * (len(SECONDS) + 1)
        self._rounds = [0] * (len(EVENTS) + 1)

    def committed(self, seconds: float) -> None:
        """One COMMIT that took ``seconds``."""
        self.commits += 1
        self.seconds += seconds
        self._latency[bisect.bisect_left(SECONDS, seconds)] += 1

    def written(self, events: int) -> None:
        """One round that wrote ``events`` events."""
        self.events += events
        self._rounds[bisect.bisect_left(EVENTS, events)] += 1

    def buckets(self) -> list[tuple[str, float]]:
        """The commit latency histogram: (upper bound, cumulative count), ``+Inf`` last."""
        return cumulative(SECONDS, self._latency)

    def batch_buckets(self) -> list[tuple[str, float]]:
        """The round size histogram, the same way."""
        return cumulative(EVENTS, self._rounds)


def cumulative(bounds: tuple[float, ...], counts: list[int]) -> list[tuple[str, float]]:
    """Bucket counts (``counts[i]``: observations in ``(bounds[i-1], bounds[i]]``, the
    last past every bound) as Prometheus wants them: (upper bound, cumulative count)."""
    out: list[tuple[str, float]] = []
    total = 0
    for bound, count in zip((*bounds, float("inf")), counts, strict=True):
        total += count
        out.append(("+Inf" if bound == float("inf") else repr(float(bound)), float(total)))
    return out
