"""Time windows: ids across day / ISO-week / month / year boundaries, seasons, TTLs,
retention. Instants are pinned with ``at=`` (every backend) or a fake memory clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ranked.backends.memory import MemoryBackend
from ranked.core.keys import BoardKeys
from ranked.core.windows import Season, WindowKind, WindowPlan
from ranked.errors import WindowError
from ranked.leaderboard import Leaderboard

from .conftest import Env, FakeClock

LONG = timedelta(days=36500)  # keeps 2026 windows alive on a real server's clock
PLAN = WindowPlan(
    kinds=(WindowKind.DAILY, WindowKind.WEEKLY, WindowKind.MONTHLY, WindowKind.ALL_TIME),
    retention=LONG,
)


def at(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, us: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, us, tzinfo=UTC)


def test_window_ids_across_the_year_boundary(env: Env) -> None:
    board = Leaderboard(env.backend, "cal", windows=PLAN, operator="incr")
    last = board.submit("a", 1, at=at(2026, 12, 31, 23, 59, 59))
    assert set(last.windows) == {"d2026-12-31", "w2026-W53", "m2026-12", "all"}
    assert last.window == "d2026-12-31"
    first = board.submit("a", 2, at=at(2027, 1, 1))
    assert set(first.windows) == {"d2027-01-01", "w2026-W53", "m2027-01", "all"}
    assert first.windows["w2026-W53"].score == 3.0
    assert first.windows["d2027-01-01"].score == 2.0
    monday = board.submit("a", 4, at=at(2027, 1, 4))
    assert set(monday.windows) == {"d2027-01-04", "w2027-W01", "m2027-01", "all"}
    assert monday.windows["all"].score == 7.0
    # closed windows stay readable (retention), by id or season-less alias
    assert board.score("a", window="d2026-12-31") == 1.0
    assert board.score("a", window="w2026-W53") == 3.0
    assert board.score("a", window="m2027-01") == 6.0
    assert board.top(1, window="all")[0].score == 7.0


def test_iso_week_year_differs_from_calendar_year(env: Env) -> None:
    board = Leaderboard(env.backend, "iso", windows=PLAN)
    result = board.submit("a", 1, at=at(2021, 1, 3, 12))
    assert "w2020-W53" in result.windows and "m2021-01" in result.windows


def test_windowed_keys_have_ttls_all_time_has_none(env: Env) -> None:
    plan = WindowPlan(kinds=(WindowKind.DAILY, WindowKind.ALL_TIME), retention=LONG)
    board = Leaderboard(env.backend, "ttl", windows=plan)
    now = datetime.fromtimestamp(env.backend.now_ms() / 1000, UTC)
    board.submit("a", 1, at=now)
    keys = BoardKeys("ttl")
    day = board.window_id("daily")
    ttl = env.pttl(keys.window(day))
    window = plan.window(WindowKind.DAILY, now)
    assert window.end is not None
    expected = (window.end + LONG - now).total_seconds() * 1000
    assert ttl is not None and expected - 60_000 < ttl <= expected + 1000
    assert env.pttl(keys.window("all")) is None


def test_submissions_past_retention_skip_closed_windows(env: Env) -> None:
    plan = WindowPlan(kinds=(WindowKind.DAILY, WindowKind.ALL_TIME), retention=timedelta(days=1))
    board = Leaderboard(env.backend, "old", windows=plan)
    result = board.submit("a", 5, at=at(2020, 5, 5))
    assert set(result.windows) == {"all"} and result.window == "all"
    daily_only = Leaderboard(
        env.backend, "old2", windows=WindowPlan(kinds=(WindowKind.DAILY,), retention=timedelta(0))
    )
    with pytest.raises(WindowError):
        daily_only.submit("a", 5, at=at(2020, 5, 5))
    assert daily_only.count(window="d2020-05-05") == 0


def test_seasons_have_exact_bounds(env: Env) -> None:
    season = Season("s1", at(2026, 11, 1, 12), at(2026, 11, 8, 12))
    plan = WindowPlan(kinds=(WindowKind.ALL_TIME,), seasons=(season,), retention=LONG)
    board = Leaderboard(env.backend, "seasons", windows=plan, operator="incr")
    before = board.submit("a", 1, at=at(2026, 11, 1, 11, 59, 59))
    inside = board.submit("a", 2, at=at(2026, 11, 1, 12))
    last_ms = board.submit("a", 4, at=at(2026, 11, 8, 11, 59, 59, 999000))
    after = board.submit("a", 8, at=at(2026, 11, 8, 12))
    assert set(before.windows) == {"all"} and set(after.windows) == {"all"}
    assert set(inside.windows) == {"all", "s:s1"} and "s:s1" in last_ms.windows
    assert board.score("a", window="season:s1") == 6.0
    assert board.score("a", window="s:s1") == 6.0
    assert board.score("a") == 15.0


def test_unknown_or_unkept_windows_are_errors(env: Env) -> None:
    board = Leaderboard(env.backend, "w", windows=("daily",))
    for window in ("weekly", "w2026-W01", "season:nope", "garbage", "d2026-02-30"):
        with pytest.raises(WindowError):
            board.top(1, window=window)
    assert board.window_id() == board.window_id("daily")


def test_fake_clock_rolls_windows_and_expires_them() -> None:
    clock = FakeClock(at(2026, 3, 31, 23, 0).timestamp())
    backend = MemoryBackend(clock=clock)
    plan = WindowPlan(kinds=(WindowKind.DAILY, WindowKind.ALL_TIME), retention=timedelta(days=2))
    board = Leaderboard(backend, "clocked", windows=plan, operator="incr")
    board.submit("a", 1)
    assert board.window_id() == "d2026-03-31"
    clock.advance(3600)  # 2026-04-01 00:00
    assert board.window_id() == "d2026-04-01"
    assert board.submit("a", 1).windows.keys() == {"d2026-04-01", "all"}
    assert board.top(1)[0].score == 1.0
    assert board.score("a", window="d2026-03-31") == 1.0  # closed, retained
    clock.advance(2 * 86400 - 1)  # 2026-04-02 23:59:59: still within retention
    assert board.count(window="d2026-03-31") == 1
    clock.advance(1.001)  # just past 2026-04-03 00:00 = end + 2 days (Redis: now > deadline)
    assert board.count(window="d2026-03-31") == 0
    assert board.score("a", window="all") == 2.0
