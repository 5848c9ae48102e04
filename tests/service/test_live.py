"""The live channels against a real ``ranked serve`` and a real WebSocket client
(docs/live.md): the snapshot on connect, updates after writes, coalescing with no event
lost, resume after a forced disconnect, the reset past the buffer, the member channel,
keys and scopes, heartbeats, and a slow client dropped without holding others back."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from ranked.service.keys import KeyStore, Scope
from ranked.service.live import CLOSE
from servers import RankedService, ServerError, free_port

from .conftest import Api

_names = itertools.count()


TRANSPORTS = ("same-port", "live-port")
"""The live channels under the HTTP server, and on the service's ``live_port``."""


@dataclass
class LiveApi(Api):
    """An :class:`Api` whose WebSocket clients connect to ``ws_port``."""

    ws_port: int = 0


def _start(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, **env: str
) -> tuple[RankedService, dict[str, str]]:
    """``ranked serve`` with a ``live_port`` too, and the live channels' ``env``."""
    keys = {}
    with KeyStore(data_dir) as store:
        for scope in Scope:
            keys[scope.value] = store.create(scope)[1]
    with monkeypatch.context() as patch:
        for name, value in env.items():
            patch.setenv(f"RANKED_LIVE_{name.upper()}", value)
        service = RankedService(data_dir, ["--live-port", str(free_port())])
        try:
            service.start()
        except ServerError as error:
            pytest.fail(str(error), pytrace=False)
    return service, keys


def _api(service: RankedService, keys: dict[str, str], transport: str = "same-port") -> LiveApi:
    client = httpx.Client(base_url=service.url, timeout=30)
    return _on(LiveApi(service, keys, client, "embedded"), transport)


def _on(api: Api, transport: str) -> LiveApi:
    """``api``, its WebSocket clients connecting over ``transport``."""
    service = api.service
    port = service.port
    if transport == "live-port":
        port = int(service.args[service.args.index("--live-port") + 1])
    return LiveApi(service, api.keys, api.client, api.deployment, port)


@pytest.fixture(scope="module")
def live_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """``ranked serve`` with the live channels' default limits."""
    with pytest.MonkeyPatch.context() as patch:
        service, keys = _start(tmp_path_factory.mktemp("live"), patch)
    api = _api(service, keys)
    try:
        yield api
    finally:
        api.client.close()
        service.close()


@pytest.fixture(params=TRANSPORTS)
def live(live_service: Api, request: pytest.FixtureRequest) -> LiveApi:
    """:func:`live_service`, its channels reached on either transport."""
    return _on(live_service, request.param)


@pytest.fixture(params=TRANSPORTS)
def tight(tight_service: Api, request: pytest.FixtureRequest) -> LiveApi:
    """:func:`tight_service`, its channels reached on either transport."""
    return _on(tight_service, request.param)


@pytest.fixture(scope="module")
def tight_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """``ranked serve`` with a queue of 4 messages, a 1 ms frame, a 0.3 s heartbeat, and
    60 s for a dropped client's last frames."""
    with pytest.MonkeyPatch.context() as patch:
        service, keys = _start(
            tmp_path_factory.mktemp("tight"),
            patch,
            queue="4",
            interval="0.001",
            heartbeat="0.3",
            close_grace="60",
        )
    api = _api(service, keys)
    try:
        yield api
    finally:
        api.client.close()
        service.close()


def _ws_url(api: Api, path: str, **query: Any) -> str:
    port = api.ws_port if isinstance(api, LiveApi) else api.service.port
    url = f"ws://127.0.0.1:{port}{path}"
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    return url


def _open(api: Api, path: str, headers: dict[str, str] | None = None, **query: Any) -> Any:
    return connect(
        _ws_url(api, path, **query),
        additional_headers=headers,
        proxy=None,
        max_size=None,
        open_timeout=10,
    )


async def _next(ws: ClientConnection, timeout: float = 10.0) -> dict[str, Any]:
    """The next message that is not a heartbeat."""
    while True:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        if message["type"] != "ping":
            return message


