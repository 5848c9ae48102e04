"""The write guard through a real ``ranked serve`` (embedded, and Redis + PostgreSQL):
guard settings, signed client submissions, the answers of each verdict (429 with the IETF
headers, 202 with the pending id), moderation, and settings kept across a restart."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

from ranked.guard import sign

from .conftest import Api

KEY = "30313233343536373839616263646566"  # hex of a 16-byte key
RAW = bytes.fromhex(KEY)


def _signed(board: str, member: str, score: float, nonce: str, **extra: Any) -> dict[str, Any]:
    now = int(time.time() * 1000)
    body = {"member": member, "score": score, "client_time": now, "nonce": nonce}
    body["signature"] = sign(RAW, board, member, score, now, nonce)
    return {**body, **extra}


def _guarded(api: Api, **settings: Any) -> str:
    board = api.board()
    answer = api.call("PUT", f"/v1/boards/{board}/guard", json=settings)
    assert answer.status_code == 201, answer.text  # the board had no guard
    return board


def test_guard_settings_round_trip(api: Api) -> None:
    board = api.board()
    path = f"/v1/boards/{board}/guard"
    assert api.call("GET", path).status_code == 404
    settings = {
        "secrets": [{"key": KEY}],
        "player_limit": {"limit": 5, "window": 60},
        "pending_rank": 10,
    }
    put = api.call("PUT", path, json=settings)
    assert put.status_code == 201, put.text  # created
    assert api.call("PUT", path, json=settings).status_code == 200  # replaced
    shown = api.call("GET", path).json()["settings"]
    assert shown["pending_rank"] == 10 and shown["player_limit"]["limit"] == 5
    assert KEY not in api.call("GET", path).text  # secrets are shown by id only
    assert api.call("PUT", path, scope="write", json=settings).status_code == 403
    assert api.call("PUT", path, json={"min_score": 5, "max_score": 1}).status_code == 422
    assert api.call("DELETE", path).json() == {"changed": True}
    assert api.call("GET", path).status_code == 404
    gone = api.call("DELETE", path)  # as GET, and as a board's notifications
    assert gone.status_code == 404 and gone.json()["type"].endswith("no-guard")


def test_read_keys_submit_only_to_guarded_boards(api: Api) -> None:
    plain = api.board()
    body = {"member": "m", "score": 1}
    assert (
        api.call("POST", f"/v1/boards/{plain}/scores", scope="read", json=body).status_code == 403
    )
    board = _guarded(api)
    answer = api.call("POST", f"/v1/boards/{board}/scores", scope="read", json=body)
    assert answer.status_code == 200 and answer.json()["rank"] == 1
    trusted = _guarded(api, trusted_only=True)
    refused = api.call("POST", f"/v1/boards/{trusted}/scores", scope="read", json=body)
    assert refused.status_code == 403 and refused.json()["type"].endswith("untrusted")
    assert api.call("POST", f"/v1/boards/{trusted}/scores", scope="write", json=body).is_success


def test_signed_submissions_and_replay(api: Api) -> None:
    board = _guarded(api, secrets=[{"key": KEY}])
    path = f"/v1/boards/{board}/scores"
    unsigned = api.call("POST", path, scope="read", json={"member": "a", "score": 5})
    assert unsigned.status_code == 422 and unsigned.json()["type"].endswith("missing-signature")
    body = _signed(board, "a", 5, "nonce-0001")
    assert api.call("POST", path, scope="read", json=body).status_code == 200
    replay = api.call("POST", path, scope="read", json=body)
    assert replay.status_code == 409 and replay.json()["type"].endswith("replayed-nonce")
    forged = {**_signed(board, "a", 5, "nonce-0002"), "score": 50}
    assert api.call("POST", path, scope="read", json=forged).status_code == 403
    api.restart()
    assert api.call("POST", path, scope="read", json=body).status_code == 409  # after a restart


def test_rate_limit_answers_429_with_headers(api: Api) -> None:
    board = _guarded(api, player_limit={"limit": 2, "window": 60})
    path = f"/v1/boards/{board}/scores"
    first = api.call("POST", path, scope="read", json={"member": "a", "score": 1})
    assert first.status_code == 200
    assert "ratelimit" in first.headers and "ratelimit-policy" in first.headers
    api.call("POST", path, scope="read", json={"member": "a", "score": 2})
    refused = api.call("POST", path, scope="read", json={"member": "a", "score": 3})
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1
    assert "ratelimit" in refused.headers and refused.json()["type"].endswith("rate-limited")
    batch = api.call("POST", f"{path}/batch", json={"scores": [{"member": "x", "score": 1}]})
    assert batch.status_code == 409


def test_pending_promote_reject_ban_purge_audit(api: Api) -> None:
    board = _guarded(api, pending_rank=1)
    base = f"/v1/boards/{board}"
    assert api.call("POST", f"{base}/scores", json={"member": "x", "score": 5}).is_success
    held = api.call(
        "POST", f"{base}/scores", scope="read", json={"member": "a", "score": 9, "replay": [1, 2]}
    )
    assert held.status_code == 202 and held.json()["reason"] == "rank-tier"
    pending_id = held.json()["pending"]
    (entry,) = api.call("GET", f"{base}/pending").json()["pending"]
    assert entry["id"] == pending_id and entry["replay"] == [1, 2]
    held_at = datetime.fromisoformat(entry["at"])  # RFC 3339 in UTC, as every time shown
    assert held_at.utcoffset() == timedelta(0)
    assert abs(held_at.timestamp() - time.time()) < 60
    promoted = api.call("POST", f"{base}/pending/{pending_id}/promote")
    assert promoted.status_code == 200 and promoted.json()["rank"] == 1
    assert api.call("POST", f"{base}/pending/{pending_id}/promote").status_code == 404
    other = api.call("POST", f"{base}/scores", scope="read", json={"member": "b", "score": 99})
    rejected = api.call(
        "POST", f"{base}/pending/{other.json()['pending']}/reject", json={"reason": "no"}
    )
    assert rejected.status_code == 200 and rejected.json()["member"] == "b"
    assert api.call("PUT", f"{base}/bans/a", json={"reason": "cheat"}).json() == {"changed": True}
    banned = api.call("POST", f"{base}/scores", json={"member": "a", "score": 1})
    assert banned.status_code == 403 and banned.json()["type"].endswith("banned")
    assert api.call("GET", f"{base}/bans").json() == {"members": ["a"]}
    purge = api.call("POST", f"{base}/members/a/purge", json={"reason": "cheat"})
    assert purge.json() == {"changed": True}
    assert api.call("GET", f"{base}/members/a").status_code == 404
    audit = api.call("GET", f"{base}/audit").json()["audit"]
    assert all(datetime.fromisoformat(r["at"]).utcoffset() == timedelta(0) for r in audit)
    actions = [r["action"] for r in audit]
    assert actions == [
        "accepted",
        "held",
        "promoted",
        "held",
        "dismissed",
        "banned",
        "rejected",
        "removed",
    ]
    assert api.call("DELETE", f"{base}/bans/a?reason=appeal").json() == {"changed": True}
    api.restart()
    assert api.call("GET", f"{base}/guard").status_code == 200  # kept by the journal
    assert api.call("GET", f"{base}/audit?member=a&limit=2").json()["audit"][-1]["action"] == (
        "unbanned"
    )
