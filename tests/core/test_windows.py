"""Time windows: ids and bounds at calendar edges, ISO weeks, zones, seasons, TTLs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ranked.core.windows import Season, Window, WindowKind, WindowPlan
from ranked.errors import WindowError

DAY, WEEK, MONTH, ALL = (
    WindowKind.DAILY,
    WindowKind.WEEKLY,
    WindowKind.MONTHLY,
    WindowKind.ALL_TIME,
)
UTC_PLAN = WindowPlan(kinds=(DAY, WEEK, MONTH, ALL))
BERLIN = ZoneInfo("Europe/Berlin")
SANTIAGO = ZoneInfo("America/Santiago")
APIA = ZoneInfo("Pacific/Apia")
TOKYO = ZoneInfo("Asia/Tokyo")


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, us: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, us, tzinfo=UTC)


def ids(plan: WindowPlan, at: datetime | float) -> list[str]:
    return [window.id for window in plan.windows_at(at)]


def test_ids() -> None:
    assert ids(UTC_PLAN, utc(2026, 11, 21, 13, 5)) == [
        "d2026-11-21",
        "w2026-W47",
        "m2026-11",
        "all",
    ]
    assert ids(UTC_PLAN, utc(2026, 11, 21).timestamp()) == ids(UTC_PLAN, utc(2026, 11, 21))


@pytest.mark.parametrize(
    ("day", "week"),
    [
        (utc(2020, 12, 31), "w2020-W53"),
        (utc(2021, 1, 3, 23, 59), "w2020-W53"),  # a Sunday of 2021 in ISO year 2020
        (utc(2021, 1, 4), "w2021-W01"),
        (utc(2024, 12, 30), "w2025-W01"),  # a Monday of 2024 in ISO year 2025
        (utc(2026, 1, 1), "w2026-W01"),
        (utc(2027, 1, 1), "w2026-W53"),
    ],
)
def test_iso_weeks(day: datetime, week: str) -> None:
    assert UTC_PLAN.window(WEEK, day).id == week


def test_iso_week_bounds_cross_the_year() -> None:
    window = UTC_PLAN.window(WEEK, utc(2021, 1, 2))
    assert (window.start, window.end) == (utc(2020, 12, 28), utc(2021, 1, 4))
    assert window == UTC_PLAN.window_for_id("w2020-W53")


def test_month_and_year_edges() -> None:
    last = utc(2026, 12, 31, 23, 59, 59, 999_999)
    assert ids(UTC_PLAN, last)[:3] == ["d2026-12-31", "w2026-W53", "m2026-12"]
    assert ids(UTC_PLAN, last + timedelta(microseconds=1))[:3] == [
        "d2027-01-01",
        "w2026-W53",
        "m2027-01",
    ]
    december = UTC_PLAN.window(MONTH, last)
    assert (december.start, december.end) == (utc(2026, 12, 1), utc(2027, 1, 1))


def test_leap_years() -> None:
    assert UTC_PLAN.window(DAY, utc(2024, 2, 29, 12)).id == "d2024-02-29"
    assert UTC_PLAN.window(MONTH, utc(2024, 2, 29)).end == utc(2024, 3, 1)
    assert UTC_PLAN.window(MONTH, utc(2023, 2, 28)).end == utc(2023, 3, 1)
    assert UTC_PLAN.window(MONTH, utc(2000, 2, 1)).end == utc(2000, 3, 1)
    assert UTC_PLAN.window_for_id("d2024-02-29").start == utc(2024, 2, 29)
    with pytest.raises(WindowError, match="no real period"):
        UTC_PLAN.window_for_id("d2023-02-29")
    with pytest.raises(WindowError, match="no real period"):
        UTC_PLAN.window_for_id("d1900-02-29")  # 1900 is not a leap year


def test_utc_days_ignore_dst() -> None:
    # 2026-03-29 and 2026-10-25 are DST changes in Europe; UTC days are 24 hours.
    for day in (utc(2026, 3, 29, 1, 30), utc(2026, 10, 25, 1, 30)):
        window = UTC_PLAN.window(DAY, day)
        assert window.end is not None and window.start is not None
        assert window.end - window.start == timedelta(hours=24)


def test_berlin_days_follow_local_midnight() -> None:
    plan = WindowPlan(kinds=(DAY, WEEK, MONTH), timezone=BERLIN)
    # 23:30 UTC on 28 March is 00:30 CET on 29 March in Berlin.
    assert ids(plan, utc(2026, 3, 28, 23, 30)) == ["d2026-03-29", "w2026-W13", "m2026-03"]
    spring = plan.window(DAY, utc(2026, 3, 28, 23, 30))
    assert spring.start == utc(2026, 3, 28, 23) and spring.end == utc(2026, 3, 29, 22)  # 23 h
    autumn = plan.window_for_id("d2026-10-25")
    assert autumn.start == utc(2026, 10, 24, 22) and autumn.end == utc(2026, 10, 25, 23)  # 25 h
    # A month boundary in local time: 22:59 UTC on 31 Jan is 23:59 CET.
    assert plan.window(MONTH, utc(2026, 1, 31, 22, 59)).id == "m2026-01"
    assert plan.window(MONTH, utc(2026, 1, 31, 23, 0)).id == "m2026-02"
    assert plan.window(MONTH, utc(2026, 1, 31, 23, 0)).start == utc(2026, 1, 31, 23)


def test_tokyo_is_a_day_ahead_in_the_evening_utc() -> None:
    plan = WindowPlan(kinds=(DAY, WEEK), timezone=TOKYO)
    assert ids(plan, utc(2026, 11, 21, 15, 30)) == ["d2026-11-22", "w2026-W47"]
    assert ids(plan, utc(2026, 11, 22, 15, 0)) == ["d2026-11-23", "w2026-W48"]  # Monday JST


def test_midnight_dst_changes_and_a_skipped_day() -> None:
    # Santiago: on 2022-09-11 clocks jumped from 00:00 to 01:00, so that day starts at 01:00.
    santiago = WindowPlan(kinds=(DAY,), timezone=SANTIAGO)
    day = santiago.window_for_id("d2022-09-11")
    assert day.start == utc(2022, 9, 11, 4) and day.end == utc(2022, 9, 12, 3)  # 23 h
    assert santiago.window_for_id("d2022-09-10").end == day.start
    # Apia skipped 30 December 2011 entirely: the 29th ends where the 31st begins.
    apia = WindowPlan(kinds=(DAY,), timezone=APIA)
    assert apia.window_for_id("d2011-12-29").end == apia.window_for_id("d2011-12-31").start
    assert apia.window(DAY, utc(2011, 12, 30, 10)).id == "d2011-12-31"


def test_a_midnight_repeated_by_dst_begins_the_day_at_its_second_reading() -> None:
    # St. John's left DST at 00:01 local until 2011: midnight of 2000-10-29 came twice
    # (02:30 and 03:30 UTC) and the hour between was 23:01-23:59 of the 28th again.
    plan = WindowPlan(kinds=(DAY,), timezone=ZoneInfo("America/St_Johns"))
    day = plan.window(DAY, utc(2000, 10, 29, 3))
    assert day.id == "d2000-10-28" and day.contains(utc(2000, 10, 29, 3))
    assert day.end == utc(2000, 10, 29, 3, 30) == plan.window_for_id("d2000-10-29").start


zones = st.sampled_from([UTC, BERLIN, SANTIAGO, APIA, TOKYO, ZoneInfo("America/St_Johns")])
instants = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1), timezones=st.just(UTC)
)


@given(zone=zones, at=instants, kind=st.sampled_from([DAY, WEEK, MONTH]))
def test_windows_tile_time(zone: ZoneInfo, at: datetime, kind: WindowKind) -> None:
    plan = WindowPlan(kinds=(kind,), timezone=zone)
    window = plan.window(kind, at)
    assert window.contains(at)
    assert window.start is not None and window.end is not None
    assert window.start.tzinfo is UTC and window.end.tzinfo is UTC
    assert plan.window_for_id(window.id) == window
    following = plan.window(kind, window.end)
    assert following.start == window.end and following.id > window.id
    before = plan.window(kind, window.start - timedelta(microseconds=1))
    assert before.end == window.start


def test_all_time() -> None:
    window = UTC_PLAN.window(ALL, utc(1999, 1, 1))
    assert window == Window("all", ALL, None, None) == UTC_PLAN.window_for_id("all")
    assert window.contains(utc(1, 1, 1)) and not window.is_closed(utc(9999, 1, 1))
    assert window.ttl_ms(utc(2026, 1, 1), timedelta(days=1)) is None


SPRING = Season("spring-cup", utc(2026, 3, 1, 12), utc(2026, 3, 15, 12))
SUMMER = Season("summer", utc(2026, 6, 1), utc(2026, 9, 1))


def test_seasons_only_while_open() -> None:
    plan = WindowPlan(kinds=(ALL,), seasons=(SPRING, SUMMER))
    assert ids(plan, utc(2026, 3, 1, 11, 59)) == ["all"]
    assert ids(plan, utc(2026, 3, 1, 12)) == ["all", "s:spring-cup"]
    assert ids(plan, utc(2026, 3, 15, 11, 59, 59)) == ["all", "s:spring-cup"]
    assert ids(plan, utc(2026, 3, 15, 12)) == ["all"]
    assert ids(plan, utc(2026, 7, 4)) == ["all", "s:summer"]
    season = plan.window_for_id("s:spring-cup")
    assert (season.kind, season.start, season.end) == (WindowKind.SEASON, SPRING.start, SPRING.end)
    assert plan.season("summer") == SUMMER.window
    # Overlapping seasons both receive the write.
    both = WindowPlan(kinds=(), seasons=(SUMMER, Season("july", utc(2026, 7, 1), utc(2026, 8, 1))))
    assert ids(both, utc(2026, 7, 4)) == ["s:summer", "s:july"]


def test_season_bounds_are_normalised_to_utc() -> None:
    season = Season(
        "x", datetime(2026, 3, 1, 1, tzinfo=BERLIN), datetime(2026, 3, 2, tzinfo=BERLIN)
    )
    assert season.start == utc(2026, 3, 1) and season.start.tzinfo is UTC


def test_closed_and_ttl() -> None:
    day = UTC_PLAN.window(DAY, utc(2026, 11, 21, 10))
    assert not day.is_closed(utc(2026, 11, 21, 23, 59, 59))
    assert day.is_closed(utc(2026, 11, 22))
    week = timedelta(days=7)
    assert day.ttl_ms(utc(2026, 11, 21, 10), week) == (14 + 7 * 24) * 3_600_000
    assert day.ttl_ms(utc(2026, 11, 21, 10).timestamp() + 0.0004, week) == (
        (14 + 7 * 24) * 3_600_000
    )  # rounded up: 0.4 ms short of a whole millisecond still gives it
    assert day.ttl_ms(utc(2026, 11, 29) - timedelta(microseconds=1), week) == 1
    assert day.ttl_ms(utc(2026, 11, 29), week) == 0
    assert day.ttl_ms(utc(2027, 1, 1), week) == 0
    plan = WindowPlan(kinds=(DAY,), retention=timedelta(hours=1))
    assert plan.ttl_ms(day, utc(2026, 11, 21, 23)) == 2 * 3_600_000
    assert plan.ttl_ms(SUMMER.window, utc(2026, 8, 31, 23)) == 2 * 3_600_000


@pytest.mark.parametrize(
    "window_id",
    [
        "",
        "d2026-1-01",
        "d2026-13-01",
        "w2026-W54",
        "w2025-W53",
        "w2026-W00",
        "m2026-00",
        "m2026-13",
        "x2026",
        "All",
        "s:nope",
        "d2026-11-21 ",
        "d20261121",
    ],
)
def test_bad_window_ids(window_id: str) -> None:
    with pytest.raises(WindowError):
        UTC_PLAN.window_for_id(window_id)


def test_bad_configuration() -> None:
    with pytest.raises(WindowError, match="end after"):
        Season("x", utc(2026, 1, 2), utc(2026, 1, 2))
    with pytest.raises(WindowError, match="naive"):
        Season("x", datetime(2026, 1, 1), utc(2026, 1, 2))
    with pytest.raises(WindowError, match="season name"):
        Season("a{b}", utc(2026, 1, 1), utc(2026, 1, 2))
    with pytest.raises(WindowError, match="repeat"):
        WindowPlan(kinds=(DAY, DAY))
    with pytest.raises(WindowError, match="repeat"):
        WindowPlan(seasons=(SUMMER, SUMMER))
    with pytest.raises(WindowError, match="seasons go in"):
        WindowPlan(kinds=(WindowKind.SEASON,))
    with pytest.raises(WindowError, match="unknown window kind"):
        WindowPlan(kinds=("hourly",))  # type: ignore[arg-type]
    with pytest.raises(WindowError, match="tzinfo"):
        WindowPlan(timezone="Europe/Berlin")  # type: ignore[arg-type]
    with pytest.raises(WindowError, match="retention"):
        WindowPlan(retention=timedelta(seconds=-1))
    with pytest.raises(WindowError, match="by name"):
        UTC_PLAN.window(WindowKind.SEASON, utc(2026, 1, 1))


def test_kind_names_parse() -> None:
    assert WindowPlan(kinds=("daily", "all")).kinds == (DAY, ALL)  # type: ignore[arg-type]
    assert WindowKind.parse("weekly") is WEEK


@pytest.mark.parametrize("at", [datetime(2026, 1, 1), float("nan"), "2026-01-01"])
def test_bad_instants(at: object) -> None:
    with pytest.raises(WindowError):
        UTC_PLAN.windows_at(at)  # type: ignore[arg-type]


def test_year_9999_is_a_typed_error() -> None:
    with pytest.raises(WindowError, match="9999"):
        UTC_PLAN.window(DAY, utc(9999, 12, 31, 12))
