"""Submissions: operators, results, batches, fan-out, bad input (on every backend)."""

from __future__ import annotations

import math

import pytest

from ranked.errors import InvalidScoreError, OutOfRangeError
from ranked.leaderboard import Leaderboard, submit_to_boards_nonatomic

from .conftest import Env, assert_refused


def test_first_submission_reports_new_member(env: Env) -> None:
    board = Leaderboard(env.backend, "arena")
    result = board.submit("alice", 100)
    assert (result.member, result.score, result.rank) == ("alice", 100.0, 1)
    assert result.previous_score is None and result.previous_rank is None
    assert result.changed and result.window == "all"
    assert set(result.windows) == {"all"}


def test_best_keeps_the_better_score(env: Env) -> None:
    board = Leaderboard(env.backend, "arena")
    board.submit("bob", 50)
    board.submit("alice", 100)
    worse = board.submit("alice", 80)
    assert (worse.score, worse.previous_score, worse.changed) == (100.0, 100.0, False)
    better = board.submit("bob", 120)
    assert (better.score, better.previous_score, better.changed) == (120.0, 50.0, True)
    assert (better.previous_rank, better.rank) == (2, 1)
    assert board.score("alice") == 100.0


def test_best_on_a_lower_is_better_board(env: Env) -> None:
    board = Leaderboard(env.backend, "golf", higher_is_better=False)
    board.submit("alice", 72)
    assert not board.submit("alice", 75).changed
    assert board.submit("alice", 68).score == 68.0
    board.submit("bob", 70)
    assert [entry.member for entry in board.top(2)] == ["alice", "bob"]


def test_set_incr_decr_and_per_write_override(env: Env) -> None:
    board = Leaderboard(env.backend, "xp", operator="incr")
    assert board.submit("alice", 10).score == 10.0
    assert board.submit("alice", 5).score == 15.0
    assert board.submit("alice", 3, operator="decr").score == 12.0
    assert board.submit("alice", 1, operator="set").score == 1.0
    low = board.submit("alice", 0.5, operator="best")
    assert (low.score, low.changed) == (1.0, False)
    assert board.submit("bob", 4, operator="decr").score == -4.0  # counts from 0


def test_incr_with_float_deltas_is_exact_as_float64(env: Env) -> None:
    board = Leaderboard(env.backend, "xp", operator="incr")
    board.submit("a", 0.1)
    assert board.submit("a", 0.2).score == 0.1 + 0.2


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, True, "10", None])
def test_bad_scores_are_rejected_and_change_nothing(env: Env, bad: object) -> None:
    board = Leaderboard(env.backend, "arena")
    board.submit("alice", 10)
    with pytest.raises(InvalidScoreError):
        board.submit("alice", bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidScoreError):
        board.submit_many([("bob", 1), ("carol", bad)])  # type: ignore[list-item]
    assert board.score("alice") == 10.0
    assert board.count() == 1


def test_unknown_operator_is_a_clear_error(env: Env) -> None:
    board = Leaderboard(env.backend, "arena")
    with pytest.raises(ValueError, match="operator"):
        board.submit("alice", 1, operator="max")  # type: ignore[arg-type]
    assert board.count() == 0


def test_submit_many_in_order_one_batch(env: Env) -> None:
    board = Leaderboard(env.backend, "arena", operator="incr")
    results = board.submit_many([("alice", 5), ("bob", 7), ("alice", 4)])
    assert [(r.member, r.score, r.rank) for r in results] == [
        ("alice", 5.0, 1),
        ("bob", 7.0, 1),
        ("alice", 9.0, 1),
    ]
    assert results[2].previous_rank == 2
    assert board.submit_many({}) == []
    mapped = board.submit_many({"carol": 1.5, "dave": 2})
    assert [r.member for r in mapped] == ["carol", "dave"]