async def _close_code(ws: ClientConnection, timeout: float = 10.0) -> int | None:
    try:
        while True:
            await asyncio.wait_for(ws.recv(), timeout)
    except ConnectionClosed as closed:
        return None if closed.rcvd is None else closed.rcvd.code


def _board(api: Api, **settings: Any) -> str:
    name = f"live{next(_names)}"
    answer = api.call("PUT", f"/v1/boards/{name}", json=settings)
    assert answer.status_code == 201, answer.text
    return name


def _client(api: Api) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=api.service.url,
        headers={"Authorization": f"Bearer {api.keys['admin']}"},
        timeout=30,
    )


def _events(messages: list[dict[str, Any]]) -> list[int]:
    return [event["id"] for message in messages for event in message.get("events", [])]


def test_snapshot_on_connect_then_an_update_after_a_write(live: Api) -> None:
    board = _board(live, public_reads=True)
    for member, score in (("ann", 30), ("bob", 20), ("cid", 10)):
        live.call("POST", f"/v1/boards/{board}/scores", json={"member": member, "score": score})

    async def scenario() -> None:
        async with _open(live, f"/v1/boards/{board}/live", limit=2) as ws:
            snapshot = await _next(ws)
            assert snapshot["type"] == "snapshot" and snapshot["reset"] is False
            assert snapshot["id"] == 3 and snapshot["window"] == "all"
            assert [e["member"] for e in snapshot["top"]] == ["ann", "bob"]
            async with _client(live) as http:
                answer = await http.post(
                    f"/v1/boards/{board}/scores", json={"member": "cid", "score": 99}
                )
                assert answer.status_code == 200
            update = await _next(ws)
            assert update["type"] == "update" and update["id"] == 4
            assert update["events"] == [
                {
                    "id": 4,
                    "op": "submit",
                    "member": "cid",
                    "window": "all",
                    "score": 99.0,
                    "rank": 1,
                    "previous_score": 10.0,
                    "previous_rank": 3,
                }
            ]
            assert update["top"] == [
                {"member": "cid", "score": 99.0, "rank": 1},
                {"member": "ann", "score": 30.0, "rank": 2},
            ]

    asyncio.run(scenario())


def test_updates_on_redis_and_postgresql_too(api: Api) -> None:
    board = api.board()

    async def scenario() -> None:
        headers = api.headers("read")
        async with _open(api, f"/v1/boards/{board}/live", headers=headers) as ws:
            assert (await _next(ws))["top"] == []
            async with httpx.AsyncClient(base_url=api.service.url, headers=api.headers()) as http:
                await http.post(f"/v1/boards/{board}/scores", json={"member": "x", "score": 5})
            update = await _next(ws)
            assert update["top"] == [{"member": "x", "score": 5.0, "rank": 1}]

    asyncio.run(scenario())


async def _burst(api: Api, board: str, count: int, start: int = 0) -> None:
    async with _client(api) as http:
        for i in range(start, start + count):
            answer = await http.post(
                f"/v1/boards/{board}/scores", json={"member": f"p{i % 150}", "score": i}
            )
            assert answer.status_code == 200


def test_a_burst_is_coalesced_and_no_event_is_lost(live: Api) -> None:
    board = _board(live, public_reads=True)

    async def scenario() -> None:
        async with _open(live, f"/v1/boards/{board}/live", limit=10) as ws:
            first = await _next(ws)
            assert first["id"] == 0
            await _burst(live, board, 200)
            messages: list[dict[str, Any]] = []
            while not messages or messages[-1]["id"] < 200:
                messages.append(await _next(ws))
            assert _events(messages) == list(range(1, 201))
            assert [m["id"] for m in messages] == sorted({m["id"] for m in messages})
            assert len(messages) < 200, "a burst should be coalesced"
            top = live.call("GET", f"/v1/boards/{board}/top?limit=10").json()["entries"]
            assert messages[-1]["top"] == top

    asyncio.run(scenario())


