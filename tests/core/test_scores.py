"""Composite (score, time) encodings: exact, order-preserving, budget-checked; the seeds' tables."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ranked.core._time import micros
from ranked.core.scores import (
    EXACT_BITS,
    ScoreAt,
    TimeTiebreak,
    seed003_layout,
    seed004_layout,
)
from ranked.errors import LayoutError, OutOfRangeError, RankedError

UNIX = datetime(1970, 1, 1, tzinfo=UTC)


def seed004_combine(score: int, timestamp: int) -> int:
    """Seed 004's arithmetic, as integers (its Go code, before the float64 conversion)."""
    return (score << 32) | (0x7FFFFFFF - (timestamp & 0x7FFFFFFF))


# -- seed 004 -----------------------------------------------------------------------


def test_seed004_true_values_and_order() -> None:
    layout = seed004_layout()
    a, b, c = layout.encode(100, 1000), layout.encode(100, 2000), layout.encode(101, 3000)
    # The seed prints 429496729602147482647 etc.: decimal concatenations of the two
    # halves. These are the real sums (the low half is below 2**32, so | is +).
    assert a == 431_644_212_247 == (100 << 32) + 2_147_482_647 == seed004_combine(100, 1000)
    assert b == 431_644_211_247 == seed004_combine(100, 2000)
    assert c == 435_939_177_543 == seed004_combine(101, 3000)
    assert c > a > b
    # Its update scenario: 90 points at t=1000, then 100 at t=5000; Y reached 100 at t=2000.
    assert layout.encode(90, 1000) == 388_694_539_287  # the seed prints 386547056642147482647
    x, y = layout.encode(100, 5000), layout.encode(100, 2000)
    assert x == 431_644_208_247
    assert y > x


@given(st.integers(0, 2**21 - 1), st.integers(0, 2**31 - 1))
def test_seed004_preset_equals_seed_arithmetic_where_it_fits(score: int, timestamp: int) -> None:
    layout = seed004_layout()
    assert layout.encode(score, timestamp) == seed004_combine(score, timestamp)
    assert layout.decode(layout.encode(score, timestamp)) == (
        score,
        UNIX + timedelta(seconds=timestamp),
    )


def test_seed004_layout_overflows_the_budget() -> None:
    # "high 32 bits for the score" plus 32 low bits is 64 bits: a float64 holds 53.
    with pytest.raises(LayoutError, match="at most 21 bits"):
        TimeTiebreak(score_bits=32, time_bits=32)
    layout = seed004_layout()
    assert layout.score_max == 2**21 - 1 == 2_097_151
    with pytest.raises(OutOfRangeError, match="outside"):
        layout.encode(2**21, 1000)
    # What the seed's float64(combined) silently does past 21 score bits: two different
    # times collapse to one score, and decoding returns neither of them.
    big = 2**31
    assert seed004_combine(big, 1000) != seed004_combine(big, 1001)
    assert float(seed004_combine(big, 1000)) == float(seed004_combine(big, 1001))


def test_seed004_has_no_2038_wrap() -> None:
    layout = seed004_layout()
    last = 2**31 - 1  # 2038-01-19T03:14:07Z
    assert layout.decode(layout.encode(5, last)).at == datetime(2038, 1, 19, 3, 14, 7, tzinfo=UTC)
    assert layout.time_end == datetime(2038, 1, 19, 3, 14, 8, tzinfo=UTC)
    # The seed masks 2**31 to 0: a 2038 score would outrank one from 1970.
    assert seed004_combine(5, 2**31) == seed004_combine(5, 0)
    with pytest.raises(OutOfRangeError, match="past the last representable unit"):
        layout.encode(5, 2**31)


# -- seed 003 -----------------------------------------------------------------------

ENDS = datetime(2025, 1, 1, tzinfo=UTC)


def remaining(seconds: int) -> datetime:
    return ENDS - timedelta(seconds=seconds)


def test_seed003_table() -> None:
    layout = seed003_layout(ENDS)
    alice = layout.encode(150, remaining(1000))
    bob = layout.encode(150, remaining(500))
    carol = layout.encode(100, remaining(2000))
    assert alice == 629_146_600
    assert bob == 629_146_100
    # The seed's table prints 419,432,304; 100 << 22 is 419,430,400 and + 2000 is 419,432,400.
    assert carol == 419_432_400 == (100 << 22) + 2000
    assert alice > bob > carol
    # The worked example in the seed's text: 100 xp, 3600 s remaining.
    assert layout.encode(100, remaining(3600)) == 419_434_000


