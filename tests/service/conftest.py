"""A real ``ranked serve`` for the API tests: on the embedded default (memory:// and a
SQLite journal in a temporary data directory) and on Redis with a PostgreSQL journal, both
servers started by the session's fixtures. One service per module and deployment; each
test uses boards of its own."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from ranked.service.keys import KeyStore, Scope
from servers import PostgresServer, RankedService, RedisServer, ServerError

_names = itertools.count()


@dataclass
class Api:
    """A running service, a key of each scope, and a client."""

    service: RankedService
    keys: dict[str, str]
    client: httpx.Client
    deployment: str

    def headers(self, scope: str | None = "admin") -> dict[str, str]:
        return {} if scope is None else {"Authorization": f"Bearer {self.keys[scope]}"}

    def call(
        self, method: str, path: str, scope: str | None = "admin", **kwargs: Any
    ) -> httpx.Response:
        headers = {**self.headers(scope), **kwargs.pop("headers", {})}
        return self.client.request(method, path, headers=headers, **kwargs)

    def board(self, **settings: Any) -> str:
        """A new board with ``settings``: its name."""
        name = f"b{next(_names)}"
        answer = self.call("PUT", f"/v1/boards/{name}", json=settings)
        assert answer.status_code == 201, answer.text
        return name

    def restart(self, *, kill: bool = False) -> None:
        """Stop the service (SIGTERM, or SIGKILL) and start it again on the same files."""
        if kill:
            self.service.kill()
        else:
            assert self.service.stop() == 0, self.service.tail_log()
            assert "ranked serve stopped" in self.service.tail_log()
        self.service.start()
        self.client.close()
        self.client = httpx.Client(base_url=self.service.url, timeout=30)


def deployment_args(kind: str, request: pytest.FixtureRequest) -> list[str]:
    """``ranked serve`` arguments of a deployment (starting the servers it needs)."""
    if kind == "embedded":
        return []
    redis: RedisServer = request.getfixturevalue("redis_server")
    postgres: PostgresServer = request.getfixturevalue("postgres_server")
    return ["--backend", redis.url, "--journal", postgres.new_database()]


@pytest.fixture(scope="module", params=["embedded", "redis+postgresql"])
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    data_dir: Path = tmp_path_factory.mktemp("service")
    keys = {}
    with KeyStore(data_dir) as store:
        for scope in Scope:
            keys[scope.value] = store.create(scope)[1]
    service = RankedService(data_dir, deployment_args(request.param, request))
    try:
        service.start()
    except ServerError as error:
        pytest.fail(str(error), pytrace=False)
    client = httpx.Client(base_url=service.url, timeout=30)
    api = Api(service, keys, client, request.param)
    try:
        yield api
    finally:
        api.client.close()
        service.close()
