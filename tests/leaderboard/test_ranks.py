"""Rank styles and tie orders, including seed 000's worked examples (every backend)."""

from __future__ import annotations

import pytest

from ranked.core.ranks import ranks
from ranked.errors import UnknownRankStyleError
from ranked.leaderboard import Leaderboard

from .conftest import Env

SCORES = {"ann": 100, "ben": 100, "cat": 90, "dan": 80}


@pytest.mark.parametrize(
    ("style", "expected"),
    [("competition", [1, 1, 3, 4]), ("dense", [1, 1, 2, 3]), ("unique", [1, 2, 3, 4])],
)
def test_rank_styles_of_seed_000(env: Env, style: str, expected: list[int]) -> None:
    board = Leaderboard(env.backend, "styles", rank_style=style)
    board.submit_many(SCORES)
    assert [entry.rank for entry in board.top(4)] == expected
    assert [board.rank(m) for m in ("ben", "ann", "cat", "dan")] == expected
    # the same through the per-call override on a board with another default
    other = Leaderboard(env.backend, "styles")
    assert [entry.rank for entry in other.top(4, style=style)] == expected
    assert ranks([100, 100, 90, 80], style) == expected


def test_member_tie_break_is_redis_order_seed_000(env: Env) -> None:
    board = Leaderboard(env.backend, "lex", operator="set")
    board.submit_many([("alice", 100), ("bob", 100), ("charlie", 100)])
    assert [entry.member for entry in board.top(3)] == ["charlie", "bob", "alice"]
    assert [board.rank(m, style="unique") for m in ("charlie", "bob", "alice")] == [1, 2, 3]
    low = Leaderboard(env.backend, "lexlow", higher_is_better=False, operator="set")
    low.submit_many([("bob", 1), ("charlie", 1), ("alice", 1)])
    assert [entry.member for entry in low.top(3)] == ["alice", "bob", "charlie"]


def test_time_tie_break_earlier_achiever_wins(env: Env) -> None:
    # Seed 000: with a time tie-break the order follows who got there first.
    board = Leaderboard(env.backend, "timed", tie_break="time")
    t0 = 1_790_000_000
    board.submit("charlie", 100, at=t0)
    board.submit("bob", 100, at=t0 + 1)
    board.submit("alice", 100, at=t0 + 2)
    assert [entry.member for entry in board.top(3)] == ["charlie", "bob", "alice"]
    assert [entry.score for entry in board.top(3)] == [100, 100, 100]
    assert [entry.rank for entry in board.top(3)] == [1, 2, 3]
    reverse = Leaderboard(env.backend, "timed2", tie_break="time")
    for offset, member in enumerate(["alice", "bob", "charlie"]):
        reverse.submit(member, 100, at=t0 + offset)
    assert [entry.member for entry in reverse.top(3)] == ["alice", "bob", "charlie"]


def test_unknown_rank_style(env: Env) -> None:
    board = Leaderboard(env.backend, "styles")
    with pytest.raises(UnknownRankStyleError):
        board.top(3, style="olympic")
    with pytest.raises(UnknownRankStyleError):
        Leaderboard(env.backend, "styles", rank_style="olympic")


def test_rank_of_absent_member_is_none(env: Env) -> None:
    board = Leaderboard(env.backend, "styles")
    board.submit("ann", 1)
    assert board.rank("nobody") is None
    assert board.entry("nobody") is None
    assert board.score("nobody") is None


def test_ranks_of_sorted_with_missing_last(env: Env) -> None:
    board = Leaderboard(env.backend, "styles", rank_style="competition")
    board.submit_many(SCORES)
    found = board.ranks_of(["dan", "zed", "ann", "ben", "yan", "cat"])
    assert [(r.member, r.rank, r.found) for r in found] == [
        ("ben", 1, True),
        ("ann", 1, True),
        ("cat", 3, True),
        ("dan", 4, True),
        ("zed", None, False),
        ("yan", None, False),
    ]
    assert found[0].score == 100.0 and found[4].score is None
    assert board.ranks_of([]) == []
    dense = board.ranks_of(["dan", "cat"], style="dense")
    assert [(r.member, r.rank) for r in dense] == [("cat", 2), ("dan", 3)]


