"""Conformance: submissions. Operators, outcomes, ranks before and after, -0.0, targets, batches."""

from __future__ import annotations

import math

import pytest

from ranked.core.ranks import RankStyle

from .conftest import STYLES, Steps, fill, request, submit, target

DIRECTIONS = (True, False)


@pytest.mark.parametrize("high_first", DIRECTIONS)
def test_best_from_missing_stores_the_value(backend: Steps, high_first: bool) -> None:
    outcome = submit(backend, b"ann", 10, "best", high_first=high_first)
    assert (outcome.score, outcome.previous_score) == (10.0, None)
    assert (outcome.rank, outcome.previous_rank, outcome.changed) == (1, None, True)
    assert backend.scores(target().key, [b"ann"]) == [10.0]


def test_best_keeps_the_higher_score_when_higher_is_better(backend: Steps) -> None:
    submit(backend, b"ann", 10, "best")
    worse = submit(backend, b"ann", 5, "best")
    assert (worse.score, worse.previous_score, worse.changed) == (10.0, 10.0, False)
    same = submit(backend, b"ann", 10, "best")
    assert (same.score, same.changed) == (10.0, False)
    better = submit(backend, b"ann", 20, "best")
    assert (better.score, better.previous_score, better.changed) == (20.0, 10.0, True)
    assert backend.scores(target().key, [b"ann"]) == [20.0]


def test_best_keeps_the_lower_score_when_lower_is_better(backend: Steps) -> None:
    submit(backend, b"ann", 10, "best", high_first=False)
    worse = submit(backend, b"ann", 20, "best", high_first=False)
    assert (worse.score, worse.previous_score, worse.changed) == (10.0, 10.0, False)
    better = submit(backend, b"ann", 5, "best", high_first=False)
    assert (better.score, better.previous_score, better.changed) == (5.0, 10.0, True)
    assert backend.scores(target().key, [b"ann"]) == [5.0]


@pytest.mark.parametrize("high_first", DIRECTIONS)
def test_set_replaces_in_both_directions(backend: Steps, high_first: bool) -> None:
    submit(backend, b"ann", 10, "set", high_first=high_first)
    down = submit(backend, b"ann", 5, "set", high_first=high_first)
    assert (down.score, down.previous_score, down.changed) == (5.0, 10.0, True)
    up = submit(backend, b"ann", 50, "set", high_first=high_first)
    assert (up.score, up.previous_score, up.changed) == (50.0, 5.0, True)
    same = submit(backend, b"ann", 50, "set", high_first=high_first)
    assert (same.score, same.previous_score, same.changed) == (50.0, 50.0, False)


def test_incr_counts_from_zero_for_a_missing_member(backend: Steps) -> None:
    first = submit(backend, b"ann", 5, "incr")
    assert (first.score, first.previous_score, first.changed) == (5.0, None, True)
    second = submit(backend, b"ann", 2.5, "incr")
    assert (second.score, second.previous_score, second.changed) == (7.5, 5.0, True)
    negative = submit(backend, b"ann", -10, "incr")
    assert negative.score == -2.5
    nothing = submit(backend, b"ann", 0, "incr")
    assert (nothing.score, nothing.previous_score, nothing.changed) == (-2.5, -2.5, False)


def test_decr_counts_from_zero_for_a_missing_member(backend: Steps) -> None:
    first = submit(backend, b"ann", 5, "decr")
    assert (first.score, first.previous_score, first.changed) == (-5.0, None, True)
    second = submit(backend, b"ann", 2, "decr")
    assert (second.score, second.previous_score, second.changed) == (-7.0, -5.0, True)
    assert backend.scores(target().key, [b"ann"]) == [-7.0]


def test_float_scores_round_trip_exactly(backend: Steps) -> None:
    values = [0.1, 1 / 3, 2.0**53, -(2.0**53) + 1, 1e300, 5e-324, 123456789.123456789]
    for number, value in enumerate(values):
        assert submit(backend, b"m%d" % number, value).score == value
    stored = backend.scores(target().key, [b"m%d" % number for number in range(len(values))])
    assert stored == values
    incremented = submit(backend, b"m0", 0.2, "incr")
    assert incremented.score == 0.1 + 0.2


@pytest.mark.parametrize("operator", ["set", "best", "incr", "decr"])
def test_negative_zero_is_stored_as_zero(backend: Steps, operator: str) -> None:
    outcome = submit(backend, b"ann", -0.0, operator)  # type: ignore[arg-type]
    assert outcome.score == 0.0 and math.copysign(1.0, outcome.score) == 1.0
    [stored] = backend.scores(target().key, [b"ann"])
    assert stored == 0.0 and math.copysign(1.0, stored) == 1.0
    [(score, rank)] = backend.ranks(target(), [b"ann"], True, RankStyle.UNIQUE)
    assert (math.copysign(1.0, score), rank) == (1.0, 1)


