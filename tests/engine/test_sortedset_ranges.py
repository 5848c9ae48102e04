"""Range reads, cursors, removals, pops and random picks on both implementations."""

from __future__ import annotations

import pytest

from ranked.errors import InvalidScoreError

from .conftest import Impl

INF = float("inf")


def names(pairs: list[tuple[str | bytes, float]]) -> str:
    return "".join(str(member) for member, _ in pairs)


# -- range_by_index ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "stop", "expected"),
    [
        (0, -1, "abcdef"),
        (0, 0, "a"),
        (1, 3, "bcd"),
        (-2, -1, "ef"),
        (-100, 1, "ab"),
        (4, 100, "ef"),
        (6, 10, ""),
        (3, 2, ""),
        (-1, -2, ""),
        (0, -7, ""),
        (0, 2**63 - 1, "abcdef"),
    ],
)
def test_range_by_index(impl: Impl, start: int, stop: int, expected: str) -> None:
    zset = impl({chr(ord("a") + i): i + 1 for i in range(6)})
    assert names(zset.range_by_index(start, stop)) == expected


@pytest.mark.parametrize(
    ("start", "stop", "expected"),
    [(0, -1, "fedcba"), (0, 1, "fe"), (-2, -1, "ba"), (2, 2, "d"), (5, 9, "a"), (6, 9, "")],
)
def test_range_by_index_reverse(impl: Impl, start: int, stop: int, expected: str) -> None:
    zset = impl({chr(ord("a") + i): i + 1 for i in range(6)})
    assert names(zset.range_by_index(start, stop, reverse=True)) == expected


def test_range_by_index_returns_scores(impl: Impl) -> None:
    zset = impl({"a": 1.5, "b": -2})
    assert zset.range_by_index(0, -1) == [("b", -2.0), ("a", 1.5)]
    with pytest.raises(TypeError):
        zset.range_by_index(0.0, 1)  # type: ignore[arg-type]


# -- range_by_score -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, "abcdef"),
        ({"min": 2, "max": 4}, "bcd"),
        ({"min": 2, "max": 4, "min_exclusive": True}, "cd"),
        ({"min": 2, "max": 4, "max_exclusive": True}, "bc"),
        ({"min": 2, "max": 4, "min_exclusive": True, "max_exclusive": True}, "c"),
        ({"min": 3, "max": 3}, "c"),
        ({"min": 3, "max": 3, "min_exclusive": True}, ""),
        ({"min": 4, "max": 2}, ""),
        ({"min": -INF, "max": 2.5}, "ab"),
        ({"min": 5.5, "max": INF}, "f"),
        ({"min": 7}, ""),
        ({"offset": 2}, "cdef"),
        ({"offset": 2, "count": 2}, "cd"),
        ({"offset": 0, "count": 0}, ""),
        ({"offset": 5, "count": 10}, "f"),
        ({"offset": 6}, ""),
        ({"offset": -1, "count": 3}, ""),
        ({"count": -5}, "abcdef"),
        ({"min": 2, "max": 5, "offset": 1, "count": 2}, "cd"),
        ({"min": 2, "max": 5, "offset": 3, "count": 2}, "e"),
    ],
)
def test_range_by_score(impl: Impl, kwargs: dict[str, object], expected: str) -> None:
    zset = impl({chr(ord("a") + i): i + 1 for i in range(6)})
    assert names(zset.range_by_score(**kwargs)) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, "fedcba"),
        ({"min": 2, "max": 4}, "dcb"),  # min then max even when reversed
        ({"min": 4, "max": 2}, ""),
        ({"min": 2, "max": 4, "max_exclusive": True}, "cb"),
        ({"min": 2, "max": 4, "min_exclusive": True}, "dc"),
        ({"offset": 1, "count": 2}, "ed"),
        ({"min": 1, "max": 3, "offset": 2}, "a"),
        ({"min": 1, "max": 3, "offset": 3}, ""),
        ({"offset": -2}, ""),
    ],
)
def test_range_by_score_reverse(impl: Impl, kwargs: dict[str, object], expected: str) -> None:
    zset = impl({chr(ord("a") + i): i + 1 for i in range(6)})
    assert names(zset.range_by_score(reverse=True, **kwargs)) == expected  # type: ignore[arg-type]