def test_seed003_decodes_to_the_time_achieved() -> None:
    layout = seed003_layout(ENDS)
    assert layout.decode(629_146_600) == ScoreAt(150, remaining(1000))


def test_seed003_budget() -> None:
    layout = seed003_layout(ENDS)
    # The seed puts 42 xp bits above 22 time bits (64); a float64 leaves 31 for xp.
    assert layout.score_max == 2**31 - 1
    with pytest.raises(LayoutError):
        TimeTiebreak(score_bits=42, time_bits=22)
    with pytest.raises(OutOfRangeError):
        layout.encode(2**31, remaining(5))
    # The seed clamps remaining time at 0 after the end; here that is an error.
    assert layout.encode(1, ENDS) == 1 << 22
    with pytest.raises(OutOfRangeError):
        layout.encode(1, ENDS + timedelta(seconds=1))
    # ... and so is more than 2**22 - 1 seconds (about 48.5 days) before it.
    assert layout.encode(1, remaining(2**22 - 1)) == (1 << 22) + 2**22 - 1
    with pytest.raises(OutOfRangeError, match="before the epoch"):
        layout.encode(1, remaining(2**22))


# -- the general codec ----------------------------------------------------------------

MS = timedelta(milliseconds=1)
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


@st.composite
def layouts(draw: st.DrawFn) -> TimeTiebreak:
    time_bits = draw(st.integers(1, 52))
    score_bits = draw(st.integers(1, EXACT_BITS - time_bits))
    unit = draw(st.sampled_from([timedelta(microseconds=1), MS, timedelta(seconds=1)]))
    return TimeTiebreak(
        score_bits=score_bits,
        time_bits=time_bits,
        epoch=EPOCH,
        unit=unit,
        signed=draw(st.booleans()),
        lower_is_better=draw(st.booleans()),
    )