def test_a_new_subscriber_sends_nothing_to_the_others(live: Api) -> None:
    """A channel joining gets its snapshot; the board's other channels get no message
    (they used to get an update with no event, once per joining channel)."""
    board = _board(live, public_reads=True)
    live.call("POST", f"/v1/boards/{board}/scores", json={"member": "ann", "score": 1})

    async def scenario() -> None:
        async with _open(live, f"/v1/boards/{board}/live", limit=5) as first:
            assert (await _next(first))["type"] == "snapshot"
            for _ in range(3):
                async with _open(live, f"/v1/boards/{board}/live", limit=5) as other:
                    assert (await _next(other))["type"] == "snapshot"
            await asyncio.sleep(0.3)  # several flush intervals
            live.call("POST", f"/v1/boards/{board}/scores", json={"member": "bob", "score": 2})
            update = await _next(first)
            assert update["type"] == "update"
            assert [e["member"] for e in update["events"]] == ["bob"]

    asyncio.run(scenario())


def test_resume_after_a_forced_disconnect_mid_burst(live: Api) -> None:
    board = _board(live, public_reads=True)

    async def scenario() -> None:
        received: list[dict[str, Any]] = []
        path = f"/v1/boards/{board}/live"
        async with _open(live, path) as ws:
            received.append(await _next(ws))
            writer = asyncio.get_running_loop().create_task(_burst(live, board, 300))
            while received[-1]["id"] < 60:
                received.append(await _next(ws))
            ws.transport.abort()  # the connection dies; no close handshake
        last, epoch = received[-1]["id"], received[-1]["epoch"]
        assert not writer.done(), "the disconnect should fall in the middle of the burst"
        async with _open(live, path, after=last, epoch=epoch) as ws:
            while received[-1]["id"] < 300:
                received.append(await _next(ws))
            await writer
        assert received[0]["type"] == "snapshot"
        assert all(m["type"] == "update" for m in received[1:]), "no reset: resumed"
        assert _events(received) == list(range(1, 301))
        top = live.call("GET", f"/v1/boards/{board}/top?limit=10").json()["entries"]
        assert received[-1]["top"] == top

    asyncio.run(scenario())


def test_past_the_buffer_or_another_epoch_a_reset_snapshot(live: Api) -> None:
    board = _board(live, public_reads=True)

    async def scenario() -> None:
        path = f"/v1/boards/{board}/live"
        async with _open(live, path) as ws:
            start = await _next(ws)
        async with _client(live) as http:
            for batch in range(2):  # 1,200 events: past the 1,000 the board keeps
                scores = [
                    {"member": f"m{batch}-{i}", "score": batch * 1000 + i} for i in range(600)
                ]
                answer = await http.post(
                    f"/v1/boards/{board}/scores/batch", json={"scores": scores}
                )
                assert answer.status_code == 200
        async with _open(live, path, after=start["id"], epoch=start["epoch"]) as ws:
            reset = await _next(ws)
        assert reset["type"] == "snapshot" and reset["reset"] is True and reset["id"] == 1200
        assert reset["top"][0] == {"member": "m1-599", "score": 1599.0, "rank": 1}
        async with _open(live, path, after=1190, epoch=start["epoch"]) as ws:
            resumed = await _next(ws)
        assert resumed["type"] == "update" and _events([resumed]) == list(range(1191, 1201))
        async with _open(live, path, after=1190, epoch="other") as ws:
            other = await _next(ws)
        assert other["type"] == "snapshot" and other["reset"] is True
        async with _open(live, path, after=1190) as ws:  # no epoch: ids of any process
            unknown = await _next(ws)
        assert unknown["type"] == "snapshot" and unknown["reset"] is True

    asyncio.run(scenario())


