"""Batched ``incr`` writes through a real ``ranked serve`` (docs/live.md, "Batched
writes"), on both deployments: the setting, equal scores with batching on and off under
concurrent clients, a refused increment answered to its own client, order with other
writes, answers only once durable (a SIGKILL loses nothing answered), the pending
increments written at a graceful stop, the live feed told, and the metrics' reduction."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from websockets.asyncio.client import connect

from .conftest import Api

CLIENTS = 8
PER_CLIENT = 40
MEMBERS = 5


def _incr(client: httpx.Client, api: Api, board: str, member: str, score: float) -> httpx.Response:
    return client.post(
        f"/v1/boards/{board}/scores",
        headers=api.headers("write"),
        json={"member": member, "score": score},
    )


def _hammer(api: Api, board: str) -> list[httpx.Response]:
    """CLIENTS clients, each PER_CLIENT increments over MEMBERS members, at once."""

    def client(index: int) -> list[httpx.Response]:
        with httpx.Client(base_url=api.service.url, timeout=30) as http:
            return [
                _incr(http, api, board, f"m{(index + step) % MEMBERS}", index + 1)
                for step in range(PER_CLIENT)
            ]

    with ThreadPoolExecutor(CLIENTS) as pool:
        return [r for answers in pool.map(client, range(CLIENTS)) for r in answers]


def _scores(api: Api, board: str) -> dict[str, float]:
    top = api.call("GET", f"/v1/boards/{board}/top?limit=100", scope="read").json()
    return {e["member"]: e["score"] for e in top["entries"]}


def _metric(api: Api, name: str, board: str) -> float:
    text = api.call("GET", "/metrics", scope=None).text
    found = re.search(rf'^{name}{{board="{board}"}} (\S+)$', text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_the_setting_is_kept_checked_and_changed(api: Api) -> None:
    board = api.board(operator="incr", batch_incr_ms=100)
    info = api.call("GET", f"/v1/boards/{board}", scope="read").json()
    assert info["settings"]["batch_incr_ms"] == 100
    for wrong in (0, 10_001, 1.5, "100"):
        answer = api.call("PUT", f"/v1/boards/{board}", json={"batch_incr_ms": wrong})
        assert answer.status_code == 422, answer.text
        assert answer.json()["type"].endswith("invalid-body")
    assert (
        api.call("GET", f"/v1/boards/{board}", scope="read").json()["settings"]["batch_incr_ms"]
        == 100
    )
    changed = api.call("PUT", f"/v1/boards/{board}", json={"operator": "incr"})
    assert changed.status_code == 200 and changed.json()["settings"]["batch_incr_ms"] is None
    assert _incr(api.client, api, board, "a", 2).json()["score"] == 2.0  # written at once


def test_batched_scores_equal_unbatched_under_concurrent_clients(api: Api) -> None:
    plain = api.board(operator="incr")
    batched = api.board(operator="incr", batch_incr_ms=50)
    for board in (plain, batched):
        answers = _hammer(api, board)
        assert {a.status_code for a in answers} == {200}
    expected: Counter[str] = Counter()
    for index in range(CLIENTS):
        for step in range(PER_CLIENT):
            expected[f"m{(index + step) % MEMBERS}"] += index + 1
    assert _scores(api, batched) == _scores(api, plain) == dict(expected)
    increments = _metric(api, "ranked_batched_increments_total", batched)
    writes = _metric(api, "ranked_batched_writes_total", batched)
    flushes = _metric(api, "ranked_batched_flushes_total", batched)
    assert increments == CLIENTS * PER_CLIENT
    # the reduction: each client waits for its answer, so a flush carries up to CLIENTS
    # increments, over at most MEMBERS entries
    assert writes <= MEMBERS * flushes and writes < increments and flushes * 4 <= increments
    assert _metric(api, "ranked_batched_flush_members_count", batched) == flushes
    assert _metric(api, "ranked_batched_increments_total", plain) == 0


def test_each_client_gets_its_members_standing_after_the_flush(api: Api) -> None:
    board = api.board(operator="incr", batch_incr_ms=200)
    _incr(api.client, api, board, "b", 5)  # b: 5 after the first flush

    def send(args: tuple[str, int]) -> dict[str, Any]:
        with httpx.Client(base_url=api.service.url, timeout=30) as http:
            result: dict[str, Any] = _incr(http, api, board, *args).json()
            return result

    with ThreadPoolExecutor(3) as pool:
        first, second, other = pool.map(send, [("a", 1), ("a", 2), ("b", 1)])
    assert first["score"] == second["score"] == 3.0 and first["previous_score"] is None
    assert (other["score"], other["previous_score"], other["rank"]) == (6.0, 5.0, 1)


def test_a_refused_increment_does_not_poison_its_flush(api: Api) -> None:
    board = api.board(operator="incr", batch_incr_ms=200)
    api.call(
        "POST",
        f"/v1/boards/{board}/scores",
        scope="write",
        json={"member": "big", "score": 2**53, "operator": "set"},
    )

    def send(args: tuple[str, int]) -> httpx.Response:
        with httpx.Client(base_url=api.service.url, timeout=30) as http:
            return _incr(http, api, board, *args)

    with ThreadPoolExecutor(3) as pool:
        refused, ok, other = pool.map(send, [("big", 1), ("a", 1), ("c", 2)])
    assert refused.status_code == 422 and refused.json()["type"].endswith("out-of-range")
    assert ok.status_code == other.status_code == 200
    assert _scores(api, board) == {"big": 2.0**53, "a": 1.0, "c": 2.0}


def test_a_non_incr_write_sees_the_increments_before_it(api: Api) -> None:
    board = api.board(operator="incr", batch_incr_ms=300)
    with httpx.Client(base_url=api.service.url, timeout=30) as http:
        pending = threading.Thread(target=_incr, args=(http, api, board, "a", 10))
        pending.start()
        try:
            assert _wait_for_pending(api, board)
            best = api.call(
                "POST",
                f"/v1/boards/{board}/scores",
                scope="write",
                json={"member": "a", "score": 7, "operator": "best"},
            ).json()
        finally:
            pending.join()
    assert (best["score"], best["previous_score"], best["changed"]) == (10.0, 10.0, False)
    answer = api.call(
        "POST",
        f"/v1/boards/{board}/scores/batch",
        scope="write",
        json={"scores": [{"member": "a", "score": 1}], "operator": "incr"},
    )
    assert answer.json()["results"][0]["score"] == 11.0


def _wait_for_pending(api: Api, board: str) -> bool:
    """True once the service has taken an increment of ``board`` (it waits for its flush):
    the request counter moves only when answered, so poll the board staying empty a bit."""
    import time

    time.sleep(0.1)
    return _scores(api, board) == {}


def test_a_keyed_increment_is_written_alone_and_in_order(api: Api) -> None:
    board = api.board(operator="incr", batch_incr_ms=100)
    body = {"member": "k", "score": 4, "key": "retry-1"}
    first = api.call("POST", f"/v1/boards/{board}/scores", scope="write", json=body).json()
    again = api.call("POST", f"/v1/boards/{board}/scores", scope="write", json=body).json()
    assert first == again and first["score"] == 4.0
    assert _metric(api, "ranked_batched_increments_total", board) == 0


def test_the_live_feed_is_told_of_a_flush(api: Api) -> None:
    board = api.board(operator="incr", batch_incr_ms=50, public_reads=True)
    url = api.service.url.replace("http", "ws") + f"/v1/boards/{board}/live?limit=5"

    async def watch() -> list[dict[str, Any]]:
        async with connect(url) as socket:
            snapshot = json.loads(await socket.recv())
            assert snapshot["type"] == "snapshot"
            await asyncio.to_thread(_hammer_small, api, board)
            events: list[dict[str, Any]] = []
            latest: dict[str, float] = {}
            while latest != {"x": 6.0, "y": 3.0}:  # the increments may take several flushes
                message = json.loads(await asyncio.wait_for(socket.recv(), 10))
                events += message.get("events", [])
                latest = {e["member"]: e["score"] for e in events}
            return events

    events = asyncio.run(watch())
    assert {e["op"] for e in events} == {"submit"} and len(events) <= 4


def _hammer_small(api: Api, board: str) -> None:
    def send(args: tuple[str, int]) -> int:
        with httpx.Client(base_url=api.service.url, timeout=30) as http:
            return _incr(http, api, board, *args).status_code

    with ThreadPoolExecutor(4) as pool:
        assert set(pool.map(send, [("x", 1), ("x", 2), ("x", 3), ("y", 3)])) == {200}


def test_answered_increments_survive_a_sigkill_and_a_stop_writes_the_pending(api: Api) -> None:
    board = api.board(operator="incr", batch_incr_ms=100)
    answered: Counter[str] = Counter()
    sent: Counter[str] = Counter()
    stop = threading.Event()
    guard = threading.Lock()

    def client(index: int) -> None:
        with httpx.Client(base_url=api.service.url, timeout=5) as http:
            while not stop.is_set():
                member = f"m{index % 3}"
                with guard:
                    sent[member] += 1
                try:
                    answer = _incr(http, api, board, member, 1)
                except httpx.HTTPError:
                    return  # the service is gone
                if answer.status_code == 200:
                    with guard:
                        answered[member] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    import time

    time.sleep(1.0)
    api.service.kill()
    stop.set()
    for thread in threads:
        thread.join()
    api.service.start()
    api.client.close()
    api.client = httpx.Client(base_url=api.service.url, timeout=30)
    after = _scores(api, board)
    assert sum(answered.values()) > 0
    for member, count in answered.items():
        assert count <= after.get(member, 0) <= sent[member]  # nothing answered is lost

    # a graceful stop writes what waits for its flush
    slow = api.board(operator="incr", batch_incr_ms=10_000)
    results: list[int] = []

    def waiting(member: str) -> None:
        with httpx.Client(base_url=api.service.url, timeout=30) as http:
            try:
                results.append(_incr(http, api, slow, member, 2).status_code)
            except httpx.HTTPError:
                results.append(0)

    waiters = [threading.Thread(target=waiting, args=(f"w{i % 2}",)) for i in range(4)]
    for thread in waiters:
        thread.start()
    time.sleep(0.5)
    api.restart()
    for thread in waiters:
        thread.join()
    assert results == [200] * 4
    assert _scores(api, slow) == {"w0": 4.0, "w1": 4.0}
