"""Friend boards, member data and board metadata (every backend)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from ranked.backends.generic import HASH_GET
from ranked.backends.procedure import Operation
from ranked.core.lex import LexLayout
from ranked.core.models import Entry
from ranked.errors import UnknownRankStyleError, WindowError
from ranked.leaderboard import BoardConfigError, FriendsBoard, Leaderboard, MemberDataError
from ranked.leaderboard._procedures import SWAP_FIELD
from ranked.leaderboard.results import FriendsBoard as ResultType

from .conftest import Env, assert_refused


def social(env: Env) -> Leaderboard:
    board = Leaderboard(env.backend, "social", operator="set")
    board.submit_many([("me", 50), ("ann", 80), ("bob", 50), ("cy", 10), ("stranger", 99)])
    return board


def test_friends_board_ranks_among_friends(env: Env) -> None:
    board = social(env)
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


def test_a_member_without_friends_is_ranked_alone(env: Env) -> None:
    board = social(env)
    alone = board.friends_board("me")  # before: [] (no friend set)
    assert list(alone) == [Entry("me", 50.0, 1)]
    assert (alone.rank, alone.member_index, alone.member) == (1, 0, Entry("me", 50.0, 1))
    nobody = board.friends_board("ghost")  # not on the board, no friends: nothing
    assert (list(nobody), nobody.rank, nobody.member) == ([], None, None)
    board.add_friends("ghost", ["ann", "cy"])  # not on the board, friends who are
    absent = board.friends_board("ghost")
    assert [e.member for e in absent] == ["ann", "cy"] and absent.rank is None
    assert isinstance(absent, FriendsBoard) and ResultType is FriendsBoard


def test_the_member_knows_its_own_rank_among_friends(env: Env) -> None:
    board = social(env)
    board.add_friends("me", ["ann", "bob", "cy"])
    got = board.friends_board("me")
    assert [(e.member, e.rank) for e in got] == [("ann", 1), ("me", 2), ("bob", 2), ("cy", 4)]
    assert (got.rank, got.member_index) == (2, 1)
    unique = board.friends_board("me", style="unique")
    assert (unique.rank, unique.member_index, unique[1].member) == (2, 1, "me")
    assert len(unique) == 4 and unique[-1].member == "cy"
    alone = Leaderboard(env.backend, "social", max_page_size=2).friends_board("cy")
    assert list(alone) == [Entry("cy", 10.0, 1)] and alone.rank == 1
    board.add_friends("cy", ["ann", "me", "bob"])
    bounded = Leaderboard(env.backend, "social", max_page_size=2).friends_board("cy")
    assert [e.member for e in bounded] == ["ann", "me"]
    assert (bounded.rank, bounded.member_index, bounded.member) == (4, None, None)


def test_friend_boards_show_current_scores(env: Env) -> None:
    board = social(env)
    board.add_friends("me", ["ann"])
    assert [(e.member, e.score) for e in board.friends_board("me")] == [
        ("ann", 80.0),
        ("me", 50.0),
    ]
    board.submit("me", 90)  # before: the cached view kept 50 for friends_cache_ms
    board.remove("ann")
    assert [(e.member, e.score) for e in board.friends_board("me")] == [("me", 90.0)]
    board.submit("ann", 100)
    assert [e.member for e in board.friends_board("me")] == ["ann", "me"]


def test_friend_boards_write_nothing_and_refuse_before_reading(env: Env) -> None:
    board = social(env)
    board.add_friends("me", ["ann"])
    before = env.snapshot()
    board.friends_board("me")
    board.friends_board("me", style="dense")
    assert env.snapshot() == before  # before: a cached view key per member and window
    # Before: the view key was written, then the style refused.
    assert_refused(env, UnknownRankStyleError, lambda: board.friends_board("me", style="bogus"))
    assert_refused(env, WindowError, lambda: board.friends_board("me", window="monthly"))
    assert_refused(env, TypeError, lambda: board.friends_board(7))  # type: ignore[arg-type]
    lex = Leaderboard(env.backend, "lexf", tie_break=LexLayout(descending=(True,)))
    assert_refused(env, BoardConfigError, lambda: lex.friends_board("me"))


def test_merge_metadata_is_a_shallow_merge(env: Env) -> None:
    board = social(env)
    assert board.merge_metadata({"title": "Cup"}) == {"title": "Cup"}  # none stored yet
    board.set_metadata({"title": "Weekly cup", "prize": 100, "rules": {"max": 3}})
    merged = board.merge_metadata({"prize": 250, "sponsor": None, "rules": {"min": 1}})
    assert merged == {"title": "Weekly cup", "prize": 250, "sponsor": None, "rules": {"min": 1}}
    assert board.metadata() == merged
    assert board.merge_metadata({}) == merged
    other = Leaderboard(env.backend, "social")  # another process's view: the same data
    assert other.merge_metadata({"title": "Renamed"})["prize"] == 250
    assert board.metadata()["title"] == "Renamed"
    assert_refused(env, MemberDataError, lambda: board.merge_metadata({"x": {1, 2}}))
    assert_refused(env, MemberDataError, lambda: board.merge_metadata(["x"]))  # type: ignore[arg-type]


def test_concurrent_merges_lose_nothing(env: Env) -> None:
    board = social(env)
    board.set_metadata({"base": 0})
    errors: list[BaseException] = []

    def merge(worker: int) -> None:
        try:
            for step in range(15):
                board.merge_metadata({f"w{worker}-{step}": step})
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=merge, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    found = board.metadata()
    assert len(found) == 1 + 6 * 15  # a plain read-modify-write would lose some
    assert found["w5-14"] == 14 and found["base"] == 0


def test_merged_metadata_keeps_the_board_deadline(env: Env) -> None:
    board = social(env)
    board.expire_at(time.time() + 3600)
    board.merge_metadata({"title": "Timed"})
    ttl = env.pttl(board.config.keys.meta)
    assert ttl is not None and 0 < ttl <= 3_600_000


def test_swap_field_writes_only_over_the_value_read(env: Env) -> None:
    key = b"rk:{swap}:meta"
    swap = env.backend.bind(Operation.raw(SWAP_FIELD))
    assert swap([key], [b"f", b"", 0, b"one", b""]) is True
    assert swap([key], [b"f", b"", 0, b"two", b""]) is False  # no longer absent
    assert swap([key], [b"f", b"stale", 1, b"two", b""]) is False
    assert env.backend.bind(HASH_GET)(key, [b"f"]) == [b"one"] and env.pttl(key) is None
    assert swap([key], [b"f", b"one", 1, b"two", 5_000]) is True
    assert env.backend.bind(HASH_GET)(key, [b"f"]) == [b"two"]
    ttl = env.pttl(key)
    assert ttl is not None and 0 < ttl <= 5_000


class Counting:
    """A backend that counts the calls a board makes (each is one round trip on Redis)."""

    def __init__(self, backend: Any) -> None:
        self.inner = backend
        self.calls: list[str] = []
        self.url, self.cross_slot, self.now_ms = backend.url, backend.cross_slot, backend.now_ms

    def _counted(self, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any) -> Any:
            self.calls.append(name)
            return call(*args)

        return counted

    def bind(self, step: Any) -> Callable[..., Any]:
        return self._counted(repr(step), self.inner.bind(step))

    def accelerate(self, step: Any) -> None:
        return None

    def accelerate_now(self, step: Any) -> None:
        return None

    def close(self) -> None:
        self.inner.close()


def test_pages_carry_member_data_in_one_more_call(env: Env) -> None:
    board = social(env)
    board.set_member_data("ann", "Ann", {"level": 3})
    board.set_member_data("me", "Me")
    counting = Counting(env.backend)
    view = Leaderboard(counting, "social", operator="set")

    def calls(read: Callable[[], object]) -> int:
        counting.calls.clear()
        read()
        return len(counting.calls)

    top = view.top(3, with_data=True)
    assert [(e.member, e.data and e.data.display_name) for e in top] == [
        ("stranger", None),
        ("ann", "Ann"),
        ("me", "Me"),
    ]
    ann = top[1].data
    assert ann is not None and ann.member == "ann" and dict(ann.metadata) == {"level": 3}
    assert view.top(3)[1].data is None  # opt-in
    assert calls(lambda: view.top(5, with_data=True)) == calls(lambda: view.top(5)) + 1
    page = view.page(size=2, with_data=True)
    assert [e.data is not None for e in page.entries] == [False, True]
    assert page.next_cursor is not None
    after = view.page(page.next_cursor, with_data=True)
    assert [e.member for e in after.entries if e.data] == ["me"]
    assert calls(lambda: view.page(page.next_cursor, with_data=True)) == 2
    assert [e.member for e in view.page_at(1, 2, with_data=True).entries if e.data] == [
        "ann",
        "me",
    ]
    around = view.around("bob", 1, 1, with_data=True)
    assert [e.data.display_name if e.data else None for e in around.entries] == ["Me", None, None]
    assert calls(lambda: view.around("bob", 1, 1, with_data=True)) == 2
    assert [e.member for e in view.between(50, 80, with_data=True) if e.data] == ["ann", "me"]
    assert calls(lambda: view.between(50, 80, with_data=True)) == 2
    board.add_friends("me", ["ann", "cy"])
    friends = view.friends_board("me", with_data=True)
    assert [e.data is not None for e in friends] == [True, True, False]
    assert calls(lambda: view.friends_board("me", with_data=True)) == 2
    assert calls(lambda: view.top(5, with_data=True)) == 2  # never one call per entry
    assert Leaderboard(env.backend, "nobody").top(3, with_data=True) == []