def test_the_member_channel(live: Api) -> None:
    board = _board(live, public_reads=True)

    async def scenario() -> None:
        async with _open(live, f"/v1/boards/{board}/members/me/live") as ws:
            first = await _next(ws)
            assert first["type"] == "snapshot" and first["member"] == "me"
            assert (first["score"], first["rank"]) == (None, None)
            async with _client(live) as http:
                await http.post(f"/v1/boards/{board}/scores", json={"member": "me", "score": 10})
                mine = await _next(ws)
                assert (mine["score"], mine["rank"]) == (10.0, 1)
                assert [e["member"] for e in mine["events"]] == ["me"]
                await http.post(f"/v1/boards/{board}/scores", json={"member": "you", "score": 20})
                passed = await _next(ws)
                assert (passed["score"], passed["rank"], passed["previous_rank"]) == (10.0, 2, 1)
                assert passed["events"] == []
                await http.delete(f"/v1/boards/{board}/members/me?reason=test")
                gone = await _next(ws)
                assert (gone["score"], gone["rank"]) == (None, None)
                assert [e["op"] for e in gone["events"]] == ["remove"]

    asyncio.run(scenario())


def test_keys_scopes_and_refusals(live: Api) -> None:
    private = _board(live)
    public = _board(live, public_reads=True)

    async def code(path: str, headers: dict[str, str] | None = None, **query: Any) -> Any:
        async with _open(live, path, headers=headers, **query) as ws:
            try:
                return (await _next(ws))["type"]
            except ConnectionClosed as closed:
                assert closed.rcvd is not None
                return closed.rcvd.code

    async def scenario() -> None:
        path = f"/v1/boards/{private}/live"
        assert await code(path) == 4001
        assert await code(path, key="rk_nope") == 4001
        assert await code(path, headers={"Authorization": "Basic abc"}) == 4001
        assert await code(path, headers=live.headers("read")) == "snapshot"
        assert await code(path, key=live.keys["read"]) == "snapshot"
        assert await code(f"/v1/boards/{private}/members/x/live") == 4001
        assert await code(f"/v1/boards/{public}/live") == "snapshot"
        assert await code("/v1/boards/no-such-board/live") == 4004
        assert await code(f"/v1/boards/{public}/elsewhere") == 4004
        assert await code(f"/v1/boards/{public}/live", limit=101) == 4000
        assert await code(f"/v1/boards/{public}/live", window="d1999-01-01x") == 4000
        assert await code(f"/v1/boards/{public}/live", surprise=1) == 4000

    asyncio.run(scenario())


def test_heartbeats(tight: Api) -> None:
    board = _board(tight, public_reads=True)

    async def scenario() -> None:
        async with _open(tight, f"/v1/boards/{board}/live") as ws:
            snapshot = json.loads(await ws.recv())
            ping = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert ping == {"type": "ping", "id": snapshot["id"], "epoch": snapshot["epoch"]}

    asyncio.run(scenario())


def test_a_slow_client_is_dropped_and_holds_nobody_back(tight: LiveApi) -> None:
    board = _board(tight, public_reads=True)
    path = f"/v1/boards/{board}/live"
    long = "x" * 190
    BATCHES = 60  # about 9 MB to each client: more than the sockets and the server buffer

    async def scenario() -> None:
        # the slow client reads nothing: a tiny receive buffer, and no reading past one message
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect(("127.0.0.1", tight.ws_port))
        slow = await connect(
            _ws_url(tight, path, limit=100), sock=raw, proxy=None, max_size=None, max_queue=1
        )
        async with _open(tight, path, limit=100) as fast:
            received = [await _next(fast)]

            async def read() -> None:
                while received[-1]["id"] < BATCHES * 500:
                    received.append(await _next(fast))

            reader = asyncio.get_running_loop().create_task(read())
            async with _client(tight) as http:
                for batch in range(BATCHES):
                    scores = [
                        {"member": f"{long}{i}", "score": batch * 1000 + i} for i in range(500)
                    ]
                    answer = await http.post(
                        f"/v1/boards/{board}/scores/batch", json={"scores": scores}
                    )
                    assert answer.status_code == 200
            await reader
        assert _events(received) == list(range(1, BATCHES * 500 + 1)), "the fast one lost nothing"
        assert await _close_code(slow, timeout=30) == 4008
        assert slow.close_reason is not None and "too slow" in slow.close_reason

    asyncio.run(scenario())


