"""Batched ``incr`` writes in the service: one :class:`~ranked.leaderboard.IncrBatcher` per
board whose settings have ``batch_incr_ms`` (docs/live.md, "Batched writes"), its
flushes told to the live feed and counted in the metrics.

The batcher of a board is made on its first write and made again when the board's object
or its interval changes (a ``PUT`` of its settings): the old one is closed, which writes
what it holds. When the service stops, every batcher writes what it holds at once (its
clients are answered before the server's drain ends), and the boards are closed after.
"""

from __future__ import annotations

import asyncio
from typing import Final

from prometheus_client import Counter, Histogram

from ..leaderboard import AsyncLeaderboard, Flushed, IncrBatcher
from .live import Hub
from .metrics import Metrics
from .registry import Boards

__all__ = ["BatchMetrics", "Batchers"]

_MEMBERS_BUCKETS: Final = (1, 10, 100, 1_000, 10_000, 100_000)


class BatchMetrics:
    """``ranked_batched_increments_total`` (increments taken into flushes),
    ``ranked_batched_writes_total`` (the (member, delta) entries the flushes wrote: the
    index writes), ``ranked_batched_flushes_total`` and ``ranked_batched_flush_members``
    (entries per flush), each by board."""

    def __init__(self, metrics: Metrics) -> None:
        registry = metrics.registry
        labels = ("board",)
        self.increments = Counter(
            "ranked_batched_increments",
            "Increments taken into batched flushes",
            labels,
            registry=registry,
        )
        self.writes = Counter(
            "ranked_batched_writes",
            "Member entries written by batched flushes (index writes)",
            labels,
            registry=registry,
        )
        self.flushes = Counter(
            "ranked_batched_flushes", "Batched flushes written", labels, registry=registry
        )
        self.members = Histogram(
            "ranked_batched_flush_members",
            "Member entries per batched flush",
            labels,
            registry=registry,
            buckets=_MEMBERS_BUCKETS,
        )

    def flushed(self, board: str, flushed: Flushed) -> None:
        self.increments.labels(board).inc(flushed.increments)
        self.writes.labels(board).inc(flushed.entries)
        self.flushes.labels(board).inc()
        self.members.labels(board).observe(flushed.entries)


class Batchers:
    """The batchers of one service's boards."""

    def __init__(self, boards: Boards, metrics: Metrics, hub: Hub) -> None:
        self.boards = boards
        self.hub = hub
        self.metrics = BatchMetrics(metrics)
        self._batchers: dict[str, IncrBatcher] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._stopping = False

    def get(self, board: AsyncLeaderboard) -> IncrBatcher | None:
        """``board``'s batcher (None when its batching is off, or when ``board`` was
        replaced by a ``PUT`` while its request was read: that request writes at once)."""
        name = board.name
        interval = self.boards.settings(name).batch_incr_ms
        if self.boards.get(name) is not board:
            return None
        found = self._batchers.get(name)
        if found is not None and found.board is board and found.interval_ms == interval:
            return found
        if found is not None:  # reconfigured: the old one writes what it holds
            del self._batchers[name]
            self._retire(found)
        if not interval or self._stopping:
            return None
        made = self._batchers[name] = IncrBatcher(
            board, interval, on_flush=lambda flushed: self._flushed(name, flushed)
        )
        return made

    def _flushed(self, name: str, flushed: Flushed) -> None:
        self.metrics.flushed(name, flushed)
        self.hub.submitted(name, flushed.results)

    def _retire(self, batcher: IncrBatcher) -> None:
        task = asyncio.get_running_loop().create_task(batcher.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def flush(self, name: str) -> None:
        """Write board ``name``'s pending increments now (before a write that is not
        batched and may touch their members: a batch, a removal, a clear, new settings)."""
        found = self._batchers.get(name)
        if found is not None:
            await found.flush()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    def stopping(self) -> None:
        """The service is stopping: write every pending increment now (its requests are
        answered, so the server's drain does not wait a whole interval), and write
        later ones at once."""
        self._stopping = True
        for batcher in self._batchers.values():
            self._retire(batcher)
        self._batchers.clear()

    async def close(self) -> None:
        """Write every pending increment and stop batching (at shutdown)."""
        batchers = list(self._batchers.values())
        self._batchers.clear()
        for batcher in batchers:
            await batcher.close()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
