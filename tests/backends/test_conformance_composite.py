"""Conformance: composite scores packed inside the backend (seeds 003 and 004), and budgets."""

from __future__ import annotations

import pytest

from ranked.core.ranks import RankStyle
from ranked.core.scores import seed004_layout
from ranked.errors import OutOfRangeError
from ranked.leaderboard._requests import Composite, Operator

from .conftest import Steps, request, submit, target

SECOND = 1000
# Seed 004: (score << 32) | (0x7FFFFFFF - unix_seconds): a 32-bit reversed field whose
# epoch lies 2**31 seconds before 1970.
SEED004 = Composite(score_bits=21, time_bits=32, epoch_ms=-(2**31) * SECOND, unit_ms=SECOND)
# Seed 003: (xp << 22) + remaining seconds until the competition ends at ENDS.
ENDS = 1_750_000_000 * SECOND
SEED003 = Composite(
    score_bits=31, time_bits=22, epoch_ms=ENDS - (2**22 - 1) * SECOND, unit_ms=SECOND
)


def seed004(score: int, seconds: int) -> int:
    return (score << 32) | (0x7FFFFFFF - seconds)


def test_seed004_layout_matches_the_core_preset() -> None:
    layout = seed004_layout()
    assert layout.score_bits == SEED004.score_bits
    assert layout.time_bits == SEED004.time_bits
    assert layout.epoch.timestamp() * SECOND == SEED004.epoch_ms


def test_seed004_table(backend: Steps) -> None:
    players = [(b"A", 100, 1000), (b"B", 100, 2000), (b"C", 101, 3000)]
    for member, score, seconds in players:
        outcome = submit(backend, member, score, "set", composite=SEED004, now_ms=seconds * SECOND)
        assert outcome.score == float(seed004(score, seconds))
    assert seed004(100, 1000) == 431_644_212_247
    assert seed004(100, 2000) == 431_644_211_247
    assert seed004(101, 3000) == 435_939_177_543
    rows = backend.page(target(), 0, 9, True, RankStyle.UNIQUE)
    assert rows == [
        (b"C", 435_939_177_543.0, 1),
        (b"A", 431_644_212_247.0, 2),
        (b"B", 431_644_211_247.0, 3),
    ]


def test_seed004_update_keeps_time_order_within_a_score(backend: Steps) -> None:
    submit(backend, b"X", 90, "set", composite=SEED004, now_ms=1000 * SECOND)
    submit(backend, b"Y", 100, "set", composite=SEED004, now_ms=2000 * SECOND)
    moved = submit(backend, b"X", 100, "set", composite=SEED004, now_ms=5000 * SECOND)
    assert moved.score == float(seed004(100, 5000)) == 431_644_208_247.0
    assert moved.previous_score == float(seed004(90, 1000))
    assert (moved.previous_rank, moved.rank) == (2, 2)  # Y reached 100 first
    # Every packed value is a distinct integer: competition ranks never tie.
    assert backend.ranks(target(), [b"Y", b"X"], True, RankStyle.COMPETITION) == [
        (float(seed004(100, 2000)), 1),
        (float(seed004(100, 5000)), 2),
    ]


def test_seed003_table(backend: Steps) -> None:
    players = [(b"Alice", 150, 1000), (b"Bob", 150, 500), (b"Carol", 100, 2000)]
    for member, xp, remaining in players:
        now = ENDS - remaining * SECOND
        submit(backend, member, xp, "set", composite=SEED003, now_ms=now)
    rows = backend.page(target(), 0, 9, True, RankStyle.COMPETITION)
    assert rows == [
        (b"Alice", float((150 << 22) + 1000), 1),
        (b"Bob", float((150 << 22) + 500), 2),
        (b"Carol", float((100 << 22) + 2000), 3),
    ]
    assert [row[1] for row in rows] == [629_146_600.0, 629_146_100.0, 419_432_400.0]


def test_time_is_floored_to_whole_units(backend: Steps) -> None:
    early = submit(backend, b"a", 7, "set", composite=SEED004, now_ms=1000 * SECOND)
    late = submit(backend, b"b", 7, "set", composite=SEED004, now_ms=1000 * SECOND + 999)
    assert early.score == late.score == float(seed004(7, 1000))


