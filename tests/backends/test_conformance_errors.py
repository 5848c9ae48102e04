"""Conformance: bad input raises a typed error and changes nothing."""

from __future__ import annotations

import math

import pytest

from ranked.backends.base import Backend, Target
from ranked.core.ranks import RankStyle
from ranked.errors import InvalidScoreError

from .conftest import STYLES, fill, request, submit, target

NOT_FINITE = [math.nan, math.inf, -math.inf]


def snapshot(backend: Backend, board: Target) -> list[object]:
    """Everything a read can see of ``board``, in every style (so companions count too)."""
    return [backend.page(board, 0, 99, True, style) for style in STYLES]


@pytest.mark.parametrize("value", NOT_FINITE, ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("operator", ["best", "set", "incr", "decr"])
def test_a_value_that_is_not_finite_raises(backend: Backend, operator: str, value: float) -> None:
    board = fill(backend, {b"a": 5, b"b": 3})
    before = snapshot(backend, board)
    for member in (b"a", b"new"):
        with pytest.raises(InvalidScoreError):
            backend.submit(request(member, value, operator))  # type: ignore[arg-type]
    assert snapshot(backend, board) == before


def test_an_increment_that_overflows_raises(backend: Backend) -> None:
    board = fill(backend, {b"a": 1.5e308})
    with pytest.raises(InvalidScoreError):
        submit(backend, b"a", 1.5e308, "incr")
    with pytest.raises(InvalidScoreError):
        submit(backend, b"a", -1.5e308, "decr")
    assert backend.scores(board, [b"a"]) == [1.5e308]


def test_nothing_changes_on_any_target_when_a_value_is_bad(backend: Backend) -> None:
    daily, total = target(window="d:1", ttl_ms=60_000), target()
    with pytest.raises(InvalidScoreError):
        backend.submit(request(b"a", math.nan, "set", targets=(daily, total)))
    assert backend.count(daily) == backend.count(total) == 0


def test_a_bad_request_in_a_batch_undoes_the_whole_batch(backend: Backend) -> None:
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
    assert backend.scores(board, [b"a", b"b", b"c", b"d"]) == [5.0, None, None, None]


def test_a_batch_overflow_found_late_undoes_the_whole_batch(backend: Backend) -> None:
    board = fill(backend, {b"a": 1e308})
    with pytest.raises(InvalidScoreError):
        backend.submit_batch(
            [
                request(b"b", 1, "set", targets=(board, target(window="d:1", ttl_ms=60_000))),
                request(b"a", 7e307, "incr"),  # 1.7e308: still finite
                request(b"a", 7e307, "incr"),  # 2.4e308: overflows
            ]
        )
    assert backend.scores(board, [b"a", b"b"]) == [1e308, None]
    assert backend.count(target(window="d:1")) == 0


@pytest.mark.parametrize("bound", NOT_FINITE[:1])
def test_nan_bounds_raise(backend: Backend, bound: float) -> None:
    board = fill(backend, {b"a": 5})
    with pytest.raises(InvalidScoreError):
        backend.by_score(board, bound, 10, 0, 10, True, RankStyle.UNIQUE)
    with pytest.raises(InvalidScoreError):
        backend.count(board, 0, bound)
    with pytest.raises(InvalidScoreError):
        backend.page_after(board, bound, b"a", 10, True, RankStyle.UNIQUE)


def test_negative_positions_raise(backend: Backend) -> None:
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
    with pytest.raises(ValueError):
        backend.range_all(board.key, True, -1)


def test_negative_keep_raises_and_changes_nothing(backend: Backend) -> None:
    board = fill(backend, {b"a": 5, b"b": 4})
    with pytest.raises(ValueError):
        submit(backend, b"c", 3, "set", keep=-1)
    assert backend.count(board) == 2


def test_an_integer_too_large_for_a_float_raises(backend: Backend) -> None:
    with pytest.raises(InvalidScoreError):
        submit(backend, b"a", 10**400, "set")
    assert backend.count(target()) == 0
    assert submit(backend, b"a", 2**53, "set").score == 2.0**53
