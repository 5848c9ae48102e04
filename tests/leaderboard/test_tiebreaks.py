"""Secondary-hash and lexicographic tie-breaks (seed 000) on every backend."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from ranked.backends.generic import HASH_GET
from ranked.core.keys import BoardKeys
from ranked.core.lex import LexLayout
from ranked.core.models import Entry, Member
from ranked.errors import OutOfRangeError
from ranked.leaderboard import BoardConfigError, Leaderboard

from .conftest import Env

T0 = 1_790_000_000  # Unix seconds


def secondary(env: Env, name: str = "tb", **options: object) -> Leaderboard:
    return Leaderboard(env.backend, name, tie_break="secondary", **options)  # type: ignore[arg-type]


def members(entries: Sequence[Entry]) -> list[Member]:
    return [e.member for e in entries]


def test_seed_000_redis_order_without_tie_break(env: Env) -> None:
    board = Leaderboard(env.backend, "plain")
    board.submit_many([("alice", 100), ("bob", 100), ("charlie", 100)])
    assert members(board.top(3)) == ["charlie", "bob", "alice"]


def test_secondary_seed_000_earlier_wins(env: Env) -> None:
    board = secondary(env)
    for second, member in enumerate(["charlie", "bob", "alice"]):
        board.submit(member, 100, at=T0 + second)
    assert members(board.top(3)) == ["charlie", "bob", "alice"]
    flipped = secondary(env, "flipped")
    for second, member in enumerate(["alice", "bob", "charlie"]):
        flipped.submit(member, 100, at=T0 + second)
    assert [(e.member, e.rank) for e in flipped.top(3, style="unique")] == [
        ("alice", 1),
        ("bob", 2),
        ("charlie", 3),
    ]
    assert [flipped.rank(m, style="unique") for m in ("alice", "bob", "charlie")] == [1, 2, 3]
    assert [flipped.rank(m) for m in ("alice", "bob", "charlie")] == [1, 1, 1]
    assert [flipped.rank(m, style="dense") for m in ("alice", "bob", "charlie")] == [1, 1, 1]


def test_secondary_value_only_changes_with_the_score(env: Env) -> None:
    board = secondary(env)
    board.submit("bob", 100, at=T0)
    board.submit("alice", 100, at=T0 + 1)
    assert board.submit("bob", 100, at=T0 + 5).changed is False  # keeps its earlier time
    assert members(board.top(2)) == ["bob", "alice"]
    board.submit("bob", 90, operator="set", at=T0 + 6)
    board.submit("bob", 100, at=T0 + 7)  # reached 100 again, later than alice
    assert members(board.top(2)) == ["alice", "bob"]
    hashed = env.backend.bind(HASH_GET)(BoardKeys("tb").ties("all"), [b"bob", b"alice"])
    assert hashed == [b"%d" % ((T0 + 7) * 1000), b"%d" % ((T0 + 1) * 1000)]


def test_secondary_caller_value_and_bad_values(env: Env) -> None:
    board = secondary(env)
    board.submit("zed", 5, tie=3)
    board.submit("amy", 5, tie=7)
    assert members(board.top(2)) == ["zed", "amy"]
    with pytest.raises(OutOfRangeError):
        board.submit("amy", 6, tie=1 << 63)
    assert board.score("amy") == 5.0
    with pytest.raises(BoardConfigError):
        Leaderboard(env.backend, "other").submit("a", 1, tie=1)
    with pytest.raises(BoardConfigError):
        secondary(env, "bad", rank_style="unique")
    with pytest.raises(BoardConfigError):
        Leaderboard(env.backend, "gone", tie_break="secondary_nonatomic")  # type: ignore[arg-type]


def _big_tie(env: Env, higher_is_better: bool = True) -> tuple[Leaderboard, list[str]]:
    """40 members: 10 at score 50, 25 tied at 20, 5 at 10; ties reverse member order."""
    board = secondary(env, higher_is_better=higher_is_better)
    board.submit_many([(f"top{i:02d}", 50 if higher_is_better else 5) for i in range(10)])
    for i in range(25):
        board.submit(f"m{i:02d}", 20, tie=100 - i)  # m24 has the lowest value: it leads
    board.submit_many([(f"low{i}", 10 if higher_is_better else 30) for i in range(5)])
    tied = [f"m{i:02d}" for i in reversed(range(25))]
    return board, tied


@pytest.mark.parametrize("higher_is_better", [True, False])
def test_secondary_pages_across_tie_groups(env: Env, higher_is_better: bool) -> None:
    board, tied = _big_tie(env, higher_is_better)
    everything = [e for e in board.top(40, style="unique")]
    order = members(everything)
    assert order[10:35] == tied
    assert [e.rank for e in everything] == list(range(1, 41))
    for offset, size in ((8, 5), (12, 3), (30, 7), (33, 10)):
        page = board.page_at(offset, size, style="unique")
        assert members(page.entries) == order[offset : offset + size]
        assert [e.rank for e in page.entries] == list(range(offset + 1, min(offset + size, 40) + 1))
    seen: list[Member] = []
    page = board.page(size=4)
    while True:
        seen += members(page.entries)
        if page.next_cursor is None:
            break
        page = board.page(page.next_cursor)
    assert seen == order
    assert [board.rank(m, style="unique") for m in order] == list(range(1, 41))
    assert [r.member for r in board.ranks_of(["m00", "m24", "m12"], style="unique")] == [
        "m24",
        "m12",
        "m00",
    ]
    view = board.around("m12", before=2, after=2, style="unique")
    assert members(view.entries) == order[20:25] and view.member_index == 2
    edge = board.around("m24", before=20, after=1)
    assert members(edge.entries) == order[0:22] and edge.member_index == 10
    assert members(board.between(20, 20, offset=3, count=4)) == tied[3:7]


def test_secondary_remove_and_friends(env: Env) -> None:
    board = secondary(env)
    board.submit("b", 7, tie=2)
    board.submit("a", 7, tie=1)
    board.submit("c", 7, tie=3)
    board.add_friends("c", ["a", "b"])
    assert members(board.friends_board("c")) == ["a", "b", "c"]
    assert board.remove("a") is True
    assert env.backend.bind(HASH_GET)(BoardKeys("tb").ties("all"), [b"a"]) == [None]
    assert members(board.top(3)) == ["b", "c"]


def test_secondary_keep_trims_values_too(env: Env) -> None:
    board = secondary(env, keep=2)
    board.submit("a", 30, tie=3)
    board.submit("b", 20, tie=2)
    board.submit("c", 10, tie=1)  # trimmed at once
    board.submit("d", 20, tie=1)  # ties b; b is cut (member bytes order among equal scores)
    ties = BoardKeys("tb").ties("all")
    assert env.backend.bind(HASH_GET)(ties, [b"a", b"b", b"c", b"d"]) == [b"3", None, None, b"1"]
    assert members(board.top(5)) == ["a", "d"]


def test_secondary_windows_write_values_atomically(env: Env) -> None:
    board = secondary(env, "win", windows=("daily", "all"))
    today = int(time.time()) // 86_400 * 86_400 + 3_600
    board.submit("a", 10, at=today, tie=5)
    board.submit("a", 8, at=today + 86_400, tie=7)  # a new day: only the daily score changes
    day_two = board._plan.windows.window_id("daily", (today + 86_400) * 1000)
    keys = BoardKeys("win")
    assert env.backend.bind(HASH_GET)(keys.ties("all"), [b"a"]) == [b"5"]
    assert env.backend.bind(HASH_GET)(keys.ties(day_two), [b"a"]) == [b"7"]


def lex_board(env: Env, name: str = "lex", **options: object) -> Leaderboard:
    layout = LexLayout(descending=(True, False))  # highest score first, then earliest
    return Leaderboard(env.backend, name, tie_break=layout, operator="set", **options)  # type: ignore[arg-type]


def test_lex_seed_000(env: Env) -> None:
    board = lex_board(env)
    for second, member in enumerate(["charlie", "bob", "alice"]):
        result = board.submit_lex(member, (100, second))
        assert result.score == 100 and result.rank is not None
    board.submit_lex("dan", (101, 9))
    assert [(e.member, e.score, e.rank) for e in board.top(4)] == [
        ("dan", 101, 1),
        ("charlie", 100, 2),
        ("bob", 100, 3),
        ("alice", 100, 4),
    ]
    assert board.rank("bob") == 3 and board.score("bob") == 100 and board.rank("zed") is None
    assert [r.member for r in board.ranks_of(["alice", "zed", "dan"])] == ["dan", "alice", "zed"]
    first = board.page(size=2)
    assert members(first.entries) == ["dan", "charlie"]
    assert first.next_cursor is not None
    assert members(board.page(first.next_cursor).entries) == ["bob", "alice"]
    view = board.around("alice", before=1, after=1)
    assert members(view.entries) == ["charlie", "bob", "alice"] and view.member_index == 2
    assert board.count() == 4


def test_lex_replace_best_and_remove(env: Env) -> None:
    board = lex_board(env)
    board.submit_lex("amy", (5, 1))
    board.submit_lex("ben", (7, 1))
    moved = board.submit_lex("amy", (9, 2))
    assert (moved.previous_score, moved.score, moved.previous_rank, moved.rank) == (5, 9, 2, 1)
    assert board.count() == 2
    kept = board.submit_lex("amy", (1, 0), operator="best")
    assert kept.changed is False and board.score("amy") == 9
    assert board.remove("amy") is True
    assert members(board.top(5)) == ["ben"] and board.count() == 1


def test_lex_unsupported(env: Env) -> None:
    board = lex_board(env)
    board.submit_lex("amy", (5, 1))
    with pytest.raises(BoardConfigError, match="dense"):
        board.rank("amy", style="dense")
    with pytest.raises(BoardConfigError, match="dense"):
        board.top(3, style="dense")
    with pytest.raises(BoardConfigError):
        board.submit("amy", 5)
    with pytest.raises(BoardConfigError):
        lex_board(env, "bad", keep=2)
    with pytest.raises(BoardConfigError):
        board.submit_lex("amy", (1, 1), operator="incr")
    with pytest.raises(OutOfRangeError):
        board.submit_lex("amy", (1 << 63, 0))
    assert board.score("amy") == 5


def _lex_tie(env: Env) -> Leaderboard:
    """Scores 9, 7, 7 (same time: a full tie), 7 (later), 3; highest first, then earliest."""
    board = lex_board(env)
    for member, fields in [
        ("ann", (9, 1)),
        ("bob", (7, 2)),
        ("cat", (7, 2)),
        ("dan", (7, 5)),
        ("eve", (3, 1)),
    ]:
        board.submit_lex(member, fields)
    return board


def test_lex_competition_ranks_tie_on_every_field(env: Env) -> None:
    board = _lex_tie(env)
    assert [(e.member, e.rank) for e in board.top(5)] == [
        ("ann", 1),
        ("bob", 2),
        ("cat", 3),
        ("dan", 4),
        ("eve", 5),
    ]
    expected = [("ann", 1), ("bob", 2), ("cat", 2), ("dan", 4), ("eve", 5)]
    assert [(e.member, e.rank) for e in board.top(5, style="competition")] == expected
    assert [board.rank(m, style="competition") for m, _ in expected] == [r for _, r in expected]
    page = board.page_at(2, 2, style="competition")
    assert [(e.member, e.rank) for e in page.entries] == [("cat", 2), ("dan", 4)]
    first = board.page(size=2, style="competition")
    assert first.next_cursor is not None
    rest = board.page(first.next_cursor, style="competition")
    assert [(e.member, e.rank) for e in rest.entries] == [("cat", 2), ("dan", 4)]
    view = board.around("cat", before=0, after=1, style="competition")
    assert [(e.member, e.rank) for e in view.entries] == [("cat", 2), ("dan", 4)]
    ranked = board.ranks_of(["dan", "cat", "zed"], style="competition")
    assert [(r.member, r.rank) for r in ranked] == [("cat", 2), ("dan", 4), ("zed", None)]


def test_lex_score_ranges_and_percentile(env: Env) -> None:
    board = _lex_tie(env)
    assert board.count_between(7, 7) == 3
    assert board.count_between(4, 100) == 4
    assert board.count_between(7.5, 7.9) == 0
    assert board.count_between(float("-inf"), float("inf")) == 5
    found = board.between(7, 9)
    assert [(e.member, e.score, e.rank) for e in found] == [
        ("ann", 9, 1),
        ("bob", 7, 2),
        ("cat", 7, 3),
        ("dan", 7, 4),
    ]
    tail = board.between(0, 7, offset=1, count=2, style="competition")
    assert [(e.member, e.rank) for e in tail] == [("cat", 2), ("dan", 4)]
    assert board.between(10, 20) == []
    assert board.percentile("ann") == 80.0  # four entries have a lower score
    assert board.percentile("cat") == 20.0  # ties on the score (first field) do not count
    assert board.percentile("zed") is None
    ascending = Leaderboard(env.backend, "asc", tie_break=LexLayout(descending=(False,)))
    for member, value in [("a", 1), ("b", 2), ("c", 3)]:
        ascending.submit_lex(member, value)
    assert [e.member for e in ascending.between(2, 3)] == ["b", "c"]
    assert ascending.percentile("a") == 200 / 3


def test_lex_windows_and_async(env: Env) -> None:
    import asyncio

    from ranked.leaderboard import AsyncLeaderboard

    board = lex_board(env, "lexw", windows=("daily", "all"))
    result = board.submit_lex("amy", (4, 1))
    assert set(result.windows) == {"all", board.window_id("daily")}
    assert all(w.rank == 1 and w.changed for w in result.windows.values())

    async def main() -> list[tuple[Member, int | None]]:
        backend = env.open_async()
        try:
            layout = LexLayout(descending=(True, False))
            live = AsyncLeaderboard(backend, "lexa", tie_break=layout, operator="best")
            await live.submit_lex("bob", (5, 1))
            kept = await live.submit_lex("bob", (4, 0))
            assert kept.changed is False and kept.score == 5
            await live.submit_lex("amy", (5, 1))
            return [(e.member, e.rank) for e in await live.top(2, style="competition")]
        finally:
            await backend.close()

    assert asyncio.run(main()) == [("amy", 1), ("bob", 1)]