def test_ranks_before_and_after_in_every_style(backend: Steps) -> None:
    fill(backend, {b"a": 100, b"b": 100, b"c": 90, b"d": 80})
    # e joins at 90: competition 3 (two better), dense 2, unique after c (e > c, REV order).
    for style, expected in zip(STYLES, (3, 3, 2), strict=True):
        outcome = submit(backend, b"e", 90, "set", style=style)
        assert outcome.rank == expected, style
    moves = {RankStyle.UNIQUE: (3, 1), RankStyle.COMPETITION: (3, 1), RankStyle.DENSE: (2, 1)}
    for style, (before, after) in moves.items():
        submit(backend, b"e", 90, "set")
        outcome = submit(backend, b"e", 100, "set", style=style)
        assert (outcome.previous_rank, outcome.rank) == (before, after), style
    # In unique style e (100) now sorts first among the 100s: members descending.
    assert submit(backend, b"e", 100, "set", style=RankStyle.UNIQUE).rank == 1
    assert backend.ranks(target(), [b"a", b"b"], True, RankStyle.UNIQUE) == [
        (100.0, 3),
        (100.0, 2),
    ]


def test_ranks_in_outcomes_on_a_lower_is_better_board(backend: Steps) -> None:
    fill(backend, {b"a": 10, b"b": 20, b"c": 20}, high_first=False)
    for style, expected in zip(STYLES, (4, 2, 2), strict=True):
        outcome = submit(backend, b"d", 20, "set", high_first=False, style=style)
        assert outcome.rank == expected, style
    best = submit(backend, b"d", 5, "best", high_first=False)
    assert (best.previous_rank, best.rank, best.score) == (2, 1, 5.0)


def test_unchanged_submission_reports_the_same_rank(backend: Steps) -> None:
    fill(backend, {b"a": 100, b"b": 90})
    outcome = submit(backend, b"b", 50, "best")
    assert (outcome.score, outcome.rank, outcome.previous_rank, outcome.changed) == (
        90.0,
        2,
        2,
        False,
    )


def test_one_outcome_per_target_in_order(backend: Steps) -> None:
    daily, weekly, total = target(window="d:1"), target(window="w:1"), target()
    submit(backend, b"bob", 50, "set", targets=[weekly])
    submit(backend, b"ann", 55, "set", targets=[weekly])
    submit(backend, b"bob", 5, "set", targets=[total])
    outcomes = backend.submit(request(b"bob", 10, "incr", targets=(daily, weekly, total)))
    assert [(o.score, o.previous_score, o.changed) for o in outcomes] == [
        (10.0, None, True),
        (60.0, 50.0, True),
        (15.0, 5.0, True),
    ]
    assert [(o.rank, o.previous_rank) for o in outcomes] == [(1, None), (1, 2), (1, 1)]
    assert backend.count(daily) == 1
    assert backend.count(weekly) == 2


def test_targets_are_independent_boards(backend: Steps) -> None:
    one, two = target(board="one"), target(board="two")
    submit(backend, b"ann", 1, "set", targets=[one])
    submit(backend, b"ann", 2, "set", targets=[two])
    assert backend.scores(one, [b"ann"]) == [1.0]
    assert backend.scores(two, [b"ann"]) == [2.0]


def test_binary_members(backend: Steps) -> None:
    members = [b"\x00", b"\xff\xfe", b"{tag}", b"a b\r\n", "caf\u00e9".encode()]
    for number, member in enumerate(members):
        submit(backend, member, number)
    assert backend.scores(target().key, members) == [0.0, 1.0, 2.0, 3.0, 4.0]
    rows = backend.page(target(), 0, 10, True, RankStyle.UNIQUE)
    assert [row[0] for row in rows] == members[::-1]


def test_batch_applies_in_order(backend: Steps) -> None:
    results = backend.submit_batch(
        [
            request(b"ann", 5, "incr"),
            request(b"ann", 7, "incr"),
            request(b"bob", 20, "set"),
            request(b"ann", 2, "decr"),
            request(b"ann", 1, "best"),
        ]
    )
    flat = [result[0] for result in results]
    assert [o.score for o in flat] == [5.0, 12.0, 20.0, 10.0, 10.0]
    assert [o.previous_score for o in flat] == [None, 5.0, None, 12.0, 10.0]
    assert [o.rank for o in flat] == [1, 1, 1, 2, 2]
    assert [o.previous_rank for o in flat] == [None, 1, None, 2, 2]
    assert [o.changed for o in flat] == [True, True, True, True, False]


def test_batch_of_nothing(backend: Steps) -> None:
    assert backend.submit_batch([]) == []


def test_batch_over_many_targets(backend: Steps) -> None:
    daily, total = target(window="d:1"), target()
    results = backend.submit_batch(
        [request(bytes([65 + n]), n, "set", targets=(daily, total)) for n in range(50)]
    )
    assert len(results) == 50 and all(len(result) == 2 for result in results)
    assert backend.count(daily) == backend.count(total) == 50
    assert backend.page(total, 0, 0, True, RankStyle.COMPETITION) == [(b"r", 49.0, 1)]