def test_ranks_in_large_tie_groups_match_the_reference(env: Env) -> None:
    board = Leaderboard(env.backend, "big", operator="set")
    pairs = [(f"m{i:03d}", float(i % 7)) for i in range(60)]
    board.submit_many(pairs)
    ordered = sorted(pairs, key=lambda p: (p[1], p[0].encode()), reverse=True)
    for style in ("unique", "competition", "dense"):
        expected = ranks([score for _, score in ordered], style)
        got = board.page_at(0, 60, style=style).entries
        assert [(e.member, e.rank) for e in got] == [
            (m, r) for (m, _), r in zip(ordered, expected, strict=True)
        ]


@pytest.mark.parametrize("style", ["unique", "competition", "dense"])
@pytest.mark.parametrize("higher_is_better", [True, False])
def test_every_members_rank_in_tie_runs_matches_the_reference(
    env: Env, higher_is_better: bool, style: str
) -> None:
    # Tie runs at the top, in the middle and at the bottom, fractional and negative scores
    # (whose texts differ between Redis and the scripts' canonical form), and lone scores.
    values = [2.5, 2.5, 2.5, 0.1, 0.1, -7.25, 3.0, 1.0, -7.25, -7.25, 0.3, 9.75]
    pairs = [(f"p{i:02d}", value) for i, value in enumerate(values)]
    board = Leaderboard(
        env.backend, "runs", operator="set", higher_is_better=higher_is_better, rank_style=style
    )
    board.submit_many(pairs)

    def expected_ranks() -> list[tuple[str, int]]:
        ordered = sorted(pairs, key=lambda p: (p[1], p[0].encode()), reverse=higher_is_better)
        levels = ranks([score for _, score in ordered], style)
        return [(m, r) for (m, _), r in zip(ordered, levels, strict=True)]

    expected = expected_ranks()
    assert [(m, board.rank(m)) for m, _ in expected] == expected
    found = board.ranks_of([m for m, _ in reversed(expected)])
    assert [(r.member, r.rank) for r in found] == expected
    # Submissions report the ranks they leave and land on, inside and outside tie runs.
    for member, score in [("p07", 2.5), ("p00", 0.1), ("p11", -7.25), ("p05", 4.0)]:
        before = dict(expected_ranks())[member]
        pairs = [(m, score if m == member else s) for m, s in pairs]
        result = board.submit(member, score)
        assert (result.previous_rank, result.rank) == (before, dict(expected_ranks())[member])


@pytest.mark.parametrize("higher_is_better", [True, False])
def test_ranks_of_follows_ties_forming_and_breaking(env: Env, higher_is_better: bool) -> None:
    # Scores join and leave tie groups (a group of two becomes a lone score and back),
    # members are removed and trimmed: every style of ranks_of matches the reference
    # after each round, so the shortcuts taken for lone scores never go stale.
    import random

    rng = random.Random(7)
    board = Leaderboard(
        env.backend, "churn", operator="set", higher_is_better=higher_is_better, keep=40
    )
    model: dict[str, float] = {}
    names = [f"c{i:02d}" for i in range(50)]
    for _ in range(12):
        for _ in range(15):
            member = rng.choice(names)
            if rng.random() < 0.2:
                board.remove(member)
                model.pop(member, None)
            else:
                score = rng.choice([rng.randrange(8) * 0.5, rng.uniform(-1e6, 1e6)])
                board.submit(member, score)
                model[member] = score
        ordered = sorted(model.items(), key=lambda p: (p[1], p[0].encode()))
        if higher_is_better:
            ordered.reverse()
        del ordered[40:]  # keep=40 trims the worst
        model = dict(ordered)
        asked = rng.sample(names, 20)
        for style in ("unique", "competition", "dense"):
            levels = ranks([score for _, score in ordered], style)
            rank_of = {m: r for (m, _), r in zip(ordered, levels, strict=True)}
            found = board.ranks_of(asked, style=style)
            present = sorted((m for m in asked if m in rank_of), key=[m for m, _ in ordered].index)
            assert [(r.member, r.rank) for r in found] == [
                *((m, rank_of[m]) for m in present),
                *((m, None) for m in asked if m not in rank_of),
            ]
