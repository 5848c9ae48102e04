"""Trimming (keep + buffer, rehydration hook), remove, clear, expiry (every backend)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ranked.backends.memory import MemoryBackend
from ranked.core.models import Member
from ranked.core.windows import Season, WindowKind, WindowPlan
from ranked.leaderboard import BoardConfigError, Leaderboard

from .conftest import Env, FakeClock


def test_keep_trims_to_top_n_plus_buffer(env: Env) -> None:
    board = Leaderboard(env.backend, "kept", keep=3, keep_buffer=1, operator="set")
    board.submit_many([(f"p{i}", float(i)) for i in range(1, 7)])
    assert board.count() == 4
    assert [e.member for e in board.top(10)] == ["p6", "p5", "p4", "p3"]
    trimmed = board.submit("low", 0.5)
    assert trimmed.rank is None and trimmed.windows["all"].rank is None
    assert board.score("low") is None
    climbed = board.submit("p0", 5.5)
    assert climbed.rank == 2 and board.count() == 4


def test_trimmed_member_rehydrates_from_history(env: Env) -> None:
    history: dict[Member, float] = {"old": 40.0}
    asked: list[Member] = []

    def lookup(member: Member) -> float | None:
        asked.append(member)
        return history.get(member)

    board = Leaderboard(env.backend, "hydrate", operator="incr", keep=2, on_trimmed_lookup=lookup)
    board.submit_many([("a", 100), ("b", 90)])
    assert asked == ["a", "b"]
    back = board.submit("old", 70)  # 40 from history + 70
    assert (back.score, back.rank) == (110.0, 1)
    assert board.count() == 2
    assert board.submit("old", 1).score == 111.0  # on the board: no lookup
    assert asked == ["a", "b", "old"]
    best = Leaderboard(env.backend, "hydrate2", operator="best", keep=2, on_trimmed_lookup=lookup)
    assert best.submit("old", 10).score == 40.0
    assert best.submit("new", 10).score == 10.0
    assert best.submit("old", 5, operator="set").score == 5.0  # set never looks up


def test_rehydration_only_touches_the_primary_window(env: Env) -> None:
    plan = WindowPlan(kinds=(WindowKind.ALL_TIME, WindowKind.DAILY), retention=timedelta(days=1))
    board = Leaderboard(
        env.backend, "hyd", windows=plan, operator="incr", on_trimmed_lookup=lambda m: 1000.0
    )
    result = board.submit("vet", 5)
    assert result.window == "all" and result.score == 1005.0
    assert result.windows[board.window_id("daily")].score == 5.0


def test_remove_member_everywhere(env: Env) -> None:
    board = Leaderboard(env.backend, "rm", windows=("daily", "all"))
    board.submit_many([("a", 1), ("b", 2)])
    board.set_member_data("a", "A")
    board.add_friends("a", ["b"])
    assert board.remove("a") is True
    assert board.score("a") is None and board.score("a", window="daily") is None
    assert board.member_data(["a"]) == {}
    assert board.friends("a") == set()
    assert board.remove("a") is False
    assert board.score("b") == 2.0


def test_clear_deletes_every_key(env: Env) -> None:
    board = Leaderboard(env.backend, "clr", windows=("daily", "weekly", "all"))
    keep = Leaderboard(env.backend, "untouched")
    keep.submit("x", 1)
    board.submit_many([("a", 1), ("b", 2)])
    board.set_member_data("a", "A", {"k": 1})
    board.set_metadata({"t": 1})
    board.add_friends("a", ["b"])
    assert board.friends_board("a")
    before = {key for key in env.all_keys() if b"{clr}" in key}
    assert before
    assert board.clear() >= 4
    assert {key for key in env.all_keys() if b"{clr}" in key} == set()
    assert keep.score("x") == 1.0
    assert board.submit("a", 3).rank == 1  # the board is usable again


def test_expire_at_sets_deadlines(env: Env) -> None:
    board = Leaderboard(env.backend, "exp", windows=("daily", "all"))
    board.submit("a", 1)
    board.set_member_data("a", "A")
    deadline = datetime.fromtimestamp(env.backend.now_ms() / 1000, UTC) + timedelta(hours=1)
    board.expire_at(deadline)
    for key in (k for k in env.all_keys() if b"{exp}" in k):
        ttl = env.pttl(key)
        # now_ms() of a Redis backend estimates the server clock: allow a few ms of skew.
        assert ttl is not None and 3_500_000 < ttl <= 3_600_050, key
    board.submit("b", 2)  # later writes inherit the deadline, even all-time
    board.set_member_data("b", "B")
    for key in (k for k in env.all_keys() if b"{exp}" in k):
        ttl = env.pttl(key)
        assert ttl is not None and ttl <= 3_600_000, key


def test_expire_after_season_end_with_fake_clock() -> None:
    start = datetime(2026, 6, 1, tzinfo=UTC)
    clock = FakeClock(start.timestamp())
    backend = MemoryBackend(clock=clock)
    season = Season("june", start, datetime(2026, 7, 1, tzinfo=UTC))
    board = Leaderboard(
        backend, "cup", windows=WindowPlan(kinds=(WindowKind.ALL_TIME,), seasons=(season,))
    )
    board.submit("a", 1)
    board.set_member_data("a", "A")
    board.expire_after_end("june", timedelta(days=3))
    clock.now = datetime(2026, 7, 3, 23, tzinfo=UTC).timestamp()
    assert board.score("a", window="season:june") == 1.0
    clock.now = datetime(2026, 7, 4, 0, 0, 1, tzinfo=UTC).timestamp()
    assert board.score("a") is None and board.score("a", window="season:june") is None
    assert board.member_data(["a"]) == {}
    with backend.lock:
        backend.keyspace.expire_pending(1000)
    assert backend.keyspace.execute("KEYS", "*") == []


def test_config_errors() -> None:
    backend = MemoryBackend()
    for options in (
        {"keep": 0},
        {"keep_buffer": -1},
        {"max_page_size": 0},
        {"operator": "max"},
        {"tie_break": "hash"},
        {"windows": WindowPlan(kinds=())},
    ):
        with pytest.raises(BoardConfigError):
            Leaderboard(backend, "bad", **options)
    with pytest.raises(ValueError):
        Leaderboard(backend, "bad{name}")


def test_keep_buffer_without_keep_is_refused() -> None:
    backend = MemoryBackend()
    with pytest.raises(BoardConfigError, match="keep_buffer=2 needs keep"):
        Leaderboard(backend, "buffered", keep_buffer=2)
    assert Leaderboard(backend, "kept", keep=2, keep_buffer=2).config.trim_to == 4
    assert Leaderboard(backend, "plain", keep_buffer=0).config.trim_to is None
    assert backend.keyspace.execute("KEYS", "*") == []  # building a board writes nothing
