"""A refused call changes nothing: every public method checks all its arguments before its
first write, and a write the backend refuses leaves no trace (not even a window in the
board's registry). Each case compares every key of the store, with its content and
deadline, before and after (memory: the keyspace; Redis and the cluster: KEYS, DUMP and
PEXPIRETIME on every node)."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from ranked.core.lex import LexLayout
from ranked.core.windows import Season, WindowKind, WindowPlan
from ranked.errors import (
    BoardConfigError,
    InvalidCursorError,
    InvalidScoreError,
    MemberDataError,
    OutOfRangeError,
    PageSizeError,
    UnknownRankStyleError,
    WindowError,
)
from ranked.leaderboard import Leaderboard, submit_to_boards_nonatomic

from .conftest import Env, assert_refused

NAIVE = datetime(2026, 1, 1)  # no tzinfo: refused
Case = tuple[str, type[Exception], Callable[[Leaderboard], object]]

CASES: list[Case] = [
    ("nan score", InvalidScoreError, lambda b: b.submit("x", math.nan)),
    ("str score", InvalidScoreError, lambda b: b.submit("x", "7")),  # type: ignore[arg-type]
    ("inexact int", OutOfRangeError, lambda b: b.submit("x", 2**53 + 1)),
    ("bad operator", BoardConfigError, lambda b: b.submit("x", 1, operator="max")),  # type: ignore[arg-type]
    ("tie on a plain board", BoardConfigError, lambda b: b.submit("x", 1, tie=3)),
    ("naive at", WindowError, lambda b: b.submit("x", 1, at=NAIVE)),
    ("int member", TypeError, lambda b: b.submit(7, 1)),  # type: ignore[arg-type]
    (
        "bad pair in a batch",
        InvalidScoreError,
        lambda b: b.submit_many([("y", 1), ("z", math.inf)]),
    ),
    ("submit_lex on a plain board", BoardConfigError, lambda b: b.submit_lex("x", 1)),
    ("naive expiry", WindowError, lambda b: b.expire_at(NAIVE)),
    ("unknown season", WindowError, lambda b: b.expire_after_end("summer", timedelta(days=1))),
    ("friends as one str", TypeError, lambda b: b.add_friends("a", "bob")),
    ("int friend", TypeError, lambda b: b.add_friends("a", ["bob", 3])),  # type: ignore[list-item]
    ("int friend removed", TypeError, lambda b: b.remove_friends("a", ["bob", 3])),  # type: ignore[list-item]
    ("bogus friends style", UnknownRankStyleError, lambda b: b.friends_board("a", style="bogus")),
    ("friends of a window not kept", WindowError, lambda b: b.friends_board("a", window="monthly")),
    ("metadata not a dict", MemberDataError, lambda b: b.set_member_data("a", "A", ["x"])),  # type: ignore[arg-type]
    ("display name not a str", MemberDataError, lambda b: b.set_member_data("a", 7)),  # type: ignore[arg-type]
    ("metadata with a set", MemberDataError, lambda b: b.set_metadata({"x": {1}})),
    ("metadata with NaN", MemberDataError, lambda b: b.set_metadata({"x": math.nan})),
    ("merged metadata with a set", MemberDataError, lambda b: b.merge_metadata({"x": {1}})),
    ("merged metadata not a dict", MemberDataError, lambda b: b.merge_metadata(["x"])),  # type: ignore[arg-type]
    ("bogus rank style", UnknownRankStyleError, lambda b: b.rank("a", style="bogus")),
    ("top 0", PageSizeError, lambda b: b.top(0)),
    ("bad cursor", InvalidCursorError, lambda b: b.page("not-a-cursor")),
    ("negative offset", PageSizeError, lambda b: b.page_at(-1, 10)),
    ("huge page", PageSizeError, lambda b: b.page_at(0, 10**6)),
    ("negative around", PageSizeError, lambda b: b.around("a", -1, 2)),
    ("nan bound", InvalidScoreError, lambda b: b.count_between(math.nan, 1)),
    ("too many members", PageSizeError, lambda b: b.ranks_of(["m"] * 5000)),
    ("too much member data", PageSizeError, lambda b: b.member_data(["m"] * 5000)),
]


def seeded(env: Env) -> Leaderboard:
    plan = WindowPlan(
        kinds=(WindowKind.ALL_TIME, WindowKind.DAILY),
        seasons=(
            Season(
                "now",
                datetime.now().astimezone() - timedelta(days=1),
                datetime.now().astimezone() + timedelta(days=9),
            ),
        ),
    )
    board = Leaderboard(env.backend, "guarded", windows=plan, operator="incr")
    board.submit_many([("a", 3), ("b", 5), ("c", 1)])
    board.add_friends("a", ["b"])
    board.set_member_data("a", "Ann", {"k": 1})
    board.set_metadata({"title": "t"})
    board.friends_board("a")
    return board


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_every_refusal_changes_nothing(env: Env, case: Case) -> None:
    board = seeded(env)
    _, error, call = case
    assert_refused(env, error, lambda: call(board))


def test_a_submission_the_backend_refuses_registers_no_window(env: Env) -> None:
    # A fresh board object has not registered its window yet. Before, it wrote the
    # registry first, then the script refused the score: the registry stayed.
    timed = Leaderboard(env.backend, "budget", tie_break="time", operator="incr")
    assert_refused(env, OutOfRangeError, lambda: timed.submit("a", 5_000_000))
    assert_refused(env, OutOfRangeError, lambda: timed.submit_many([("b", 1), ("a", 5_000_000)]))
    assert env.all_keys() == set()
    counter = Leaderboard(env.backend, "counter", operator="incr")
    counter.submit("a", 2**53)
    fresh = Leaderboard(env.backend, "counter", operator="incr", windows=("all", "daily"))
    assert_refused(env, OutOfRangeError, lambda: fresh.submit("a", 1))


def test_fan_out_checks_every_board_before_writing(env: Env) -> None:
    plain = Leaderboard(env.backend, "plain")
    timed = Leaderboard(env.backend, "timed", tie_break="time")
    plain.submit("seed", 1)
    # Before: the plain board took 5_000_000, then the time tie-break board refused it.
    call = lambda: submit_to_boards_nonatomic([plain, timed], "a", 5_000_000)  # noqa: E731
    assert_refused(env, OutOfRangeError, call)
    assert [r.score for r in submit_to_boards_nonatomic([plain, timed], "a", 7)] == [7.0, 7]


def test_lexicographic_refusals_change_nothing(env: Env) -> None:
    board = Leaderboard(env.backend, "lexr", tie_break=LexLayout(descending=(True, False)))
    board.submit_lex("a", (1, 2))
    for error, call in [
        (BoardConfigError, lambda: board.submit("a", 1)),
        (BoardConfigError, lambda: board.submit_lex("a", (1, 2), operator="incr")),
        (OutOfRangeError, lambda: board.submit_lex("a", (2**70, 1))),
        (BoardConfigError, lambda: board.rank("a", style="dense")),
        (InvalidScoreError, lambda: board.between(math.nan, 2)),
    ]:
        assert_refused(env, error, call)