@st.composite
def layout_and_points(draw: st.DrawFn) -> tuple[TimeTiebreak, list[tuple[int, int]]]:
    layout = draw(layouts())
    # Keep the times within about 100 years of the epoch, inside datetime's range.
    time_max = min((1 << layout.time_bits) - 1, 100 * 366 * 86_400 * 10**6 // micros(layout.unit))
    point = st.tuples(st.integers(layout.score_min, layout.score_max), st.integers(0, time_max))
    return layout, draw(st.lists(point, min_size=2, max_size=2))


@given(layout_and_points())
def test_round_trip_and_exactness(case: tuple[TimeTiebreak, list[tuple[int, int]]]) -> None:
    layout, points = case
    for score, offset in points:
        at = EPOCH + layout.unit * offset
        value = layout.encode(score, at)
        assert abs(value) <= 2**EXACT_BITS
        assert int(value) == layout.pack(score, offset)  # exact: no rounding happened
        assert layout.decode(value) == ScoreAt(score, at)
        assert layout.unpack(int(value)) == (score, offset)


@given(layout_and_points())
def test_order_better_iff_greater(case: tuple[TimeTiebreak, list[tuple[int, int]]]) -> None:
    layout, [(s1, t1), (s2, t2)] = case
    assume((s1, t1) != (s2, t2))
    v1 = layout.encode(s1, EPOCH + layout.unit * t1)
    v2 = layout.encode(s2, EPOCH + layout.unit * t2)
    if layout.lower_is_better:
        # Read lowest first: lower score wins, then the earlier time.
        assert (v1 < v2) == ((s1, t1) < (s2, t2))
    else:
        # Read highest first: higher score wins, then the earlier time.
        assert (v1 > v2) == ((s1, -t1) > (s2, -t2))
    assert v1 != v2


def test_signed_scores() -> None:
    layout = TimeTiebreak(score_bits=20, time_bits=33, epoch=EPOCH, signed=True)
    assert (layout.score_min, layout.score_max) == (-(2**20), 2**20 - 1)
    lowest = layout.encode(-(2**20), EPOCH + timedelta(seconds=2**33 - 1))
    highest = layout.encode(2**20 - 1, EPOCH)
    assert lowest == -(2**53) and highest == 2**53 - 1
    minus_one = layout.encode(-1, EPOCH)
    zero_late = layout.encode(0, EPOCH + timedelta(days=3))
    assert minus_one < zero_late
    assert layout.decode(minus_one) == (-1, EPOCH)
    unsigned = TimeTiebreak(score_bits=20, time_bits=33, epoch=EPOCH)
    with pytest.raises(OutOfRangeError, match="signed=True"):
        unsigned.encode(-1, EPOCH)
    with pytest.raises(OutOfRangeError):
        unsigned.decode(minus_one)


def test_lower_is_better() -> None:
    layout = TimeTiebreak(score_bits=30, time_bits=23, epoch=EPOCH, lower_is_better=True)
    fast_late = layout.encode(61, EPOCH + timedelta(seconds=100))
    slow_early = layout.encode(62, EPOCH)
    fast_early = layout.encode(61, EPOCH + timedelta(seconds=50))
    assert sorted([slow_early, fast_late, fast_early]) == [fast_early, fast_late, slow_early]


def test_instants_datetime_float_and_zones() -> None:
    layout = TimeTiebreak(score_bits=10, time_bits=43, epoch=EPOCH, unit=MS)
    unix = EPOCH.timestamp()
    plus2 = timezone(timedelta(hours=2))
    same = [
        layout.encode(7, EPOCH + timedelta(milliseconds=1500)),
        layout.encode(7, unix + 1.5),
        layout.encode(7, datetime(2024, 1, 1, 2, 0, 1, 500_000, tzinfo=plus2)),
        layout.encode(7, EPOCH + timedelta(microseconds=1_500_999)),  # floored to the unit
    ]
    assert len(set(same)) == 1
    assert layout.decode(same[0]).at == EPOCH + timedelta(milliseconds=1500)
    assert layout.encode(7, int(unix)) == layout.encode(7, EPOCH)


@pytest.mark.parametrize(
    "at",
    [
        datetime(2024, 1, 1),  # naive
        float("nan"),
        float("inf"),
        EPOCH - timedelta(microseconds=1),
        "2024-01-01",
        True,
    ],
)
def test_bad_instants(at: object) -> None:
    layout = TimeTiebreak(score_bits=10, time_bits=43, epoch=EPOCH, unit=MS)
    with pytest.raises(OutOfRangeError):
        layout.encode(1, at)  # type: ignore[arg-type]


@pytest.mark.parametrize("score", [1.5, "3", None, True])
def test_scores_must_be_ints(score: object) -> None:
    with pytest.raises(OutOfRangeError, match="must be an int"):
        seed004_layout().encode(score, 0)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0.5, float("nan"), float("inf"), -1.0, 2.0**53])
def test_decode_rejects_values_no_encode_makes(value: float) -> None:
    with pytest.raises(OutOfRangeError):
        seed004_layout().decode(value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"score_bits": 0, "time_bits": 10},
        {"score_bits": 10, "time_bits": -1},
        {"score_bits": 10.0, "time_bits": 10},
        {"score_bits": True, "time_bits": 10},
        {"score_bits": 27, "time_bits": 27},
        {"score_bits": 10, "time_bits": 10, "epoch": datetime(2020, 1, 1)},
        {"score_bits": 10, "time_bits": 10, "unit": timedelta(0)},
        {"score_bits": 10, "time_bits": 10, "unit": timedelta(seconds=-1)},
        {"score_bits": 10, "time_bits": 10, "unit": 1},
    ],
)
def test_bad_layouts(kwargs: dict[str, object]) -> None:
    with pytest.raises(LayoutError):
        TimeTiebreak(**kwargs)  # type: ignore[arg-type]


def test_errors_are_typed() -> None:
    assert issubclass(LayoutError, RankedError) and issubclass(LayoutError, ValueError)
    assert issubclass(OutOfRangeError, RankedError) and issubclass(OutOfRangeError, ValueError)


def test_decode_of_a_time_past_year_9999_is_typed() -> None:
    layout = TimeTiebreak(score_bits=1, time_bits=52, epoch=EPOCH, unit=timedelta(days=1))
    with pytest.raises(OutOfRangeError, match="9999"):
        layout.decode(float(2**52 - 1 - 10**7))  # time offset of 10**7 days


def test_full_53_bits_is_allowed() -> None:
    layout = TimeTiebreak(score_bits=13, time_bits=40, epoch=EPOCH, unit=MS)
    top = layout.encode(layout.score_max, EPOCH)
    assert top == 2**53 - 1
    assert layout.decode(top) == (2**13 - 1, EPOCH)