def test_binary_and_unicode_members(env: Env) -> None:
    board = Leaderboard(env.backend, "arena")
    board.submit(b"\xff\x00raw", 3)
    board.submit("名前", 2)
    board.submit("has{braces}:and:colons", 1)
    assert [entry.member for entry in board.top(3)] == [
        b"\xff\x00raw",
        "名前",
        "has{braces}:and:colons",
    ]
    assert board.rank(b"\xff\x00raw") == 1
    raw = Leaderboard(env.backend, "arena", bytes_members=True)
    assert raw.top(1)[0].member == b"\xff\x00raw"
    assert raw.top(2)[1].member == "名前".encode()


def test_fan_out_is_per_board(env: Env) -> None:
    boards = [Leaderboard(env.backend, name) for name in ("global", "eu", "friday")]
    boards[1].submit("alice", 500)
    results = submit_to_boards_nonatomic(boards, "alice", 300)
    assert [r.score for r in results] == [300.0, 500.0, 300.0]
    assert [r.changed for r in results] == [True, False, True]
    assert submit_to_boards_nonatomic([], "alice", 1) == []


def test_every_window_of_one_submission_uses_one_instant(env: Env) -> None:
    board = Leaderboard(env.backend, "multi", windows=("daily", "weekly", "monthly", "all"))
    result = board.submit("alice", 10)
    assert len(result.windows) == 4
    assert result.window == board.window_id("daily")
    for window_id in result.windows:
        assert board.score("alice", window=window_id) == 10.0


@pytest.mark.parametrize("value", [2**53 + 1, -(2**53) - 1, 10**17 + 1, 10**400])
def test_an_int_a_float64_would_round_is_refused(env: Env, value: int) -> None:
    board = Leaderboard(env.backend, "exact", windows=("daily", "all"))
    board.submit("alice", 10)
    assert_refused(env, OutOfRangeError, lambda: board.submit("x", value))
    assert_refused(env, OutOfRangeError, lambda: board.submit("alice", value, operator="incr"))
    assert_refused(env, OutOfRangeError, lambda: board.submit_many([("y", 1), ("z", value)]))
    assert board.submit("big", 2**60).score == 2.0**60  # exact beyond 2**53: taken
    assert board.submit("top", 2**53).score == 2.0**53


def test_an_incr_board_at_2_53_refuses_what_it_would_lose(env: Env) -> None:
    board = Leaderboard(env.backend, "counter", operator="incr", windows=("daily", "all"))
    board.submit("a", 2**53)
    board.submit("b", 2**53 - 1)
    # Before: the +1 was lost, reported as changed=False.
    assert_refused(env, OutOfRangeError, lambda: board.submit("a", 1), match="not exact")
    assert_refused(env, OutOfRangeError, lambda: board.submit("a", 0.5))
    assert_refused(env, OutOfRangeError, lambda: board.submit("b", 2))
    assert_refused(env, OutOfRangeError, lambda: board.submit_many([("c", 1), ("b", 1), ("b", 1)]))
    assert board.score("a") == 2.0**53 and board.score("c") is None
    assert board.submit("b", 1).score == 2.0**53  # exact: counted
    assert board.submit("a", 2).score == 2.0**53 + 2
    assert board.submit("a", 4, operator="decr").score == 2.0**53 - 2
    assert board.submit("f", 0.1).score == 0.1  # floats below 2**53 stay IEEE sums
    assert board.submit("f", 0.2).score == 0.1 + 0.2


def test_results_are_immutable(env: Env) -> None:
    board = Leaderboard(env.backend, "frozen", windows=("all", "daily"))
    board.set_member_data("alice", "Alice", {"tags": ["a"]})
    result = board.submit("alice", 1)
    with pytest.raises(TypeError):
        result.windows["all"] = result.primary  # type: ignore[index]
    with pytest.raises(AttributeError):
        result.primary.rank = 7  # type: ignore[misc]
    many = board.submit_many([("bob", 2), ("carol", 3)])
    with pytest.raises(TypeError):
        del many[0].windows["all"]  # type: ignore[attr-defined]
    data = board.member_data(["alice"])["alice"]
    with pytest.raises(TypeError):
        data.metadata["tags"] = []  # type: ignore[index]
    assert dict(data.metadata) == {"tags": ["a"]}
    assert set(board.submit("alice", 5).windows) == {"all", board.window_id("daily")}
