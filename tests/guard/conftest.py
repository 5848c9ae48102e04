"""Write guard fixtures: every test runs on memory, redis and a redis cluster (real servers
from tests/conftest.py, flushed before each test), with a SQLite journal under tmp_path
where a test asks for one."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ranked import Leaderboard
from ranked.backends.base import Backend
from ranked.backends.factory import open_backend
from ranked.guard import Guard, GuardConfig, sign
from ranked.journal import open_journal
from ranked.journal.store import JournalStore
from servers import flushed_store

BACKENDS = ["memory", "redis", "cluster"]
KEY = b"0123456789abcdef-secret"
T0 = 1_790_000_000.0

_names = itertools.count()


class FakeClock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Env:
    kind: str
    url: str
    backend: Backend
    tmp: Path
    clock: FakeClock = field(default_factory=FakeClock)
    opened: list[Any] = field(default_factory=list)
    clients: list[Any] = field(default_factory=list)
    """One plain client per Redis node (none on memory)."""

    def board(
        self, name: str | None = None, *, journal: JournalStore | None = None, **kw: Any
    ) -> Leaderboard:
        board = Leaderboard(self.backend, name or f"g{next(_names)}", journal=journal, **kw)
        self.opened.append(board)
        return board

    def journal(self) -> JournalStore:
        store = open_journal(f"sqlite:///{self.tmp}/j{next(_names)}.db")
        self.opened.append(store)
        return store

    def guard(self, **config: Any) -> Guard:
        return Guard(GuardConfig(**config), clock=self.clock)

    def signed(
        self,
        board: Leaderboard,
        member: str,
        score: float,
        nonce: str,
        *,
        key: bytes = KEY,
        skew: float = 0,
    ) -> dict[str, Any]:
        client_time = round((self.clock() + skew) * 1000)
        return {
            "client_time": client_time,
            "nonce": nonce,
            "signature": sign(key, board.name, member, score, client_time, nonce),
        }


@pytest.fixture(params=BACKENDS)
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Env]:
    url, clients = flushed_store(request.param, request)
    backend = open_backend(url)
    found = Env(request.param, url, backend, tmp_path, clients=clients)
    try:
        yield found
    finally:
        for each in reversed(found.opened):
            each.close()
        backend.close()
        for client in clients:
            client.close()
