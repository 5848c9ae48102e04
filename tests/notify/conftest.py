"""Notification fixtures: every watcher test runs on memory, redis and a redis cluster
(the session's real servers, flushed before each test; nothing is skipped), with a fake
clock that drives both the board (which windows a write goes to) and the watcher."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from servers import flushed_store

BACKENDS = ["memory", "redis", "cluster"]

_TODAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
START = _TODAY - timedelta(days=2)
END = _TODAY + timedelta(days=5)
"""The test season ``cup``: [START, END), around the real day: the season's keys live
until its end plus the board's retention on the backend's own clock, so a season in the
past would not be written at all."""


class FakeClock:
    """A settable instant: the watcher's clock (Unix seconds) and the board's (Unix ms)."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def ms(self) -> int:
        return int(self.now.timestamp() * 1000)

    def advance(self, delta: timedelta) -> None:
        self.now += delta


@dataclass
class Store:
    kind: str
    url: str


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    """A flushed store of each kind, by URL."""
    url, clients = flushed_store(request.param, request)
    try:
        yield Store(request.param, url)
    finally:
        for client in clients:
            client.close()
