"""The service's Prometheus metrics (prometheus-client), in a registry of its own.

Requests: a count by route, method and status, and a latency histogram by route.
Submissions: a count by board. Boards: members per board (read at scrape time). The
journal: commits, events committed and commit latency, from the journal's own counters.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

__all__ = ["Metrics"]

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class _JournalCollector(Collector):
    """Reads the journal's commit counters at scrape time."""

    def __init__(self, stats: Any) -> None:
        self._stats = stats

    def collect(self) -> Any:
        stats = self._stats()
        if stats is None:
            return
        commits = CounterMetricFamily(
            "ranked_journal_commits", "Journal transactions committed", value=stats.commits
        )
        events = CounterMetricFamily(
            "ranked_journal_events", "Journal events committed", value=stats.events
        )
        latency = HistogramMetricFamily(
            "ranked_journal_commit_seconds", "Time a journal commit took (COMMIT, with its fsync)"
        )
        latency.add_metric([], stats.buckets(), stats.seconds)
        batch = HistogramMetricFamily(
            "ranked_journal_batch_events", "Events written per journal round (group commit)"
        )
        batch.add_metric([], stats.batch_buckets(), stats.events)
        yield from (commits, events, latency, batch)


class Metrics:
    """The service's metrics; :meth:`render` is the ``/metrics`` body."""

    def __init__(self, journal_stats: Any = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "ranked_http_requests",
            "HTTP requests answered",
            ("route", "method", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "ranked_http_request_seconds",
            "Time from a request's arrival to its answer",
            ("route",),
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.submissions = Counter(
            "ranked_submissions", "Scores submitted", ("board",), registry=self.registry
        )
        self.members = Gauge(
            "ranked_board_members",
            "Members in a board's current primary window",
            ("board",),
            registry=self.registry,
        )
        if journal_stats is not None:
            self.registry.register(_JournalCollector(journal_stats))
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        self._boards: dict[str, Any] = {}

    def submitted(self, board: str, count: int) -> None:
        """Count ``count`` scores submitted to ``board``."""
        child = self._boards.get(board)
        if child is None:
            child = self._boards[board] = self.submissions.labels(board)
        child.inc(count)

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one answered request and its latency."""
        key = (route, method, status)
        pair = self._children.get(key)
        if pair is None:
            pair = self._children[key] = (
                self.requests.labels(route, method, str(status)),
                self.latency.labels(route),
            )
        pair[0].inc()
        pair[1].observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