def test_range_by_score_ties_and_scores(impl: Impl) -> None:
    zset = impl({"x": 2, "b": 2, "a": 1, "z": 3})
    assert zset.range_by_score(2, 2) == [("b", 2.0), ("x", 2.0)]
    assert zset.range_by_score(2, 2, reverse=True) == [("x", 2.0), ("b", 2.0)]
    assert zset.range_by_score(1, 2, offset=1, count=1) == [("b", 2.0)]


def test_count_by_score(impl: Impl) -> None:
    zset = impl({chr(ord("a") + i): i + 1 for i in range(6)})
    assert zset.count_by_score() == 6
    assert zset.count_by_score(2, 4) == 3
    assert zset.count_by_score(2, 4, min_exclusive=True, max_exclusive=True) == 1
    assert zset.count_by_score(4, 2) == 0
    assert zset.count_by_score(3, 3, max_exclusive=True) == 0
    assert zset.count_by_score(-INF, 0) == 0
    with pytest.raises(InvalidScoreError):
        zset.count_by_score(float("nan"))
    with pytest.raises(TypeError):
        zset.count_by_score("1", 2)  # type: ignore[arg-type]


# -- lex ranges -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, "abcdefg"),
        ({"min": "c"}, "cdefg"),
        ({"max": "c"}, "abc"),
        ({"min": "b", "max": "d"}, "bcd"),
        ({"min": "b", "max": "d", "min_exclusive": True}, "cd"),
        ({"min": "b", "max": "d", "max_exclusive": True}, "bc"),
        ({"min": "bb", "max": "dd"}, "cd"),
        ({"min": "d", "max": "b"}, ""),
        ({"min": "c", "max": "c", "min_exclusive": True}, ""),
        ({"min": "", "max": "a"}, "a"),
        ({"min": "", "min_exclusive": True}, "abcdefg"),
        ({"offset": 2, "count": 3}, "cde"),
        ({"min": "b", "offset": 10}, ""),
        ({"offset": -1}, ""),
        ({"count": 0}, ""),
        ({"min": b"f", "max": b"\xff"}, "fg"),
    ],
)
def test_range_by_lex(impl: Impl, kwargs: dict[str, object], expected: str) -> None:
    zset = impl({m: 0 for m in "abcdefg"})
    assert names(zset.range_by_lex(**kwargs)) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, "gfedcba"),
        ({"min": "b", "max": "d"}, "dcb"),
        ({"min": "b", "max": "d", "max_exclusive": True}, "cb"),
        ({"max": "c", "offset": 1}, "ba"),
        ({"min": "e", "offset": 1, "count": 1}, "f"),
        ({"min": "e", "offset": 3}, ""),
    ],
)
def test_range_by_lex_reverse(impl: Impl, kwargs: dict[str, object], expected: str) -> None:
    zset = impl({m: 0 for m in "abcdefg"})
    assert names(zset.range_by_lex(reverse=True, **kwargs)) == expected  # type: ignore[arg-type]


def test_lex_ranges_are_binary_safe(impl: Impl) -> None:
    zset = impl({b"a": 0, b"a\x00": 0, b"ab": 0, b"\xff": 0}, raw=True)
    assert [m for m, _ in zset.range_by_lex(b"a", b"a", min_exclusive=False)] == [b"a"]
    assert [m for m, _ in zset.range_by_lex(b"a", min_exclusive=True)] == [b"a\x00", b"ab", b"\xff"]
    assert zset.count_by_lex(b"a\x00", b"ab") == 2
    assert zset.count_by_lex(max=b"\xfe") == 3


def test_count_by_lex(impl: Impl) -> None:
    zset = impl({m: 0 for m in "abcdefg"})
    assert zset.count_by_lex() == 7
    assert zset.count_by_lex("b", "d") == 3
    assert zset.count_by_lex("b", "d", min_exclusive=True, max_exclusive=True) == 1
    assert zset.count_by_lex("d", "b") == 0
    assert zset.count_by_lex("zz") == 0
    with pytest.raises(TypeError):
        zset.count_by_lex(1)  # type: ignore[arg-type]


# -- items / cursors ------------------------------------------------------------------------


