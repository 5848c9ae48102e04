"""SortedSet behaviour on both implementations: members, scores, writes, point reads, ranks.

Ranges, iteration and removals are in test_sortedset_ranges.py, set algebra in
test_sortedset_algebra.py, whole-set operations in test_sortedset_whole.py.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from ranked.errors import InvalidScoreError

from .conftest import Impl

NAN = float("nan")
INF = float("inf")


def is_negative_zero(value: float | None) -> bool:
    return value == 0.0 and value is not None and math.copysign(1.0, value) < 0


def state(zset: Any) -> bytes:
    """Everything observable about a set, to prove an error changed nothing."""
    zset._check()
    return bytes(zset.snapshot())


# -- construction, members ----------------------------------------------------------------


def test_empty_set(impl: Impl) -> None:
    zset = impl()
    assert len(zset) == 0
    assert list(zset.items()) == []
    assert list(zset) == []
    assert zset.score("a") is None
    assert zset.index("a") is None
    assert zset.rank("a") is None
    assert zset.random_member() is None
    assert zset.pop_min() == []
    assert zset.pop_max(3) == []
    assert zset.range_by_index(0, -1) == []
    assert zset.count_by_score() == 0
    assert zset.count_by_lex() == 0
    with pytest.raises(IndexError):
        zset.at(0)
    assert zset.raw is False
    zset._check()


def test_constructor_accepts_mapping_and_pairs(impl: Impl) -> None:
    from_mapping = impl({"b": 2, "a": 1})
    from_pairs = impl([("b", 2.0), ("a", 1)])
    assert list(from_mapping.items()) == [("a", 1.0), ("b", 2.0)]
    assert list(from_pairs.items()) == list(from_mapping.items())
    assert impl({b"x": 1}, raw=True).raw is True
    from_mapping._check()
    from_pairs._check()


def test_str_and_bytes_name_the_same_member(impl: Impl) -> None:
    zset = impl()
    assert zset.add("é", 1) == 1
    assert zset.add("é".encode(), 2) == 0
    assert len(zset) == 1
    assert zset.score(b"\xc3\xa9") == 2.0
    assert "é" in zset and b"\xc3\xa9" in zset
    assert zset.at(0) == ("é", 2.0)
    zset._check()


def test_raw_mode_returns_bytes(impl: Impl) -> None:
    zset = impl(raw=True)
    zset.add("a", 1)
    zset.add(b"\xff\x00", 2)
    assert list(zset.items()) == [(b"a", 1.0), (b"\xff\x00", 2.0)]
    assert list(zset) == [b"a", b"\xff\x00"]
    assert zset.pop_max() == [(b"\xff\x00", 2.0)]
    zset._check()


def test_invalid_utf8_round_trips_with_surrogateescape(impl: Impl) -> None:
    zset = impl()
    zset.add(b"\xff", 1)
    assert zset.at(0) == ("\udcff", 1.0)
    assert zset.score("\udcff") == 1.0
    assert zset.add("\udcff", 5) == 0
    assert zset.score(b"\xff") == 5.0
    zset._check()


def test_ties_are_ordered_by_member_bytes(impl: Impl) -> None:
    ordered = [b"", b"\x00", b"A", b"B", b"a", b"a\x00", b"ab", b"b", b"\x7f", b"\xff"]
    zset = impl(raw=True)
    for member in reversed(ordered):
        zset.add(member, 7)
    assert list(zset) == ordered
    zset._check()


def test_ties_follow_utf8_bytes_not_code_points(impl: Impl) -> None:
    # "\udcff" is stored as b"\xff", which sorts after the UTF-8 of "\uffff".
    zset = impl({"\udcff": 0, "\uffff": 0, "z": 0, "": 0})
    assert list(zset) == ["", "z", "\uffff", "\udcff"]
    zset._check()


def test_empty_member_is_a_member(impl: Impl) -> None:
    zset = impl()
    assert zset.add("", 3) == 1
    assert "" in zset and b"" in zset
    assert zset.score("") == 3.0
    assert zset.remove(b"") == 1
    zset._check()


@pytest.mark.parametrize("member", [1, None, 1.5, bytearray(b"a"), ["a"]])
def test_bad_member_types_raise_type_error(impl: Impl, member: Any) -> None:
    zset = impl({"a": 1})
    before = state(zset)
    with pytest.raises(TypeError):
        zset.add(member, 1)
    with pytest.raises(TypeError):
        zset.score(member)
    with pytest.raises(TypeError):
        zset.remove("a", member)
    assert member not in zset
    assert state(zset) == before


# -- scores -------------------------------------------------------------------------------


def test_int_scores_become_floats(impl: Impl) -> None:
    zset = impl()
    zset.add("a", 3)
    score = zset.score("a")
    assert score == 3.0 and isinstance(score, float)
    zset.add("big", 2**60)
    assert zset.score("big") == float(2**60)


@pytest.mark.parametrize("score", ["1", b"1", None, object(), [1.0]])
def test_non_numeric_scores_raise_type_error(impl: Impl, score: Any) -> None:
    zset = impl({"a": 1})
    before = state(zset)
    with pytest.raises(TypeError):
        zset.add("b", score)
    with pytest.raises(TypeError):
        zset.incr("a", score)
    with pytest.raises(TypeError):
        zset.add_many([("c", 1), ("d", score)])
    assert state(zset) == before


def test_nan_is_rejected_everywhere_and_changes_nothing(impl: Impl) -> None:
    zset = impl({"a": 1, "b": 2})
    before = state(zset)
    with pytest.raises(InvalidScoreError):
        zset.add("c", NAN)
    with pytest.raises(InvalidScoreError):
        zset.add("a", NAN, xx=True)
    with pytest.raises(InvalidScoreError):
        zset.add_many([("c", 1), ("d", NAN)])
    with pytest.raises(InvalidScoreError):
        zset.load({"c": 1, "d": NAN})
    with pytest.raises(InvalidScoreError):
        zset.incr("a", NAN)
    with pytest.raises(InvalidScoreError):
        zset.range_by_score(NAN, 1)
    with pytest.raises(InvalidScoreError):
        zset.count_by_score(0, NAN)
    with pytest.raises(InvalidScoreError):
        zset.remove_range_by_score(NAN, 5)
    with pytest.raises(InvalidScoreError):
        impl({"x": NAN})
    assert issubclass(InvalidScoreError, ValueError)
    assert state(zset) == before


def test_infinities_are_valid_scores(impl: Impl) -> None:
    zset = impl({"lo": -INF, "mid": 0, "hi": INF})
    assert list(zset) == ["lo", "mid", "hi"]
    assert zset.count_by_score(-INF, INF) == 3
    assert zset.range_by_score(INF, INF) == [("hi", INF)]
    assert zset.incr("hi", 1) == INF
    zset._check()


def test_negative_zero_is_kept_and_equals_zero(impl: Impl) -> None:
    zset = impl()
    zset.add("b", 0.0)
    zset.add("a", -0.0)
    assert is_negative_zero(zset.score("a"))
    assert list(zset) == ["a", "b"]  # a tie: -0.0 == 0.0, so member order decides
    assert zset.add("a", 0.0) == 0  # 0.0 != -0.0 is false: no update
    assert zset.add("a", 0.0, ch=True) == 0
    assert is_negative_zero(zset.score("a"))
    assert zset.count_by_score(0, 0) == 2
    assert zset.range_by_score(-0.0, 0.0, min_exclusive=True) == []
    assert zset.rank("b", style="dense") == 1
    assert zset.rank("b", style="competition") == 1
    zset._check()


def test_incr_negative_zero_returns_new_score_but_keeps_stored_sign(impl: Impl) -> None:
    zset = impl()
    zset.add("a", -0.0)
    result = zset.incr("a", 0.0)
    assert result == 0.0 and not is_negative_zero(result)  # -0.0 + 0.0 == +0.0
    assert is_negative_zero(zset.score("a"))  # equal, so nothing was stored


def test_incr_of_a_new_member_stores_the_increment_itself(impl: Impl) -> None:
    # Redis (skiplist encoding) keeps the sign: ZINCRBY z -0.0 new; ZSCORE -> -0.
    zset = impl()
    assert is_negative_zero(zset.incr("a", -0.0))
    assert is_negative_zero(zset.score("a"))


# -- add and its flags ----------------------------------------------------------------------


def test_add_return_values(impl: Impl) -> None:
    zset = impl()
    assert zset.add("a", 1) == 1
    assert zset.add("a", 1) == 0
    assert zset.add("a", 2) == 0
    assert zset.score("a") == 2.0
    assert zset.add("a", 3, ch=True) == 1
    assert zset.add("a", 3, ch=True) == 0
    assert zset.add("b", 3, ch=True) == 1
    zset._check()


def test_add_nx_only_adds(impl: Impl) -> None:
    zset = impl({"a": 1})
    assert zset.add("a", 5, nx=True) == 0
    assert zset.add("a", 5, nx=True, ch=True) == 0
    assert zset.score("a") == 1.0
    assert zset.add("b", 5, nx=True) == 1
    zset._check()


def test_add_xx_only_updates(impl: Impl) -> None:
    zset = impl({"a": 1})
    assert zset.add("b", 5, xx=True) == 0
    assert "b" not in zset and len(zset) == 1
    assert zset.add("a", 5, xx=True) == 0
    assert zset.score("a") == 5.0
    assert zset.add("a", 6, xx=True, ch=True) == 1
    zset._check()


@pytest.mark.parametrize(
    ("flag", "new", "updated"),
    [
        ("gt", 5.0, True),
        ("gt", 1.0, False),
        ("gt", 3.0, False),
        ("lt", 1.0, True),
        ("lt", 5.0, False),
    ],
)
def test_add_gt_lt_apply_to_existing_members(
    impl: Impl, flag: str, new: float, updated: bool
) -> None:
    zset = impl({"a": 3})
    kwargs = {flag: True}
    assert zset.add("a", new, ch=True, **kwargs) == int(updated)
    assert zset.score("a") == (new if updated else 3.0)
    assert zset.add("fresh", new, **kwargs) == 1  # new members are always added
    zset._check()


def test_add_xx_with_gt(impl: Impl) -> None:
    zset = impl({"a": 3})
    assert zset.add("b", 9, xx=True, gt=True) == 0
    assert zset.add("a", 9, xx=True, gt=True, ch=True) == 1
    assert zset.add("a", 1, xx=True, gt=True, ch=True) == 0
    assert dict(zset.items()) == {"a": 9.0}


@pytest.mark.parametrize(
    "flags",
    [
        {"nx": True, "xx": True},
        {"gt": True, "lt": True},
        {"nx": True, "gt": True},
        {"nx": True, "lt": True},
    ],
)
def test_conflicting_flags_raise_value_error(impl: Impl, flags: dict[str, bool]) -> None:
    zset = impl({"a": 1})
    before = state(zset)
    with pytest.raises(ValueError):
        zset.add("b", 1, **flags)
    with pytest.raises(ValueError):
        zset.add_many([("b", 1)], **flags)
    with pytest.raises(ValueError):
        zset.incr("b", 1, **flags)
    assert state(zset) == before


def test_add_many_counts_like_redis(impl: Impl) -> None:
    zset = impl()
    assert zset.add_many([("a", 1), ("a", 2)]) == 1
    assert zset.score("a") == 2.0
    assert zset.add_many([("b", 3), ("b", 4)], ch=True) == 2
    assert zset.add_many([("c", 5), ("c", 5)], ch=True) == 1
    assert zset.add_many({"d": 1, "e": 2}) == 2
    assert zset.add_many([("a", 0), ("z", 0)], xx=True, ch=True) == 1
    assert "z" not in zset
    zset._check()


def test_add_many_validates_everything_first(impl: Impl) -> None:
    zset = impl({"a": 1})
    before = state(zset)
    with pytest.raises(InvalidScoreError):
        zset.add_many([("b", 1), ("a", 7), ("c", NAN)])
    with pytest.raises(TypeError):
        zset.add_many([("b", 1), (5, 7)])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        zset.add_many([("b", 1), ("c",)])  # type: ignore[list-item]
    assert state(zset) == before


# -- incr ---------------------------------------------------------------------------------


def test_incr_basics(impl: Impl) -> None:
    zset = impl()
    assert zset.incr("a") == 1.0
    assert zset.incr("a", 2.5) == 3.5
    assert zset.incr("a", -10) == -6.5
    assert zset.score("a") == -6.5
    zset._check()


def test_incr_flags(impl: Impl) -> None:
    zset = impl({"a": 5})
    assert zset.incr("a", 1, nx=True) is None
    assert zset.incr("b", 1, xx=True) is None
    assert "b" not in zset
    assert zset.incr("a", -1, gt=True) is None
    assert zset.incr("a", 1, gt=True) == 6.0
    assert zset.incr("a", 1, lt=True) is None
    assert zset.incr("a", -2, lt=True) == 4.0
    assert zset.incr("new", 7, gt=True) == 7.0  # GT INCR on a new member adds it
    assert zset.incr("new2", 3, nx=True) == 3.0
    assert dict(zset.items()) == {"a": 4.0, "new": 7.0, "new2": 3.0}
    zset._check()


def test_incr_gt_on_infinity_is_not_an_increase(impl: Impl) -> None:
    zset = impl({"a": INF})
    assert zset.incr("a", 1, gt=True) is None
    assert zset.incr("a", 1) == INF


def test_incr_to_nan_raises_and_changes_nothing(impl: Impl) -> None:
    zset = impl({"a": INF, "b": 1})
    before = state(zset)
    with pytest.raises(InvalidScoreError):
        zset.incr("a", -INF)
    assert state(zset) == before


def test_incr_overflow_to_infinity_is_allowed(impl: Impl) -> None:
    zset = impl({"a": 1e308})
    assert zset.incr("a", 1e308) == INF


# -- remove, load, clear --------------------------------------------------------------------


def test_remove(impl: Impl) -> None:
    zset = impl({"a": 1, "b": 2, "c": 3})
    assert zset.remove("a", "a", "zz") == 1
    assert zset.remove() == 0
    assert zset.remove(b"b", "c") == 2
    assert len(zset) == 0
    zset._check()


def test_load_fast_and_slow_paths_agree(impl: Impl) -> None:
    pairs = [(f"m{i:04d}", float(i // 3)) for i in range(500)]
    fast = impl()
    assert fast.load(pairs) == 500  # strictly ascending into an empty set: O(n) build
    slow = impl()
    assert slow.load(list(reversed(pairs))) == 500
    assert list(fast.items()) == list(slow.items())
    assert fast.snapshot() == slow.snapshot()
    for member, _ in pairs[::37]:
        assert fast.rank(member, style="dense") == slow.rank(member, style="dense")
        assert fast.index(member) == slow.index(member)
    fast._check()
    slow._check()


def test_load_counts_new_members_and_last_score_wins(impl: Impl) -> None:
    zset = impl()
    # Ascending by (score, member) but "a" repeats: must not take the bulk path blindly.
    assert zset.load([("a", 1), ("a", 2)]) == 1
    assert zset.score("a") == 2.0
    assert zset.load({"a": 0, "b": 1}) == 1
    assert dict(zset.items()) == {"a": 0.0, "b": 1.0}
    assert zset.load([]) == 0
    zset._check()


def test_load_with_ties_and_negative_zero(impl: Impl) -> None:
    zset = impl()
    assert zset.load([("a", -0.0), ("b", 0.0), ("c", 0.0), ("d", 1)]) == 4
    assert is_negative_zero(zset.score("a"))
    assert zset.rank("d", style="dense") == 2
    zset._check()
    unordered = impl()
    unordered.load([("b", 0.0), ("a", -0.0), ("d", 1), ("c", 0.0)])
    assert unordered.snapshot() == zset.snapshot()


def test_load_rejects_bad_input_without_change(impl: Impl) -> None:
    zset = impl({"a": 1})
    before = state(zset)
    with pytest.raises(TypeError):
        zset.load("ab")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        zset.load(5)  # type: ignore[arg-type]
    with pytest.raises(InvalidScoreError):
        zset.load([("b", 1), ("c", NAN)])
    assert state(zset) == before


def test_clear(impl: Impl) -> None:
    zset = impl({"a": 1, "b": 2})
    zset.clear()
    assert len(zset) == 0 and list(zset) == []
    zset.add("c", 3)
    assert list(zset.items()) == [("c", 3.0)]
    zset._check()


# -- point reads ----------------------------------------------------------------------------


def test_score_and_scores(impl: Impl) -> None:
    zset = impl({"a": 1.5, "b": -2})
    assert zset.score("a") == 1.5
    assert zset.score("missing") is None
    assert zset.scores(["b", "missing", b"a"]) == [-2.0, None, 1.5]
    assert zset.scores([]) == []
    with pytest.raises(TypeError):
        zset.scores(["a", 3])  # type: ignore[list-item]


def test_contains(impl: Impl) -> None:
    zset = impl({"a": 1})
    assert "a" in zset and b"a" in zset
    assert "b" not in zset
    assert 1 not in zset and None not in zset and (1, 2) not in zset


def test_index_both_directions(impl: Impl) -> None:
    zset = impl({"a": 1, "b": 2, "c": 2, "d": 9})
    assert [zset.index(m) for m in "abcd"] == [0, 1, 2, 3]
    assert [zset.index(m, reverse=True) for m in "abcd"] == [3, 2, 1, 0]
    assert zset.index("zz") is None and zset.index("zz", reverse=True) is None


def test_rank_styles_worked_example(impl: Impl) -> None:
    # Scores 10, 10, 20, 30: competition 1,1,3,4 and dense 1,1,2,3 (lowest first).
    zset = impl({"ann": 10, "bob": 10, "cat": 20, "dan": 30})
    members = ["ann", "bob", "cat", "dan"]
    assert [zset.rank(m, style="unique") for m in members] == [1, 2, 3, 4]
    assert [zset.rank(m) for m in members] == [1, 1, 3, 4]
    assert [zset.rank(m, style="competition") for m in members] == [1, 1, 3, 4]
    assert [zset.rank(m, style="dense") for m in members] == [1, 1, 2, 3]
    # Highest first.
    assert [zset.rank(m, style="unique", reverse=True) for m in members] == [4, 3, 2, 1]
    assert [zset.rank(m, style="competition", reverse=True) for m in members] == [3, 3, 2, 1]
    assert [zset.rank(m, style="dense", reverse=True) for m in members] == [3, 3, 2, 1]
    assert zset.rank("nobody", style="dense") is None


def test_rank_styles_track_updates(impl: Impl) -> None:
    zset = impl({"a": 1, "b": 1, "c": 1})
    assert [zset.rank(m, style="dense") for m in "abc"] == [1, 1, 1]
    zset.add("b", 2)  # in place: b now starts its own group
    assert [zset.rank(m, style="dense") for m in "abc"] == [1, 2, 1]
    assert [zset.rank(m, style="dense", reverse=True) for m in "abc"] == [2, 1, 2]
    zset.add("a", 2)  # joins b's group
    assert [zset.rank(m, style="dense") for m in "abc"] == [2, 2, 1]
    assert [zset.rank(m, style="competition") for m in "abc"] == [2, 2, 1]
    zset.remove("c")
    assert [zset.rank(m, style="dense") for m in "ab"] == [1, 1]
    zset._check()


def test_rank_with_negative_zero_ties(impl: Impl) -> None:
    zset = impl({"a": -0.0, "b": 0.0, "c": 1})
    assert [zset.rank(m, style="dense") for m in "abc"] == [1, 1, 2]
    assert [zset.rank(m, style="competition", reverse=True) for m in "abc"] == [2, 2, 1]


def test_rank_unknown_style_raises(impl: Impl) -> None:
    zset = impl({"a": 1})
    with pytest.raises(ValueError):
        zset.rank("a", style="olympic")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        zset.rank("missing", style="olympic")  # type: ignore[arg-type]


def test_at_and_getitem(impl: Impl) -> None:
    zset = impl({"a": 1, "b": 2, "c": 3})
    assert zset.at(0) == ("a", 1.0)
    assert zset.at(2) == ("c", 3.0)
    assert zset.at(-1) == ("c", 3.0)
    assert zset.at(-3) == ("a", 1.0)
    assert zset[1] == ("b", 2.0)
    assert zset[-2] == ("b", 2.0)
    for bad in (3, -4, 100, -100):
        with pytest.raises(IndexError):
            zset.at(bad)
        with pytest.raises(IndexError):
            zset[bad]
    with pytest.raises(TypeError):
        zset.at("0")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        zset.at(1.0)  # type: ignore[arg-type]
