"""``ranked demo``: the service with demo boards that fill up as simulated players submit,
a printed guide whose key writes and whose curl works, and a clean stop."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
from websockets.sync.client import connect

from servers import RankedService


def test_demo_serves_live_boards_and_prints_a_working_guide(tmp_path: Path) -> None:
    demo = RankedService(tmp_path / "data", command="demo")
    demo.start()
    try:
        with httpx.Client(base_url=demo.url, timeout=10) as client:
            counts: list[int] = []
            for _ in range(3):
                counts.append(client.get("/v1/boards/arena/count").json()["count"])
                time.sleep(0.5)
            assert counts[-1] > counts[0] > 0  # the players keep submitting
            guide = demo.log.read_text()
            assert f"ranked demo is running at {demo.url}" in guide
            key = guide.split("Authorization: Bearer ")[1].split("'")[0]
            auth = {"Authorization": f"Bearer {key}"}
            listed = {b["board"] for b in client.get("/v1/boards", headers=auth).json()["boards"]}
            assert listed == {"arena", "daily-runs", "speedrun"}
            for name in listed:  # readable without a key: the demo boards have public reads
                assert client.get(f"/v1/boards/{name}/top?limit=3").json()["entries"]
            mine = client.post(
                "/v1/boards/arena/scores",
                json={"member": "you", "score": 9999},
                headers=auth,
            )
            assert mine.status_code == 200 and mine.json()["rank"] >= 1
            assert client.get("/v1/boards/arena/members/you").json()["score"] == 9999
            # the live page: its address in the guide, the page, and the players' writes live
            assert f"{demo.url}/boards/arena" in guide
            assert client.get("/boards/arena").status_code == 200
            live = demo.url.replace("http://", "ws://") + "/v1/boards/arena/live"
            with connect(live, proxy=None, open_timeout=10) as ws:
                assert json.loads(ws.recv(timeout=10))["type"] == "snapshot"
                assert json.loads(ws.recv(timeout=10))["type"] == "update"
    finally:
        assert demo.stop() == 0
    assert "ranked serve stopped" in demo.tail_log()
