"""Conformance: bad input raises a typed error and changes nothing."""

from __future__ import annotations

import math

import pytest

from ranked.core.ranks import RankStyle
from ranked.errors import InvalidScoreError, OutOfRangeError
from ranked.leaderboard._requests import Operator, Target

from .conftest import STYLES, Steps, fill, request, submit, target

NOT_FINITE = [math.nan, math.inf, -math.inf]


def snapshot(backend: Steps, board: Target) -> list[object]:
    """Everything a read can see of ``board``, in every style (so companions count too)."""
    return [backend.page(board, 0, 99, True, style) for style in STYLES]


@pytest.mark.parametrize("value", NOT_FINITE, ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("operator", ["best", "set", "incr", "decr"])
def test_a_value_that_is_not_finite_raises(backend: Steps, operator: str, value: float) -> None:
    board = fill(backend, {b"a": 5, b"b": 3})
    before = snapshot(backend, board)
    for member in (b"a", b"new"):
        with pytest.raises(InvalidScoreError):
            backend.submit(request(member, value, operator))  # type: ignore[arg-type]
    assert snapshot(backend, board) == before


def test_an_increment_that_overflows_raises(backend: Steps) -> None:
    board = fill(backend, {b"a": 1.5e308})
    with pytest.raises(InvalidScoreError):
        submit(backend, b"a", 1.5e308, "incr")
    with pytest.raises(InvalidScoreError):
        submit(backend, b"a", -1.5e308, "decr")
    assert backend.scores(board.key, [b"a"]) == [1.5e308]


def test_nothing_changes_on_any_target_when_a_value_is_bad(backend: Steps) -> None:
    daily, total = target(window="d:1", ttl_ms=60_000), target()
    with pytest.raises(InvalidScoreError):
        backend.submit(request(b"a", math.nan, "set", targets=(daily, total)))
    assert backend.count(daily) == backend.count(total) == 0


def test_a_bad_request_in_a_batch_undoes_the_whole_batch(backend: Steps) -> None:
    board = fill(backend, {b"a": 5})
    before = snapshot(backend, board)
    with pytest.raises(InvalidScoreError):
        backend.submit_batch(
            [
                request(b"a", 10, "incr"),
                request(b"b", 7, "set", keep=1),
                request(b"c", math.inf, "set"),
                request(b"d", 1, "set"),
            ]
        )
    assert snapshot(backend, board) == before
    assert backend.scores(board.key, [b"a", b"b", b"c", b"d"]) == [5.0, None, None, None]


def test_a_batch_overflow_found_late_undoes_the_whole_batch(backend: Steps) -> None:
    board = fill(backend, {b"a": 2.0**1023})
    with pytest.raises(InvalidScoreError):
        backend.submit_batch(
            [
                request(b"b", 1, "set", targets=(board, target(window="d:1", ttl_ms=60_000))),
                request(b"a", 2.0**1022, "incr"),  # 1.5 * 2**1023: finite (and exact)
                request(b"a", 2.0**1022, "incr"),  # 2**1024: overflows
            ]
        )
    assert backend.scores(board.key, [b"a", b"b"]) == [2.0**1023, None]
    assert backend.count(target(window="d:1").key) == 0


@pytest.mark.parametrize("bound", NOT_FINITE[:1])
def test_nan_bounds_raise(backend: Steps, bound: float) -> None:
    board = fill(backend, {b"a": 5})
    with pytest.raises(InvalidScoreError):
        backend.by_score(board, bound, 10, 0, 10, True, RankStyle.UNIQUE)
    with pytest.raises(InvalidScoreError):
        backend.count(board.key, 0, bound)
    with pytest.raises(InvalidScoreError):
        backend.page_after(board, bound, b"a", 10, True, RankStyle.UNIQUE)


def test_negative_positions_raise(backend: Steps) -> None:
    board = fill(backend, {b"a": 5, b"b": 4})
    with pytest.raises(ValueError):
        backend.page(board, -1, 5, True, RankStyle.UNIQUE)
    with pytest.raises(ValueError):
        backend.page(board, 0, -1, True, RankStyle.UNIQUE)
    with pytest.raises(ValueError):
        backend.around(board, b"a", -1, 2, True, RankStyle.UNIQUE)
    with pytest.raises(ValueError):
        backend.by_score(board, 0, 10, -1, 10, True, RankStyle.UNIQUE)
    with pytest.raises(ValueError):
        backend.by_score(board, 0, 10, 0, -1, True, RankStyle.UNIQUE)
    with pytest.raises(ValueError):
        backend.page_after(board, 5, b"a", -1, True, RankStyle.UNIQUE)


def test_negative_keep_raises_and_changes_nothing(backend: Steps) -> None:
    board = fill(backend, {b"a": 5, b"b": 4})
    with pytest.raises(ValueError):
        submit(backend, b"c", 3, "set", keep=-1)
    assert backend.count(board.key) == 2


def test_an_integer_too_large_for_a_float_raises(backend: Steps) -> None:
    with pytest.raises(OutOfRangeError, match="beyond the float64 range"):
        submit(backend, b"a", 10**400, "set")
    assert backend.count(target().key) == 0
    assert submit(backend, b"a", 2**53, "set").score == 2.0**53


@pytest.mark.parametrize("value", [2**53 + 1, -(2**53 + 3), 3**40])
def test_an_int_a_float_would_round_is_refused(backend: Steps, value: int) -> None:
    board = fill(backend, {b"a": 1})
    with pytest.raises(OutOfRangeError, match="not exact"):
        submit(backend, b"b", value, "set")
    with pytest.raises(OutOfRangeError, match="not exact"):
        backend.submit_batch([request(b"c", 2, "set"), request(b"d", value, "set")])
    assert backend.count(board.key) == 1
    assert submit(backend, b"e", 2**60, "set").score == 2.0**60  # exact beyond 2**53: kept


@pytest.mark.parametrize("extra", [(), (target(window="d:1", ttl_ms=60_000),)])
def test_an_incr_result_must_be_exact_from_2_53_on(
    backend: Steps, extra: tuple[Target, ...]
) -> None:
    board = fill(backend, {b"a": 2.0**53, b"n": -(2.0**53), b"f": 0.1})
    targets = (board, *extra)
    for member, value, operator in [
        (b"a", 1, "incr"),  # 2**53 + 1 does not exist: it was stored as 2**53, changed=False
        (b"a", 0.5, "incr"),
        (b"a", -1, "decr"),
        (b"n", 1, "decr"),
        (b"f", 2.0**60, "incr"),  # 2**60 + 0.1 would drop the fraction
    ]:
        with pytest.raises(OutOfRangeError, match="not exact"):
            backend.submit(request(member, value, operator, targets=targets))  # type: ignore[arg-type]
    assert backend.scores(board.key, [b"a", b"n", b"f"]) == [2.0**53, -(2.0**53), 0.1]
    for window in extra:
        assert backend.count(window) == 0

    # Exact sums stand, and below 2**53 the float64 sum is the IEEE one.
    def incr(member: bytes, value: float, operator: Operator) -> float:
        score: float = backend.submit(request(member, value, operator, targets=targets))[0].score
        return score

    assert incr(b"a", 2, "incr") == 2.0**53 + 2
    assert incr(b"a", 3, "decr") == 2.0**53 - 1
    assert incr(b"f", 0.2, "incr") == 0.1 + 0.2


def test_an_inexact_incr_found_late_undoes_the_whole_batch(backend: Steps) -> None:
    board = fill(backend, {b"a": 2.0**53 - 2})
    with pytest.raises(OutOfRangeError):
        backend.submit_batch(
            [
                request(b"b", 1, "set"),
                request(b"a", 1, "incr"),  # 2**53 - 1: exact
                request(b"a", 2, "incr"),  # 2**53 + 1: not a float64
            ]
        )
    assert backend.scores(board.key, [b"a", b"b"]) == [2.0**53 - 2, None]