def test_best_keeps_the_earlier_stamp_for_an_equal_score(backend: Steps) -> None:
    first = submit(backend, b"a", 50, "best", composite=SEED004, now_ms=10 * SECOND)
    again = submit(backend, b"a", 50, "best", composite=SEED004, now_ms=20 * SECOND)
    assert (again.score, again.changed) == (first.score, False)
    lower = submit(backend, b"a", 40, "best", composite=SEED004, now_ms=30 * SECOND)
    assert (lower.score, lower.changed) == (first.score, False)
    higher = submit(backend, b"a", 60, "best", composite=SEED004, now_ms=40 * SECOND)
    assert (higher.score, higher.changed) == (float(seed004(60, 40)), True)


def test_incr_and_decr_unpack_add_and_restamp(backend: Steps) -> None:
    first = submit(backend, b"a", 10, "incr", composite=SEED004, now_ms=100 * SECOND)
    assert first.score == float(seed004(10, 100))
    second = submit(backend, b"a", 5, "incr", composite=SEED004, now_ms=200 * SECOND)
    assert second.score == float(seed004(15, 200))
    third = submit(backend, b"a", 3, "decr", composite=SEED004, now_ms=300 * SECOND)
    assert third.score == float(seed004(12, 300))
    zero = submit(backend, b"a", 0, "incr", composite=SEED004, now_ms=300 * SECOND)
    assert (zero.score, zero.changed) == (third.score, False)
    fresh = submit(backend, b"b", 4, "decr", composite=SIGNED, now_ms=SECOND)
    assert fresh.score == float(-4 * 2**10 + (2**10 - 1 - 1))


@pytest.mark.parametrize("operator", ["incr", "decr"])
def test_adding_zero_later_keeps_the_time(backend: Steps, operator: Operator) -> None:
    daily = target(window="d:1", ttl_ms=60_000)
    both = (target(), daily)
    backend.submit(request(b"a", 7, "set", composite=SEED004, now_ms=100 * SECOND, targets=both))
    backend.submit(request(b"b", 7, "set", composite=SEED004, now_ms=200 * SECOND, targets=both))
    later = backend.submit(
        request(b"a", 0, operator, composite=SEED004, now_ms=900 * SECOND, targets=both)
    )
    kept = float(seed004(7, 100))
    for outcome in later:  # before: re-stamped at 900 s, behind b who reached 7 at 200 s
        assert (outcome.score, outcome.previous_score, outcome.changed) == (kept, kept, False)
        assert outcome.rank == outcome.previous_rank == 1
    for board in both:
        assert backend.scores(board.key, [b"a"]) == [kept]
        assert [row[0] for row in backend.page(board, 0, 9, True, RankStyle.UNIQUE)] == [b"a", b"b"]
    new = submit(backend, b"c", 0, operator, composite=SEED004, now_ms=300 * SECOND)
    assert (new.score, new.changed) == (float(seed004(0, 300)), True)  # a first incr stamps


SIGNED = Composite(score_bits=20, time_bits=10, epoch_ms=0, unit_ms=SECOND, signed=True)
LOW = Composite(score_bits=20, time_bits=16, epoch_ms=0, unit_ms=SECOND, lower_is_better=True)


def test_signed_scores_order_below_zero(backend: Steps) -> None:
    for member, score, seconds in [(b"a", -3, 5), (b"b", -3, 9), (b"c", 2, 1), (b"d", -(2**20), 0)]:
        outcome = submit(backend, member, score, "set", composite=SIGNED, now_ms=seconds * SECOND)
        assert outcome.score == float(score * 2**10 + (2**10 - 1 - seconds))
    rows = backend.page(target(), 0, 9, True, RankStyle.UNIQUE)
    assert [row[0] for row in rows] == [b"c", b"a", b"b", b"d"]
    # Unpacking floors: a negative stored score increments correctly.
    again = submit(backend, b"a", 1, "incr", composite=SIGNED, now_ms=7 * SECOND)
    assert again.score == float(-2 * 2**10 + (2**10 - 1 - 7))


def test_lower_is_better_keeps_the_time_unreversed(backend: Steps) -> None:
    for member, score, seconds in [(b"slow", 30, 5), (b"fast", 20, 9), (b"tie", 20, 3)]:
        outcome = submit(
            backend, member, score, "best", composite=LOW, now_ms=seconds * SECOND, high_first=False
        )
        assert outcome.score == float(score * 2**16 + seconds)
    rows = backend.page(target(), 0, 9, False, RankStyle.UNIQUE)
    assert [row[0] for row in rows] == [b"tie", b"fast", b"slow"]
    worse_later = submit(
        backend, b"tie", 20, "best", composite=LOW, now_ms=50 * SECOND, high_first=False
    )
    assert (worse_later.score, worse_later.changed) == (float(20 * 2**16 + 3), False)


