"""Time tie-break boards: the packed tables of seeds 003 and 004, budgets, decoding."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ranked.backends.generic import SCORES
from ranked.core.keys import BoardKeys
from ranked.core.scores import TimeTiebreak, seed003_layout, seed004_layout
from ranked.errors import OutOfRangeError
from ranked.leaderboard import BoardConfigError, Leaderboard
from ranked.leaderboard._requests import Operator, Target

from .conftest import Env

ENDS_AT = datetime(2026, 12, 31, tzinfo=UTC)


def stored(env: Env, board: str, members: list[str]) -> list[float | None]:
    keys = BoardKeys(board)
    target = Target(keys.window("all"), keys.dense("all"), keys.dense_counts("all"))
    found: list[float | None] = env.backend.bind(SCORES)(target.key, [m.encode() for m in members])
    return found


def test_seed_003_table(env: Env) -> None:
    board = Leaderboard(env.backend, "duel", tie_break=seed003_layout(ENDS_AT), operator="set")
    rows = [("alice", 150, 1000), ("bob", 150, 500), ("carol", 100, 2000), ("dan", 100, 3600)]
    for member, xp, remaining in rows:
        board.submit(member, xp, at=ENDS_AT - timedelta(seconds=remaining))
    # The seed prints Carol as 419,432,304: an arithmetic slip for 100 * 2**22 + 2000.
    assert stored(env, "duel", ["alice", "bob", "carol", "dan"]) == [
        629_146_600,
        629_146_100,
        419_432_400,
        419_434_000,
    ]
    assert [(e.member, e.score, e.rank) for e in board.top(4)] == [
        ("alice", 150, 1),
        ("bob", 150, 2),
        ("dan", 100, 3),
        ("carol", 100, 4),
    ]
    got = board.score_at("carol")
    assert got is not None and got.score == 100
    assert got.at == ENDS_AT - timedelta(seconds=2000)


def test_seed_004_table(env: Env) -> None:
    board = Leaderboard(env.backend, "gifts", tie_break=seed004_layout(), operator="set")
    board.submit("A", 100, at=1000)
    board.submit("B", 100, at=2000)
    board.submit("C", 101, at=3000)
    expected = [(100 << 32) | (0x7FFFFFFF - 1000), (100 << 32) | (0x7FFFFFFF - 2000)]
    expected.append((101 << 32) | (0x7FFFFFFF - 3000))
    assert stored(env, "gifts", ["A", "B", "C"]) == expected
    assert [e.member for e in board.top(3)] == ["C", "A", "B"]
    # X climbs 90 -> 100 at t=5000; Y reached 100 at t=2000 and stays ahead.
    board.submit("X", 90, at=1000)
    board.submit("X", 100, at=5000)
    board.submit("Y", 100, at=2000)
    assert stored(env, "gifts", ["X", "Y"]) == [
        (100 << 32) | (0x7FFFFFFF - 5000),
        (100 << 32) | (0x7FFFFFFF - 2000),
    ]
    order = [e.member for e in board.top(10)]
    assert order.index("Y") < order.index("X")
    decoded = board.score_at("C")
    assert decoded is not None
    assert (decoded.score, decoded.at) == (101, datetime.fromtimestamp(3000, UTC))


def test_budget_errors_change_nothing(env: Env) -> None:
    layout = seed004_layout()
    board = Leaderboard(env.backend, "gifts", tie_break=layout, operator="set")
    board.submit("A", 5, at=1000)
    with pytest.raises(OutOfRangeError):
        board.submit("A", layout.score_max + 1, at=1000)
    with pytest.raises(OutOfRangeError):  # 2038-01-19T03:14:08Z is past the budget, no wrap
        board.submit("A", 6, at=2**31)
    with pytest.raises(OutOfRangeError):
        board.submit("A", 6.5, at=1000)
    with pytest.raises(OutOfRangeError):  # incr past the score bits: checked by the backend
        board.submit("A", layout.score_max, operator="incr", at=1000)
    assert board.score("A") == 5
    assert board.submit("A", layout.score_max - 5, operator="incr", at=2000).score == (
        layout.score_max
    )


def test_incr_restamps_the_time(env: Env) -> None:
    board = Leaderboard(env.backend, "timed", tie_break="time", operator="incr")
    t0 = 1_790_000_000
    board.submit("early", 10, at=t0)
    board.submit("late", 4, at=t0 + 5)
    board.submit("late", 6, at=t0 + 10)  # reaches 10 after "early" did
    assert [(e.member, e.score) for e in board.top(2)] == [("early", 10), ("late", 10)]
    got = board.score_at("late")
    assert got is not None and got.at == datetime.fromtimestamp(t0 + 10, UTC)


def test_best_keeps_the_first_time_a_score_was_reached(env: Env) -> None:
    board = Leaderboard(env.backend, "timed", tie_break="time")
    t0 = 1_790_000_000
    board.submit("a", 50, at=t0)
    again = board.submit("a", 50, at=t0 + 100)
    assert not again.changed
    got = board.score_at("a")
    assert got is not None and got.at == datetime.fromtimestamp(t0, UTC)


def test_lower_is_better_time_board(env: Env) -> None:
    board = Leaderboard(env.backend, "speedrun", higher_is_better=False, tie_break="time")
    t0 = 1_790_000_000
    board.submit("slow", 95, at=t0)
    board.submit("tie_late", 90, at=t0 + 20)
    board.submit("tie_early", 90, at=t0 + 10)
    assert [e.member for e in board.top(3)] == ["tie_early", "tie_late", "slow"]
    assert not board.submit("slow", 99, at=t0 + 30).changed


def test_score_ranges_use_plain_scores(env: Env) -> None:
    board = Leaderboard(env.backend, "timed", tie_break="time", operator="set")
    t0 = 1_790_000_000
    board.submit_many([("a", 10), ("b", 20), ("c", 20), ("d", 30)], at=t0)
    assert board.count_between(20, 20) == 2
    assert board.count_between(11, 29.5) == 2
    assert board.count_between(-5, 1e30) == 4
    assert [e.member for e in board.between(15, 30)] == ["d", "c", "b"]
    assert board.percentile("b") == 25.0
    assert board.percentile("d") == 75.0


def test_layout_direction_must_match_the_board(env: Env) -> None:
    with pytest.raises(BoardConfigError):
        Leaderboard(env.backend, "x", higher_is_better=False, tie_break=seed004_layout())
    sub_ms = TimeTiebreak(20, 30, unit=timedelta(microseconds=1500))
    with pytest.raises(BoardConfigError):
        Leaderboard(env.backend, "x", tie_break=sub_ms)
    with pytest.raises(BoardConfigError):
        Leaderboard(env.backend, "x").score_at("a")


@pytest.mark.parametrize("operator", ["incr", "decr"])
def test_adding_zero_keeps_the_achieved_at_time(env: Env, operator: Operator) -> None:
    board = Leaderboard(env.backend, "race", tie_break="time", operator="incr")
    start = datetime(2026, 5, 1, 12, tzinfo=UTC)
    board.submit("early", 50, at=start)
    board.submit("late", 50, at=start + timedelta(minutes=5))
    again = board.submit("early", 0, operator=operator, at=start + timedelta(minutes=9))
    assert (again.score, again.changed, again.rank, again.previous_rank) == (50, False, 1, 1)
    assert [e.member for e in board.top(2)] == ["early", "late"]  # before: demoted to 2nd
    found = board.score_at("early")
    assert found is not None and found.at == start