def test_items_orders(impl: Impl) -> None:
    zset = impl({"b": 2, "a": 1, "c": 2})
    assert list(zset.items()) == [("a", 1.0), ("b", 2.0), ("c", 2.0)]
    assert list(zset.items(reverse=True)) == [("c", 2.0), ("b", 2.0), ("a", 1.0)]
    assert list(zset) == ["a", "b", "c"]


def test_items_after_a_point(impl: Impl) -> None:
    zset = impl({"b": 2, "a": 1, "c": 2, "d": 3})
    assert names(list(zset.items(after=(2, "b")))) == "cd"
    assert names(list(zset.items(after=(2, "bb")))) == "cd"  # need not be a member
    assert names(list(zset.items(after=(2, "")))) == "bcd"
    assert names(list(zset.items(after=(2, "b"), reverse=True))) == "a"
    assert names(list(zset.items(after=(2.5, "x"), reverse=True))) == "cba"
    assert names(list(zset.items(after=(-INF, "")))) == "abcd"
    assert list(zset.items(after=(INF, "zz"))) == []
    with pytest.raises(InvalidScoreError):
        zset.items(after=(float("nan"), "a"))
    with pytest.raises(TypeError):
        zset.items(after=(1, 2))  # type: ignore[arg-type]


def test_items_survives_inserts_and_deletes(impl: Impl) -> None:
    zset = impl({m: i for i, m in enumerate("abcdef")})
    cursor = zset.items()
    assert next(cursor) == ("a", 0.0)
    assert next(cursor) == ("b", 1.0)
    zset.add("bb", 1.5)  # ahead of the cursor: seen
    zset.add("_", -1)  # behind it: not seen
    zset.remove("c")  # ahead, removed: not seen
    assert next(cursor) == ("bb", 1.5)
    zset.remove("bb")  # the cursor's own member disappears: resume after its old place
    assert next(cursor) == ("d", 3.0)
    zset.add("a", 10)  # moved ahead of the cursor: seen again
    assert list(cursor) == [("e", 4.0), ("f", 5.0), ("a", 10.0)]
    zset._check()


def test_items_reverse_while_changing(impl: Impl) -> None:
    zset = impl({m: i for i, m in enumerate("abcdef")})
    cursor = zset.items(reverse=True)
    assert next(cursor) == ("f", 5.0)
    zset.remove("e")
    zset.add("z", 100)  # behind a reverse cursor
    zset.add("c", 4.5)  # moved to just below f: seen next
    assert list(cursor) == [("c", 4.5), ("d", 3.0), ("b", 1.0), ("a", 0.0)]


def test_items_stops_after_clear_and_sees_refill(impl: Impl) -> None:
    zset = impl({"a": 1, "b": 2})
    cursor = zset.items()
    assert next(cursor) == ("a", 1.0)
    zset.clear()
    assert list(cursor) == []
    again = zset.items()
    zset.add("x", 5)
    assert list(again) == [("x", 5.0)]


def test_iter_while_popping(impl: Impl) -> None:
    zset = impl({m: i for i, m in enumerate("abcde")})
    seen = []
    for member in zset:
        seen.append(member)
        zset.pop_min()
    assert seen == ["a", "b", "c", "d", "e"]
    assert len(zset) == 0


