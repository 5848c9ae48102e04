"""The service's Prometheus metrics (prometheus-client), in a registry of its own.

Requests: a count by route, method and status, and a latency histogram by route.
Submissions: a count by board. Boards: members per board (read at scrape time). The
journal: commits, events committed and commit latency, from the journal's own counters.
"""

from __future__ import annotations

import bisect
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from ..journal.stats import cumulative

__all__ = ["Metrics", "NotifyMetrics"]

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class _JournalCollector(Collector):
    """Reads the journal's commit counters at scrape time."""

    def __init__(self, stats: Any, lane: Any) -> None:
        self._stats = stats
        self._lane = lane

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
        lane_events, lane_commits = self._lane()
        yield CounterMetricFamily(
            "ranked_journal_lane_events",
            "Journal events the native lane committed (plain submissions; not in"
            " ranked_journal_events)",
            value=lane_events,
        )
        yield CounterMetricFamily(
            "ranked_journal_lane_commits",
            "Journal transactions the native lane committed",
            value=lane_commits,
        )


class _Requests(Collector):
    """Requests answered, by route, method and status, and their latency by route: plain
    counters on the event loop (the only thread that answers requests and scrapes), which
    cost a fraction of prometheus-client's own metric objects per request."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, int], int] = {}
        self.buckets: dict[str, list[int]] = {}
        self.sums: dict[str, float] = {}

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        key = (route, method, status)
        self.counts[key] = self.counts.get(key, 0) + 1
        buckets = self.buckets.get(route)
        if buckets is None:
            buckets = self.buckets[route] = [0] * (len(_LATENCY_BUCKETS) + 1)
            self.sums[route] = 0.0
        buckets[bisect.bisect_left(_LATENCY_BUCKETS, seconds)] += 1
        self.sums[route] += seconds

    def collect(self) -> Any:
        requests = CounterMetricFamily(
            "ranked_http_requests", "HTTP requests answered", labels=("route", "method", "status")
        )
        for (route, method, status), count in self.counts.items():
            requests.add_metric([route, method, str(status)], count)
        latency = HistogramMetricFamily(
            "ranked_http_request_seconds",
            "Time from a request's arrival to its answer",
            labels=("route",),
        )
        for route, buckets in self.buckets.items():
            latency.add_metric([route], cumulative(_LATENCY_BUCKETS, buckets), self.sums[route])
        yield from (requests, latency)


class NotifyMetrics:
    """Notifications produced (by board and kind) and webhook deliveries (by board and
    outcome: ``ok``, ``failed`` after every attempt, ``retried`` for each failed attempt
    that is tried again, ``dropped`` when too many were pending) (docs/live.md)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.produced = Counter(
            "ranked_notifications",
            "Rank-change notifications produced",
            ("board", "kind"),
            registry=registry,
        )
        self.deliveries = Counter(
            "ranked_webhook_deliveries",
            "Webhook deliveries of notifications, by outcome (ok, failed, retried, dropped)",
            ("board", "outcome"),
            registry=registry,
        )

    def notified(self, board: str, kind: str) -> None:
        self.produced.labels(board, kind).inc()

    def delivered(self, board: str, outcome: str) -> None:
        self.deliveries.labels(board, outcome).inc()


def _no_lane() -> tuple[int, int]:
    return 0, 0


class Metrics:
    """The service's metrics; :meth:`render` is the ``/metrics`` body."""

    def __init__(self, journal_stats: Any = None, lane_counts: Any = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._requests = _Requests()
        self.registry.register(self._requests)
        self.observe = self._requests.observe
        """Count one answered request and its latency: ``observe(route, method, status,
        seconds)``."""
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
            self.registry.register(_JournalCollector(journal_stats, lane_counts or _no_lane))
        self.notify = NotifyMetrics(self.registry)
        """Notifications and webhook deliveries."""
        self._boards: dict[str, Any] = {}

    def submitted(self, board: str, count: int) -> None:
        """Count ``count`` scores submitted to ``board``."""
        child = self._boards.get(board)
        if child is None:
            child = self._boards[board] = self.submissions.labels(board)
        child.inc(count)

    def render(self) -> bytes:
        return generate_latest(self.registry)
