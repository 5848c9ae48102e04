"""A real ``ranked serve`` for the CLI's tests: a child process on a free loopback port
with a temporary data directory and an admin key, ready (``/readyz``) before a test runs.

:func:`ranked_serve` starts one with any extra ``serve`` flags; the session fixture
``service`` is one shared by the tests (each takes its own boards, from ``board``).
Nothing is mocked: the commands talk HTTP to the service as they would in production.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result

import ranked
from ranked.cli import main
from ranked.service.keys import KeyStore, Scope
from servers import RankedService, ServerError

SRC = Path(ranked.__file__).resolve().parent.parent
"""The source tree under test."""


@dataclass(frozen=True)
class RunningService:
    url: str
    admin_key: str
    data_dir: Path
    server: RankedService | None = None

    def api(self, key: str | None = None) -> httpx.Client:
        """An HTTP client of the service, with ``key`` (default: the admin key)."""
        token = self.admin_key if key is None else key
        return httpx.Client(base_url=self.url, headers={"authorization": f"Bearer {token}"})

    def cli(self, *args: str, key: str | None = None, stdin: bytes | None = None) -> Result:
        """``ranked ARGS`` run in this process against the service (``RANKED_URL`` and
        ``RANKED_KEY`` set); an exception other than the command's exit fails the test."""
        env = {"RANKED_URL": self.url, "RANKED_KEY": self.admin_key if key is None else key}
        result = CliRunner().invoke(main, list(args), env=env, input=stdin)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result


@contextlib.contextmanager
def ranked_serve(data_dir: Path, *args: str, port: int | None = None) -> Iterator[RunningService]:
    """Run ``ranked serve --data-dir DATA_DIR ARGS`` (:class:`servers.RankedService`)
    with a new admin key until the block ends, on ``port`` or a free one; a service that
    does not get ready fails the test with its log."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with KeyStore(data_dir) as keys:
        admin_key = keys.create(Scope.ADMIN, name="cli tests")[1]
    server = RankedService(data_dir, args)
    server.port = port or 0
    try:
        server.start()
    except ServerError as error:
        server.close()
        pytest.fail(str(error), pytrace=False)
    try:
        yield RunningService(server.url, admin_key, data_dir, server)
    finally:
        server.close()


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    """One ``ranked serve`` for the session's CLI tests (each test uses its own boards)."""
    with ranked_serve(tmp_path_factory.mktemp("serve")) as running:
        yield running


_names = itertools.count(1)


@pytest.fixture
def board() -> str:
    """A board name no other test uses (the board is not created)."""
    return f"board-{next(_names)}"


def entries(service: RunningService, board: str, **params: Any) -> list[tuple[str, float, int]]:
    """Every entry of ``board`` read straight from the API: (member, score, rank)."""
    found: list[tuple[str, float, int]] = []
    query: dict[str, Any] = {"limit": 100, **params}
    with service.api() as api:
        while True:
            page = api.get(f"/v1/boards/{board}/entries", params=query)
            assert page.status_code == 200, page.text
            body = page.json()
            found += [(e["member"], e["score"], e["rank"]) for e in body["entries"]]
            if body["next"] is None:
                return found
            query["cursor"] = body["next"]


def create(service: RunningService, board: str, **settings: Any) -> None:
    """Create ``board`` through the API."""
    with service.api() as api:
        answer = api.put(f"/v1/boards/{board}", json=settings)
        assert answer.status_code == 201, answer.text
