"""``GET /v1/boards/{board}/histogram`` against a real ``ranked serve`` (embedded default;
Redis + PostgreSQL): equal-width buckets from the window's lowest score to its highest,
counts that add up, the empty and the flat board, an ``asc`` board, an archived-style
window argument, keys, and problems for bad parameters."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Api


def _load(api: Api, board: str, scores: dict[str, float]) -> None:
    items = [{"member": m, "score": s} for m, s in scores.items()]
    answer = api.call("POST", f"/v1/boards/{board}/scores/batch", json={"scores": items})
    assert answer.status_code == 200, answer.text


def _histogram(api: Api, board: str, query: str = "", scope: str | None = "read") -> Any:
    answer = api.call("GET", f"/v1/boards/{board}/histogram{query}", scope=scope)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_equal_width_buckets_that_add_up(api: Api) -> None:
    board = api.board()
    _load(api, board, {f"p{i}": float(i) for i in range(1, 101)})
    found = _histogram(api, board, "?buckets=4")
    assert found == {
        "window": "all",
        "members": 100,
        "min": 1.0,
        "max": 100.0,
        "buckets": [
            {"low": 1.0, "high": 25.75, "count": 25},
            {"low": 25.75, "high": 50.5, "count": 25},
            {"low": 50.5, "high": 75.25, "count": 25},
            {"low": 75.25, "high": 100.0, "count": 25},
        ],
    }
    default = _histogram(api, board)
    assert len(default["buckets"]) == 20
    assert [b["count"] for b in default["buckets"]] == [5] * 20
    assert default["buckets"][0]["low"] == 1.0 and default["buckets"][-1]["high"] == 100.0
    one = _histogram(api, board, "?buckets=1&window=all")
    assert one["buckets"] == [{"low": 1.0, "high": 100.0, "count": 100}]


def test_skewed_scores_and_an_asc_board(api: Api) -> None:
    for order in ("desc", "asc"):
        board = api.board(order=order)
        _load(api, board, {"a": -10.0, "b": 0.0, "c": 0.5, "d": 1.0, "e": 90.0})
        found = _histogram(api, board, "?buckets=10")
        assert (found["min"], found["max"], found["members"]) == (-10.0, 90.0, 5)
        assert [b["count"] for b in found["buckets"]] == [1, 3, 0, 0, 0, 0, 0, 0, 0, 1]
        lows = [b["low"] for b in found["buckets"]]
        assert lows == pytest.approx([-10.0 + 10 * i for i in range(10)])


def test_empty_and_flat_boards(api: Api) -> None:
    board = api.board()
    assert _histogram(api, board) == {
        "window": "all",
        "members": 0,
        "min": None,
        "max": None,
        "buckets": [],
    }
    _load(api, board, {"a": 7.0, "b": 7.0, "c": 7.0})
    assert _histogram(api, board, "?buckets=50")["buckets"] == [
        {"low": 7.0, "high": 7.0, "count": 3}
    ]


def test_huge_scores_do_not_overflow(api: Api) -> None:
    board = api.board()
    _load(api, board, {"low": -1.5e308, "high": 1.5e308, "mid": 0.0})
    found = _histogram(api, board, "?buckets=3")
    assert [b["count"] for b in found["buckets"]] == [1, 1, 1]
    assert found["buckets"][-1]["high"] == 1.5e308


def test_keys_and_bad_parameters(api: Api) -> None:
    private = api.board()
    public = api.board(public_reads=True)
    _load(api, public, {"a": 1.0})
    assert api.call("GET", f"/v1/boards/{private}/histogram", scope=None).status_code == 401
    assert _histogram(api, public, scope=None)["members"] == 1
    for query, status, field in [
        ("?buckets=0", 422, "$.buckets"),
        ("?buckets=101", 422, "$.buckets"),
        ("?buckets=many", 422, "$.buckets"),
        ("?colour=red", 422, "$.colour"),
        ("?window=yesterday", 422, "$.window"),
    ]:
        answer = api.call("GET", f"/v1/boards/{public}/histogram{query}", scope="read")
        assert answer.status_code == status, (query, answer.text)
        assert answer.json().get("field") == field, query
    assert api.call("GET", "/v1/boards/nothing-here/histogram", scope="read").status_code == 404