def test_items_after_method(impl: Impl) -> None:
    zset = impl({m: i // 2 for i, m in enumerate("abcdef")})  # a,b=0 c,d=1 e,f=2
    assert names(zset.items_after(0, "b", 3)) == "cde"
    assert names(zset.items_after(1, "c", 10)) == "def"
    assert names(zset.items_after(1, "c", 10, reverse=True)) == "ba"
    assert names(zset.items_after(1, "cc", 1, reverse=True)) == "c"
    assert names(zset.items_after(-INF, "", 2)) == "ab"
    assert zset.items_after(5, "", 3) == []
    assert zset.items_after(0, "a", 0) == []
    with pytest.raises(ValueError):
        zset.items_after(0, "a", -1)
    with pytest.raises(InvalidScoreError):
        zset.items_after(float("nan"), "a", 1)


# -- removals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "stop", "removed", "left"),
    [
        (0, 0, 1, "bcdef"),
        (1, 2, 2, "adef"),
        (-2, -1, 2, "abcd"),
        (0, -1, 6, ""),
        (4, 100, 2, "abcd"),
        (3, 1, 0, "abcdef"),
        (6, 9, 0, "abcdef"),
        (-100, 0, 1, "bcdef"),
    ],
)
def test_remove_range_by_index(impl: Impl, start: int, stop: int, removed: int, left: str) -> None:
    zset = impl({chr(ord("a") + i): i + 1 for i in range(6)})
    assert zset.remove_range_by_index(start, stop) == removed
    assert "".join(str(m) for m in zset) == left
    zset._check()


def test_remove_range_by_score(impl: Impl) -> None:
    zset = impl({chr(ord("a") + i): i + 1 for i in range(6)})
    assert zset.remove_range_by_score(2, 4, min_exclusive=True) == 2
    assert "".join(str(m) for m in zset) == "abef"
    assert zset.remove_range_by_score(5, 1) == 0
    assert zset.remove_range_by_score(-INF, INF, max_exclusive=True) == 4
    assert len(zset) == 0
    with pytest.raises(InvalidScoreError):
        zset.remove_range_by_score(0, float("nan"))
    zset._check()


def test_remove_range_by_lex(impl: Impl) -> None:
    zset = impl({m: 0 for m in "abcdefg"})
    assert zset.remove_range_by_lex("b", "d", max_exclusive=True) == 2
    assert "".join(str(m) for m in zset) == "adefg"
    assert zset.remove_range_by_lex("f", None) == 2
    assert zset.remove_range_by_lex(None, "a", max_exclusive=True) == 0
    assert zset.remove_range_by_lex(None, None) == 3
    zset._check()


def test_pops(impl: Impl) -> None:
    zset = impl({chr(ord("a") + i): i + 1 for i in range(6)})
    assert zset.pop_min() == [("a", 1.0)]
    assert zset.pop_max() == [("f", 6.0)]
    assert zset.pop_min(2) == [("b", 2.0), ("c", 3.0)]
    assert zset.pop_min(0) == []
    assert zset.pop_max(10) == [("e", 5.0), ("d", 4.0)]
    assert zset.pop_max() == []
    zset._check()


def test_pop_negative_count_raises(impl: Impl) -> None:
    zset = impl({"a": 1})
    with pytest.raises(ValueError):
        zset.pop_min(-1)
    with pytest.raises(ValueError):
        zset.pop_max(-1)
    with pytest.raises(TypeError):
        zset.pop_min(1.0)  # type: ignore[arg-type]
    assert len(zset) == 1


# -- random -----------------------------------------------------------------------------------


def test_random_member(impl: Impl) -> None:
    data = {m: float(i) for i, m in enumerate("abcdefghij")}
    zset = impl(data)
    seen = set()
    for _ in range(400):
        pick = zset.random_member()
        assert pick is not None
        member, score = pick
        assert data[str(member)] == score
        seen.add(member)
    assert len(seen) == 10  # 400 uniform draws over 10 miss one with p < 1e-17


def test_random_members_positive_count_is_distinct(impl: Impl) -> None:
    data = {m: float(i) for i, m in enumerate("abcdefghij")}
    zset = impl(data)
    for count in (1, 3, 9):
        picks = zset.random_members(count)
        assert len(picks) == count
        assert len({m for m, _ in picks}) == count
        assert all(data[str(m)] == s for m, s in picks)
    for count in (10, 11, 1000):
        picks = zset.random_members(count)
        assert sorted((str(m), s) for m, s in picks) == sorted(data.items())


def test_random_members_negative_count_allows_repeats(impl: Impl) -> None:
    zset = impl({"a": 1, "b": 2})
    picks = zset.random_members(-50)
    assert len(picks) == 50
    assert {m for m, _ in picks} <= {"a", "b"}
    assert len({m for m, _ in picks}) == 2  # 50 draws of two members: both appear
    assert impl({"only": 1}).random_members(-3) == [("only", 1.0)] * 3


def test_random_members_zero_and_empty(impl: Impl) -> None:
    assert impl({"a": 1}).random_members(0) == []
    assert impl().random_members(5) == []
    assert impl().random_members(-5) == []
    with pytest.raises(TypeError):
        impl().random_members(1.5)  # type: ignore[arg-type]
