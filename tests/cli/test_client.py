"""The commands' HTTP client against a real service: it waits for a service that
restarts, says when one went away, and a keyed batch it sends again is applied once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ranked.cli._client import Client, Failure
from ranked.service.schemas import BatchBody, BatchItem, BatchResult, BoardList
from servers import _spawn, _terminate

from .conftest import create, entries, ranked_serve


def test_a_read_waits_for_a_service_that_restarts(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with ranked_serve(data) as first:
        client = Client(first.url, first.admin_key, attempts=8, backoff=0.25)
        assert client.call("GET", "/v1/boards", BoardList).boards == []
    # Started again on the same port: it takes a moment to import and bind, then
    # answers 503 while it restores its boards; the call waits through both.
    port = first.url.rpartition(":")[2]
    command = [sys.executable, "-m", "ranked", "serve", "--data-dir", str(data), "--port", port]
    again = _spawn(command, tmp_path / "log")
    try:
        assert client.call("GET", "/v1/boards", BoardList, retry=True).boards == []
    finally:
        _terminate(again)
        client.close()


def test_a_call_that_is_not_retried_says_the_service_went_away(tmp_path: Path) -> None:
    with ranked_serve(tmp_path / "data") as gone:
        client = Client(gone.url, gone.admin_key)
        client.call("GET", "/v1/boards", BoardList)
    with client, pytest.raises(Failure, match=f"^the service at {gone.url} went away: "):
        client.call("POST", "/v1/boards/b/rebuild", BoardList)


def test_a_keyed_batch_sent_again_is_applied_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = "/v1/boards/points/scores/batch"
    body = BatchBody([BatchItem("a", 5), BatchItem("b", 1)], "incr", "import:0123abcd:0")
    with ranked_serve(data) as service:
        create(service, "points", operator="incr")
        with Client(service.url, service.admin_key) as client:
            first = client.call("POST", path, BatchResult, body=body, retry=True)
            again = client.call("POST", path, BatchResult, body=body, retry=True)
        assert again == first
        assert entries(service, "points") == [("a", 5, 1), ("b", 1, 2)]
    with ranked_serve(data) as restarted, Client(restarted.url, restarted.admin_key) as client:
        # A new process no longer keeps the first answer: the service answers each
        # member's standing now, changed false, and still applies the batch once.
        after = client.call("POST", path, BatchResult, body=body, retry=True)
        assert [(r.member, r.score, r.changed) for r in after.results] == [
            ("a", 5, False),
            ("b", 1, False),
        ]
        assert entries(restarted, "points") == [("a", 5, 1), ("b", 1, 2)]
