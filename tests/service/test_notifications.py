"""Rank-change notifications through a real ``ranked serve``: the settings route (checked,
kept across a restart, the webhook secret never shown again), a notification on the
member's live channel, the same notification signed to the board's webhook (retried
after failures, same id), and the metrics."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from ranked.notify import verify
from ranked.service.keys import KeyStore, Scope
from receiver import Receiver
from servers import RankedService, ServerError

from .conftest import Api

SECRET = "the-board-secret-0123456789abcdef"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """``ranked serve`` (embedded) with webhook retries 50 ms apart at first."""
    data_dir = tmp_path_factory.mktemp("notify")
    keys = {}
    with KeyStore(data_dir) as store:
        for scope in Scope:
            keys[scope.value] = store.create(scope)[1]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RANKED_WEBHOOK_BACKOFF", "0.05")
        patch.setenv("RANKED_WEBHOOK_BACKOFF_MAX", "0.2")
        patch.setenv("RANKED_WEBHOOK_ATTEMPTS", "6")
        service = RankedService(data_dir)
        try:
            service.start()
        except ServerError as error:
            pytest.fail(str(error), pytrace=False)
    api = Api(service, keys, httpx.Client(base_url=service.url, timeout=30), "embedded")
    try:
        yield api
    finally:
        api.client.close()
        service.close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver([500, "drop"])
    try:
        yield found
    finally:
        found.close()


def _metric(api: Api, name: str, **labels: str) -> float:
    text = api.call("GET", "/metrics", scope=None).text
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") and all(part in line for part in wanted.split(",")):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_a_notification_reaches_the_member_channel_and_the_webhook(
    served: Api, receiver: Receiver
) -> None:
    board = served.board()
    for member, score in (("ann", 30), ("bob", 20), ("cid", 10)):
        served.call("POST", f"/v1/boards/{board}/scores", json={"member": member, "score": score})
    settings = {
        "interval_seconds": 0.5,
        "thresholds": [2],
        "webhook": {"url": receiver.url, "secret": SECRET},
    }
    answer = served.call("PUT", f"/v1/boards/{board}/notifications", json=settings)
    assert answer.status_code == 201, answer.text  # the board had none
    body = answer.json()
    assert body["policy"]["kinds"] == ["entered_top", "first_lost", "first_taken"]
    assert body["policy"]["interval_seconds"] == 0.5 and body["policy"]["top"] == 2
    assert "secret" not in body["settings"]["webhook"] and "secret" not in body
    time.sleep(1.2)  # the first slot takes the baseline

    async def main() -> list[dict[str, Any]]:
        url = served.service.url.replace("http://", "ws://")
        path = f"/v1/boards/{board}/members/zed/live?key={served.keys['read']}"
        async with connect(url + path, proxy=None, open_timeout=10) as ws:
            first = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert first["type"] == "snapshot" and first["rank"] is None
            async with httpx.AsyncClient(base_url=served.service.url) as http:
                answer = await http.post(
                    f"/v1/boards/{board}/scores",
                    json={"member": "zed", "score": 99},
                    headers=served.headers("write"),
                )
                assert answer.status_code == 200
            found: list[dict[str, Any]] = []
            while not found:
                message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if message["type"] == "notification":
                    found.append(message)
            return found

    told = asyncio.run(main())
    assert len(told) == 1
    mine = told[0]
    assert mine["kind"] == "first_taken" and mine["member"] == "zed" and mine["board"] == board
    assert mine["new_rank"] == 1 and mine["old_rank"] is None and mine["score"] == 99.0
    assert mine["window"] == "all" and len(mine["id"]) == 32

    # ann lost first place: her notification goes to the webhook only (no channel of hers)
    receiver.wait(4)  # two notifications; the first two attempts fail
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        delivered = {r.headers["x-ranked-delivery"] for r in receiver.received}
        if (
            len(delivered) == 2
            and _metric(served, "ranked_webhook_deliveries_total", board=board, outcome="ok") == 2
        ):
            break
        time.sleep(0.05)
    got = list(receiver.received)
    bodies = {r.headers["x-ranked-delivery"]: json.loads(r.body) for r in got}
    assert len(bodies) == 2 and mine["id"] in bodies
    assert bodies[mine["id"]] == mine  # the same notification, the same id
    kinds = {(b["member"], b["kind"], b["old_rank"], b["new_rank"]) for b in bodies.values()}
    assert kinds == {("zed", "first_taken", None, 1), ("ann", "first_lost", 1, 2)}
    for r in got:
        assert r.headers["x-ranked-delivery"] == json.loads(r.body)["id"]
        timestamp, signature = r.headers["x-ranked-timestamp"], r.headers["x-ranked-signature"]
        assert verify(SECRET, timestamp, r.body, signature, now=time.time())
        assert not verify(SECRET[::-1], timestamp, r.body, signature, now=time.time())
    assert len(got) == 4  # 500, a dropped connection, then both accepted
    assert _metric(served, "ranked_notifications_total", board=board, kind="first_taken") == 1
    assert _metric(served, "ranked_notifications_total", board=board, kind="first_lost") == 1
    assert _metric(served, "ranked_webhook_deliveries_total", board=board, outcome="retried") == 2
    assert _metric(served, "ranked_webhook_deliveries_total", board=board, outcome="ok") == 2


def test_settings_are_checked_kept_and_secret(served: Api) -> None:
    board = served.board(
        seasons=[{"name": "cup", "start": "2026-01-01T00:00:00Z", "end": "2030-01-01T00:00:00Z"}]
    )
    path = f"/v1/boards/{board}/notifications"
    assert served.call("GET", path).status_code == 404
    refused = [
        {"within_hours": 24},  # the all-time window never ends
        {"window": "s:nope"},
        {"kinds": ["entered_top_10"]},
        {"interval_seconds": 0},
        {"thresholds": [0]},
        {"webhook": {"url": "ftp://example.com/x"}},
        {"webhook": {"url": "http://example.com/x", "secret": "short"}},
        {"loud": True},
    ]
    for body in refused:
        answer = served.call("PUT", path, json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert served.call("GET", path).status_code == 404  # nothing changed
    assert served.call("PUT", path, scope="write", json={}).status_code == 403
    assert served.call("GET", path, scope="read").status_code == 403
    assert served.call("PUT", "/v1/boards/nope/notifications", json={}).status_code == 404

    seed = {
        "preset": "final-day",
        "window": "s:cup",
        "webhook": {"url": "http://127.0.0.1:9/hook"},
    }
    answer = served.call("PUT", path, json=seed)
    assert answer.status_code == 201, answer.text
    made = answer.json()["secret"]
    assert len(made) >= 32
    policy = answer.json()["policy"]
    assert policy == {
        "interval_seconds": 1800.0,
        "kinds": ["entered_top", "first_lost", "first_taken"],
        "thresholds": [10],
        "within_hours": 24.0,
        "window": "s:cup",
        "ends_at": None,
        "top": 10,
    }
    replaced = served.call("PUT", path, json=seed)
    assert replaced.status_code == 200, replaced.text
    again = replaced.json()
    assert "secret" not in again  # the same URL keeps the secret it has

    served.restart()
    kept = served.call("GET", path)
    assert kept.status_code == 200, kept.text
    assert kept.json()["policy"] == policy
    assert kept.json()["settings"]["webhook"] == {"url": "http://127.0.0.1:9/hook"}
    assert made not in kept.text
    info = served.call("GET", f"/v1/boards/{board}", scope="read").text
    assert made not in info and "notifications" not in info

    assert served.call("DELETE", path).json() == {"removed": True}
    assert served.call("GET", path).status_code == 404
    assert served.call("DELETE", path).status_code == 404


def test_a_kept_notification_is_delivered_after_a_crash(tmp_path: Path) -> None:
    """The outbox: a notification whose webhook delivery had not succeeded when the
    service was SIGKILLed is sent again, same id and body, by the next start; once
    delivered it is not sent again by the one after."""
    data_dir = tmp_path / "data"
    keys = {}
    with KeyStore(data_dir) as store:
        for scope in Scope:
            keys[scope.value] = store.create(scope)[1]
    receiver = Receiver([500] * 100)  # refuses until the crash
    service = RankedService(data_dir)

    def start() -> None:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("RANKED_WEBHOOK_BACKOFF", "60")  # no retry before the crash
            patch.setenv("RANKED_WEBHOOK_BACKOFF_MAX", "60")
            service.start()

    start()
    api = Api(service, keys, httpx.Client(base_url=service.url, timeout=30), "embedded")
    try:
        board = api.board()
        for member, score in (("ann", 30), ("bob", 20)):
            api.call("POST", f"/v1/boards/{board}/scores", json={"member": member, "score": score})
        settings = {
            "interval_seconds": 0.5,
            "thresholds": [2],
            "webhook": {"url": receiver.url, "secret": SECRET},
        }
        assert api.call("PUT", f"/v1/boards/{board}/notifications", json=settings).is_success
        time.sleep(1.2)  # the first slot takes the baseline
        api.call("POST", f"/v1/boards/{board}/scores", json={"member": "zed", "score": 99})
        before = {r.headers["x-ranked-delivery"]: r.body for r in receiver.wait(2)}
        assert len(before) == 2  # zed took first place, ann lost it; both refused
        service.kill()
        with receiver.lock:
            receiver.fail.clear()
        start()
        again = receiver.wait(4)[2:]
        assert {r.headers["x-ranked-delivery"]: r.body for r in again} == before
        for r in again:
            stamp, signature = r.headers["x-ranked-timestamp"], r.headers["x-ranked-signature"]
            assert verify(SECRET, stamp, r.body, signature, now=time.time())
        time.sleep(0.5)  # the settled marks land
        assert service.stop() == 0
        start()
        time.sleep(1.0)
        assert len(receiver.received) == 4  # delivered: not sent again
    finally:
        api.client.close()
        service.close()
        receiver.close()
