"""The one range of durations and instants every backend holds exactly."""

from __future__ import annotations

import math

import pytest

from ranked import OutOfRangeError
from ranked.core.limits import (
    MAX_DURATION_S,
    MAX_INSTANT_S,
    MAX_SUM_US,
    check_duration,
    check_instant,
)


def test_the_bounds_sum_exactly_in_a_double() -> None:
    total_us = (MAX_INSTANT_S + MAX_DURATION_S) * 1_000_000
    assert total_us < MAX_SUM_US == 2**53
    assert float(total_us) == total_us


@pytest.mark.parametrize("value", [0, 0.5, 60, MAX_DURATION_S, float(MAX_DURATION_S)])
def test_durations_inside_pass_as_floats(value: float) -> None:
    assert check_duration(value, "delay") == float(value)


@pytest.mark.parametrize(
    "value", [-1, -0.001, MAX_DURATION_S + 1, 1e13, math.inf, -math.inf, math.nan, 10**400]
)
def test_durations_outside_name_the_limit(value: float) -> None:
    with pytest.raises(OutOfRangeError, match="delay") as raised:
        check_duration(value, "delay")
    assert "100 years" in str(raised.value) or "finite" in str(raised.value)


@pytest.mark.parametrize("value", ["1", None, True, b"1"])
def test_durations_of_other_types_are_refused(value: object) -> None:
    with pytest.raises(OutOfRangeError, match="number of seconds"):
        check_duration(value, "window")


def test_instants() -> None:
    assert check_instant(1_700_000_000, "at") == 1_700_000_000.0
    assert check_instant(MAX_INSTANT_S, "at") == MAX_INSTANT_S
    for bad in (-1, MAX_INSTANT_S + 1, 1e13, math.nan):
        with pytest.raises(OutOfRangeError, match="at"):
            check_instant(bad, "at")