BUDGET_CASES = [
    pytest.param(SEED004, 2**21, 0, id="score-too-high"),
    pytest.param(SEED004, -2, 0, id="negative-unsigned"),
    pytest.param(SIGNED, -(2**20) - 1, 0, id="signed-too-low"),
    pytest.param(SEED004, 1, -(2**31) * SECOND - 1, id="before-epoch"),
    pytest.param(SEED004, 1, 2**31 * SECOND, id="after-2038"),
    pytest.param(SEED003, 1, ENDS + SECOND, id="after-the-end"),
]


@pytest.mark.parametrize(("layout", "score", "now_ms"), BUDGET_CASES)
@pytest.mark.parametrize("operator", ["set", "best", "incr"])
def test_budget_violations_raise_and_change_nothing(
    backend: Steps, layout: Composite, score: int, now_ms: int, operator: str
) -> None:
    submit(backend, b"keep", 1, "set", composite=SEED004, now_ms=SECOND)
    before = backend.page(target(), 0, 9, True, RankStyle.UNIQUE)
    with pytest.raises(OutOfRangeError):
        backend.submit(request(b"new", score, operator, composite=layout, now_ms=now_ms))  # type: ignore[arg-type]
    with pytest.raises(OutOfRangeError):
        backend.submit(request(b"keep", score, operator, composite=layout, now_ms=now_ms))  # type: ignore[arg-type]
    assert backend.page(target(), 0, 9, True, RankStyle.UNIQUE) == before


def test_the_last_unit_of_the_budget_is_accepted(backend: Steps) -> None:
    last = submit(backend, b"a", 2**21 - 1, "set", composite=SEED004, now_ms=2**31 * SECOND - 1)
    assert last.score == float(((2**21 - 1) << 32) | 0)
    assert last.score == 2.0**53 - 2.0**32
    first = submit(backend, b"b", 0, "set", composite=SEED004, now_ms=-(2**31) * SECOND)
    assert first.score == float(2**32 - 1)


def test_incr_past_the_budget_changes_no_target(backend: Steps) -> None:
    daily, total = target(window="d:1"), target()
    submit(backend, b"a", 2**21 - 10, "set", composite=SEED004, now_ms=SECOND, targets=[total])
    submit(backend, b"a", 1, "set", composite=SEED004, now_ms=SECOND, targets=[daily])
    with pytest.raises(OutOfRangeError):
        backend.submit(
            request(b"a", 20, "incr", composite=SEED004, now_ms=2 * SECOND, targets=(daily, total))
        )
    assert backend.scores(daily, [b"a"]) == [float(seed004(1, 1))]
    assert backend.scores(total, [b"a"]) == [float(seed004(2**21 - 10, 1))]


def test_decr_below_zero_of_an_unsigned_layout_raises(backend: Steps) -> None:
    submit(backend, b"a", 3, "set", composite=SEED004, now_ms=SECOND)
    with pytest.raises(OutOfRangeError):
        submit(backend, b"a", 4, "decr", composite=SEED004, now_ms=SECOND)
    assert backend.scores(target().key, [b"a"]) == [float(seed004(3, 1))]


def test_non_integer_composite_score_raises(backend: Steps) -> None:
    with pytest.raises(OutOfRangeError):
        submit(backend, b"a", 1.5, "set", composite=SEED004, now_ms=SECOND)
    assert backend.count(target().key) == 0


def test_batch_is_all_or_nothing_across_a_budget_violation(backend: Steps) -> None:
    submit(backend, b"a", 2**21 - 3, "set", composite=SEED004, now_ms=SECOND)
    with pytest.raises(OutOfRangeError):
        backend.submit_batch(
            [
                request(b"b", 5, "set", composite=SEED004, now_ms=SECOND),
                request(b"a", 2, "incr", composite=SEED004, now_ms=SECOND),  # fits: max - 1
                request(b"a", 2, "incr", composite=SEED004, now_ms=SECOND),  # max + 1: fails
            ]
        )
    assert backend.scores(target().key, [b"a", b"b"]) == [float(seed004(2**21 - 3, 1)), None]
    assert backend.count(target().key) == 1