def test_every_close_code_is_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "live.md").read_text(encoding="utf-8")
    for name, code in CLOSE.items():
        assert f"| {code} |" in doc, name


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_graceful_stop_closes_the_channels_with_1001(tmp_path: Path, transport: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        service, keys = _start(tmp_path / "data", patch)
    api = _api(service, keys, transport)
    try:
        board = _board(api, public_reads=True)

        async def scenario() -> None:
            async with _open(api, f"/v1/boards/{board}/live") as ws:
                await _next(ws)
                stopping = asyncio.get_running_loop().run_in_executor(None, service.stop)
                assert await _close_code(ws) == 1001
                assert await stopping == 0

        asyncio.run(scenario())
        assert "ranked serve stopped" in service.tail_log()
    finally:
        api.client.close()
        service.close()


def test_the_live_port_serves_the_channels_only_and_the_page_names_it(live_service: Api) -> None:
    fast = _on(live_service, "live-port")
    board = _board(fast, public_reads=True)
    answer = httpx.get(f"http://127.0.0.1:{fast.ws_port}/v1/boards/{board}/top")
    assert answer.status_code == 426  # not a WebSocket: no HTTP API on that port
    page = fast.call("GET", f"/boards/{board}", scope=None)
    assert f'<meta name="ranked-live" content="{fast.ws_port}">' in page.text


def test_resume_on_the_other_port(live_service: Api) -> None:
    """Both ports serve the same feeds: ids received on one resume on the other."""
    board = _board(live_service, public_reads=True)
    path = f"/v1/boards/{board}/live"

    async def scenario() -> None:
        same, fast = _on(live_service, "same-port"), _on(live_service, "live-port")
        async with _open(same, path) as ws:
            start = await _next(ws)
            await _burst(same, board, 20)
            received = [await _next(ws)]
            while received[-1]["id"] < 20:
                received.append(await _next(ws))
        await _burst(same, board, 10, start=20)
        async with _open(fast, path, after=received[-1]["id"], epoch=start["epoch"]) as ws:
            resumed = await _next(ws)
        assert resumed["type"] == "update"
        assert _events([*received, resumed]) == list(range(1, 31))

    asyncio.run(scenario())


def test_a_live_port_in_use_stops_the_start(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        service = RankedService(tmp_path, ["--live-port", str(taken.getsockname()[1])])
        with pytest.raises(ServerError, match="cannot listen on live_port"):
            service.start()


def test_the_live_port_bound_is_in_bytes_counting_a_message_as_4_kib_at_least() -> None:
    """A small message (a ping) written after large ones does not shrink the bound: the
    unsent bytes are compared with ``queue`` times the message, counted as 4 KiB at least."""
    from websockets.protocol import State

    from ranked.service.fastlive import DirectChannel

    class Transport:
        unsent = 0

        def get_write_buffer_size(self) -> int:
            return self.unsent

    class Protocol:
        state = State.OPEN

        def __init__(self) -> None:
            self.sent: list[bytes] = []

        def send_text(self, data: bytes) -> None:
            self.sent.append(data)

    class Connection:
        protocol = Protocol()
        transport = Transport()
        send_in_progress = None
        closed: tuple[int, str] | None = None

        def send_data(self) -> None:
            pass

        async def close(self, code: int, reason: str) -> None:
            self.closed = (code, reason)

    async def scenario() -> None:
        connection = Connection()
        channel = DirectChannel(None, 10, None, None, 4, connection=connection)  # type: ignore[arg-type]
        connection.transport.unsent = 4 * 4096  # much more than 4 pings, not 4 x 4 KiB
        channel.put('{"type":"ping","id":1,"epoch":"x"}')
        assert channel.closed is None and len(connection.protocol.sent) == 1
        connection.transport.unsent = 4 * 4096 + 1
        channel.put('{"type":"ping","id":1,"epoch":"x"}')
        assert channel.closed is not None and channel.closed[0] == CLOSE["too-slow"]
        await asyncio.sleep(0)
        assert connection.closed is not None and connection.closed[0] == 4008
        channel.put("{}")  # closed: nothing more is written
        assert len(connection.protocol.sent) == 2

    asyncio.run(scenario())
