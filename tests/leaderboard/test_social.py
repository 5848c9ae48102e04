"""Friend boards, member data and board metadata (every backend)."""

from __future__ import annotations

import pytest

from ranked.leaderboard import Leaderboard, MemberDataError

from .conftest import Env


def social(env: Env) -> Leaderboard:
    board = Leaderboard(env.backend, "social", operator="set")
    board.submit_many([("me", 50), ("ann", 80), ("bob", 50), ("cy", 10), ("stranger", 99)])
    return board


def test_friends_board_ranks_among_friends(env: Env) -> None:
    board = social(env)
    assert board.friends_board("me") == []  # no friend set yet
    assert board.add_friends("me", ["ann", "bob", "ghost"]) == 3
    got = board.friends_board("me")
    assert [(e.member, e.score, e.rank) for e in got] == [
        ("ann", 80.0, 1),
        ("me", 50.0, 2),
        ("bob", 50.0, 2),
    ]
    dense = board.friends_board("me", style="unique")
    assert [e.rank for e in dense] == [1, 2, 3]
    assert board.friends("me") == {"ann", "bob", "ghost"}


def test_friend_changes_invalidate_the_cached_view(env: Env) -> None:
    board = social(env)
    board.add_friends("me", ["ann"])
    assert [e.member for e in board.friends_board("me")] == ["ann", "me"]
    assert board.add_friends("me", ["cy", "me"]) == 1  # the member itself is not a friend
    assert [e.member for e in board.friends_board("me")] == ["ann", "me", "cy"]
    assert board.remove_friends("me", ["ann", "me"]) == 1
    assert [e.member for e in board.friends_board("me")] == ["me", "cy"]
    assert board.friends("me") == {"cy"}
    with pytest.raises(TypeError):
        board.add_friends("me", "ann")


def test_friend_boards_follow_windows(env: Env) -> None:
    board = Leaderboard(env.backend, "fw", windows=("daily", "all"), operator="incr")
    board.submit_many([("me", 1), ("ann", 2)])
    board.add_friends("me", ["ann"])
    assert [e.score for e in board.friends_board("me", window="all")] == [2.0, 1.0]
    assert [e.member for e in board.friends_board("me", window="daily")] == ["ann", "me"]


def test_member_data_round_trip(env: Env) -> None:
    board = social(env)
    board.set_member_data("ann", "Ann", {"level": 3, "tags": ["a"], "名": None})
    board.set_member_data(b"\xffbin", None)
    found = board.member_data(["ann", "bob", b"\xffbin"])
    assert set(found) == {"ann", b"\xffbin"}
    assert found["ann"].display_name == "Ann"
    assert found["ann"].metadata == {"level": 3, "tags": ["a"], "名": None}
    assert found[b"\xffbin"].display_name is None and found[b"\xffbin"].metadata == {}
    board.set_member_data("ann", "Annie")  # replaces the whole record
    assert board.member_data(["ann"])["ann"].metadata == {}
    assert board.member_data([]) == {}
    for bad in ({1: 2}, {"x": object()}, {"x": float("nan")}, ["list"]):
        with pytest.raises(MemberDataError):
            board.set_member_data("bob", "Bob", bad)  # type: ignore[arg-type]
    with pytest.raises(MemberDataError):
        board.set_member_data("bob", 7)  # type: ignore[arg-type]
    assert "bob" not in board.member_data(["bob"])


def test_board_metadata_changes_later(env: Env) -> None:
    board = social(env)
    assert board.metadata() == {}
    board.set_metadata({"title": "Weekly cup", "prize": 100})
    other = Leaderboard(env.backend, "social")  # another process's view of the board
    assert other.metadata() == {"title": "Weekly cup", "prize": 100}
    other.set_metadata({"title": "Renamed"})
    assert board.metadata() == {"title": "Renamed"}
    with pytest.raises(MemberDataError):
        board.set_metadata({"x": {1, 2}})
