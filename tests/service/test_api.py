"""The HTTP API against a real ``ranked serve`` (embedded default; Redis + PostgreSQL):
the contract's fixed points, every operation, keys and scopes, problems for bad input
(and nothing changed by a refused call), and restarts."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from .conftest import Api


def test_the_fixed_points(api: Api) -> None:
    assert api.call("PUT", "/v1/boards/fixed", json={}).status_code in (200, 201)
    answer = api.call(
        "POST", "/v1/boards/fixed/scores", scope="write", json={"member": "alice", "score": 300}
    )
    assert answer.status_code == 200
    assert answer.json()["rank"] == 1 and answer.json()["score"] == 300
    api.call("POST", "/v1/boards/fixed/scores", scope="write", json={"member": "bob", "score": 500})
    got = api.call("GET", "/v1/boards/fixed/members/alice", scope="read").json()
    assert (got["member"], got["score"], got["rank"]) == ("alice", 300, 2)
    assert api.call("GET", "/v1/boards/fixed/members/nobody", scope="read").status_code == 404
    top = api.call("GET", "/v1/boards/fixed/top?limit=1", scope="read").json()
    assert top["entries"] == [{"member": "bob", "score": 500, "rank": 1}]
    for path in ("/healthz", "/readyz", "/openapi.json", "/metrics", "/docs"):
        assert api.call("GET", path, scope=None).status_code == 200, path


def test_put_creates_then_changes_only_what_may_change(api: Api) -> None:
    board = api.board(operator="incr")
    same = api.call("PUT", f"/v1/boards/{board}", json={"operator": "incr"})
    assert same.status_code == 200
    changed = api.call("PUT", f"/v1/boards/{board}", json={"operator": "incr", "max_page_size": 5})
    assert changed.status_code == 200 and changed.json()["settings"]["max_page_size"] == 5
    refused = api.call("PUT", f"/v1/boards/{board}", json={"operator": "incr", "order": "asc"})
    assert refused.status_code == 409
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["field"] == "order"
    assert api.call("GET", f"/v1/boards/{board}").json()["settings"]["order"] == "desc"
    names = [b["board"] for b in api.call("GET", "/v1/boards", scope="read").json()["boards"]]
    assert board in names


def test_keys_and_scopes(api: Api) -> None:
    board = api.board()
    path = f"/v1/boards/{board}/scores"
    body = {"member": "m", "score": 1}
    missing = api.call("POST", path, scope=None, json=body)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    bad = api.client.post(path, json=body, headers={"Authorization": "Bearer rk_nope"})
    assert bad.status_code == 401
    assert api.call("POST", path, scope="read", json=body).status_code == 403
    assert api.call("PUT", f"/v1/boards/{board}", scope="write", json={}).status_code == 403
    assert api.call("POST", path, scope="write", json=body).status_code == 200
    assert api.call("GET", f"/v1/boards/{board}/top", scope=None).status_code == 401
    # a board open to anonymous reads: reads without a key, writes still need one
    public = api.board(public_reads=True)
    assert api.call("GET", f"/v1/boards/{public}/top", scope=None).status_code == 200
    assert api.call("POST", f"/v1/boards/{public}/scores", scope=None, json=body).status_code == 401


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        (b'{"member": "m", "score": ', 400, None),
        (b"[1, 2]", 422, None),
        (b'{"member": "m", "score": "high"}', 422, "$.score"),
        (b'{"member": "m", "score": NaN}', 400, None),
        (b'{"member": "m", "score": 1e999}', 422, "$.score"),
        (b'{"member": "", "score": 1}', 422, "$.member"),
        (b'{"member": "' + b"x" * 201 + b'", "score": 1}', 422, "$.member"),
        (b'{"member": "a\\u0000b", "score": 1}', 422, "$.member"),
        (b'{"member": "m", "score": 1, "extra": 1}', 422, "$.extra"),
        (b'{"score": 1}', 422, "$.member"),
        (b'{"member": "m", "score": 1, "operator": "max"}', 422, "$.operator"),
    ],
)
def test_a_bad_submission_is_a_problem_and_changes_nothing(
    api: Api, body: bytes, status: int, field: str | None
) -> None:
    board = "bad-input"
    api.call("PUT", f"/v1/boards/{board}", json={})
    before = api.call("GET", f"/v1/boards/{board}").json()["members"]
    answer = api.call(
        "POST",
        f"/v1/boards/{board}/scores",
        scope="write",
        content=body,
        headers={**api.headers("write"), "content-type": "application/json"},
    )
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    problem = answer.json()
    assert problem["status"] == status and problem["detail"]
    assert problem.get("field") == field
    assert api.call("GET", f"/v1/boards/{board}").json()["members"] == before


def test_bad_reads_are_problems(api: Api) -> None:
    board = api.board(max_page_size=10)
    for path, status, field in [
        ("/v1/boards/nothing-here/top", 404, "board"),
        (f"/v1/boards/{board}/top?limit=11", 422, "limit"),
        (f"/v1/boards/{board}/top?limit=0", 422, "$.limit"),
        (f"/v1/boards/{board}/top?limit=ten", 422, "$.limit"),
        (f"/v1/boards/{board}/top?colour=red", 422, "$.colour"),
        (f"/v1/boards/{board}/entries?cursor=not-a-cursor", 422, "cursor"),
        (f"/v1/boards/{board}/top?style=sideways", 422, "$.style"),
        (f"/v1/boards/{board}/members/%00", 422, "member"),
        (f"/v1/boards/{board}/members/a%7Fb", 422, "member"),
        (f"/v1/boards/{board}/members/a%C2%85b", 422, "member"),
        (f"/v1/boards/{board}/members/%FF", 400, "member"),  # a route's parameter, not UTF-8
        ("/v1/boards/%FF/nowhere", 404, None),  # no route has that shape: nothing decoded
        ("/v1/nowhere", 404, None),
    ]:
        answer = api.call("GET", path, scope="read")
        assert answer.status_code == status, (path, answer.text)
        assert answer.json().get("field") == field, path
    assert api.call("DELETE", "/v1/boards", scope="admin").status_code == 405


def test_batch_many_boards_pages_and_reads(api: Api) -> None:
    board = api.board(max_page_size=50)
    other = api.board(operator="incr")
    scores = [{"member": f"p{i:03d}", "score": i} for i in range(120)]
    for start in range(0, 120, 40):
        answer = api.call(
            "POST",
            f"/v1/boards/{board}/scores/batch",
            scope="write",
            json={"scores": scores[start : start + 40]},
        )
        assert answer.status_code == 200 and len(answer.json()["results"]) == 40
    both = api.call(
        "POST",
        "/v1/scores",
        scope="write",
        json={"member": "p119", "score": 7, "boards": [board, other]},
    ).json()
    assert both["results"][other]["score"] == 7 and both["results"][board]["rank"] == 1
    seen: list[str] = []
    cursor = None
    while True:
        query = "limit=50" + (f"&cursor={cursor}" if cursor else "")
        page = api.call("GET", f"/v1/boards/{board}/entries?{query}", scope="read").json()
        seen += [e["member"] for e in page["entries"]]
        cursor = page["next"]
        if cursor is None:
            break
    assert seen == [f"p{i:03d}" for i in reversed(range(120))]
    around = api.call(
        "GET", f"/v1/boards/{board}/members/p060/around?before=1&after=1", scope="read"
    ).json()
    assert [e["member"] for e in around["entries"]] == ["p061", "p060", "p059"]
    ranks = api.call(
        "POST", f"/v1/boards/{board}/ranks", scope="read", json={"members": ["p119", "nobody"]}
    ).json()["ranks"]
    assert ranks == [
        {"member": "p119", "score": 119, "rank": 1},
        {"member": "nobody", "score": None, "rank": None},
    ]
    in_range = api.call("GET", f"/v1/boards/{board}/range?min=10&max=12", scope="read").json()
    assert [e["member"] for e in in_range["entries"]] == ["p012", "p011", "p010"]
    count = api.call("GET", f"/v1/boards/{board}/count?min=100", scope="read").json()
    assert count["count"] == 20
    member = api.call("GET", f"/v1/boards/{board}/members/p000", scope="read").json()
    assert member["rank"] == 120 and "percentile" not in member
    path = f"/v1/boards/{board}/members/p060?percentile=true"
    assert api.call("GET", path, scope="read").json()["percentile"] == 50.0
    assert api.call("GET", f"/v1/boards/{board}/windows", scope="read").json()["current"] == "all"


def test_idempotency_key(api: Api) -> None:
    board = api.board(operator="incr")
    body = {"member": "m", "score": 5, "key": "purchase-1"}
    first = api.call("POST", f"/v1/boards/{board}/scores", scope="write", json=body).json()
    again = api.call("POST", f"/v1/boards/{board}/scores", scope="write", json=body).json()
    assert first == again and first["score"] == 5
    assert api.call("GET", f"/v1/boards/{board}/members/m").json()["score"] == 5


def test_moderation_is_audited_and_history_and_as_of(api: Api) -> None:
    board = api.board()
    api.call(
        "POST", f"/v1/boards/{board}/scores", scope="write", json={"member": "cheat", "score": 9}
    )
    time.sleep(0.02)
    before = datetime.now(UTC)
    time.sleep(0.02)
    api.call(
        "POST", f"/v1/boards/{board}/scores", scope="write", json={"member": "fair", "score": 5}
    )
    assert api.call("DELETE", f"/v1/boards/{board}/members/cheat", scope="write").status_code == 403
    assert api.call("DELETE", f"/v1/boards/{board}/members/cheat").status_code == 422  # no reason
    removed = api.call("DELETE", f"/v1/boards/{board}/members/cheat?reason=speed%20hack")
    assert removed.json() == {"removed": True}
    history = api.call("GET", f"/v1/boards/{board}/members/cheat/history").json()["history"]
    assert [h["operation"] for h in history] == ["best", "remove"]
    assert history[1]["reason"] == "speed hack" and history[1]["actor"].startswith("key:")
    at = before.isoformat()
    past = api.call("GET", f"/v1/boards/{board}/as-of", params={"at": at}).json()
    assert [e["member"] for e in past["entries"]] == ["cheat"]
    assert api.call("POST", f"/v1/boards/{board}/clear", json={}).status_code == 422
    cleared = api.call("POST", f"/v1/boards/{board}/clear", json={"reason": "season reset"})
    assert cleared.status_code == 200
    assert api.call("GET", f"/v1/boards/{board}").json()["members"] == 0


def test_friends_data_rebuild_snapshot(api: Api) -> None:
    board = api.board()
    for name, score in [("a", 3), ("b", 2), ("c", 1)]:
        api.call(
            "POST",
            f"/v1/boards/{board}/scores",
            scope="write",
            json={"member": name, "score": score},
        )
    put = api.call(
        "PUT", f"/v1/boards/{board}/members/a/friends", scope="write", json={"friends": ["c"]}
    )
    assert put.json() == {"member": "a", "friends": ["c"]}
    friends = api.call("GET", f"/v1/boards/{board}/members/a/friends/board", scope="read").json()
    assert [e["member"] for e in friends["entries"]] == ["a", "c"]
    data = api.call(
        "PUT",
        f"/v1/boards/{board}/members/a/data",
        scope="write",
        json={"name": "Ann", "metadata": {"level": 3}},
    )
    assert data.status_code == 200
    got = api.call("GET", f"/v1/boards/{board}/members/a/data", scope="read").json()
    assert got == {"name": "Ann", "metadata": {"level": 3}}
    assert api.call("GET", f"/v1/boards/{board}/members/b/data", scope="read").status_code == 404
    assert api.call("POST", f"/v1/boards/{board}/rebuild").status_code == 200
    assert api.call("GET", f"/v1/boards/{board}/members/b").json()["rank"] == 2
    one = api.call("POST", f"/v1/boards/{board}/rebuild?window=all")
    assert one.json() == {"replayed": 0, "window": "all", "members": 3}
    assert api.call("GET", f"/v1/boards/{board}/members/b").json()["rank"] == 2
    bad = api.call("POST", f"/v1/boards/{board}/rebuild?window=w2026-W01")
    assert bad.status_code == 404, bad.text  # a window the board does not keep, as reads
    snap = api.call("POST", f"/v1/boards/{board}/snapshot")
    assert snap.status_code == 200


@pytest.mark.parametrize("kill", [False, True], ids=["sigterm", "sigkill"])
def test_restart_keeps_boards_scores_and_keys(api: Api, kill: bool) -> None:
    board = api.board(operator="incr", windows=["daily", "all"], max_page_size=20)
    for i in range(30):
        api.call(
            "POST",
            f"/v1/boards/{board}/scores",
            scope="write",
            json={"member": f"m{i % 7}", "score": i},
        )
    before = api.call("GET", f"/v1/boards/{board}/top?limit=7", scope="read").json()
    api.restart(kill=kill)
    assert api.call("GET", f"/v1/boards/{board}/top?limit=7", scope="read").json() == before
    settings = api.call("GET", f"/v1/boards/{board}", scope="read").json()["settings"]
    assert settings["windows"] == ["daily", "all"] and settings["max_page_size"] == 20
    assert (
        api.call(
            "POST", f"/v1/boards/{board}/scores", scope="write", json={"member": "m0", "score": 1}
        ).status_code
        == 200
    )


def test_metrics_count_requests_and_the_journal(api: Api) -> None:
    board = api.board()
    api.call("POST", f"/v1/boards/{board}/scores", scope="write", json={"member": "m", "score": 1})
    text = api.call("GET", "/metrics", scope=None).text
    assert (
        'ranked_http_requests_total{method="POST",route="/v1/boards/{board}/scores",status="200"}'
        in text
    )
    assert "ranked_http_request_seconds_bucket" in text
    assert "ranked_journal_commit_seconds_bucket" in text
    assert "ranked_journal_lane_events_total" in text
    api.call("POST", f"/v1/boards/{board}/scores", scope="write", json={"member": "n", "score": 2})
    text = api.call("GET", "/metrics", scope=None).text
    if api.deployment == "embedded":  # the second plain submission goes through the lane
        lane = [line for line in text.splitlines() if line.startswith("ranked_journal_lane_ev")]
        assert lane and float(lane[0].split()[-1]) >= 1
    assert f'ranked_submissions_total{{board="{board}"}} 2.0' in text
    assert f'ranked_board_members{{board="{board}"}} 2.0' in text
