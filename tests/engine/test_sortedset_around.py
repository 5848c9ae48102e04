"""``range_around``: the member's index plus the window of pairs around it.

Every test runs on both implementations (the ``impl`` fixture). The expected
window comes from a model that grows the window one pair at a time from the
member outwards, a different construction from the engines' "clamp the first
index" arithmetic.
"""

from __future__ import annotations

import random

import pytest

from .conftest import Impl

Pair = tuple[str, float]
Around = tuple[int, list[tuple[str | bytes, float]]]


def found(result: Around | None) -> Around:
    """The result for a member that is in the set (never None)."""
    assert result is not None
    return result


def ordered(pairs: dict[str, float], reverse: bool) -> list[Pair]:
    """Pairs in set order: by score, ties by member bytes; reversed when asked."""
    out = sorted(pairs.items(), key=lambda p: (p[1], p[0].encode()))
    return out[::-1] if reverse else out


def model_window(order: list[Pair], member: str, before: int, after: int) -> tuple[int, list[Pair]]:
    """Take up to ``before`` pairs ahead and ``after`` behind, then give the unused
    quota of one side to the other side while pairs remain there."""
    index = [m for m, _ in order].index(member)
    lo = max(0, index - before)
    hi = min(len(order) - 1, index + after)
    spare = before + after + 1 - (hi - lo + 1)
    while spare > 0 and (lo > 0 or hi < len(order) - 1):
        if hi < len(order) - 1:
            hi += 1
        else:
            lo -= 1
        spare -= 1
    return index, order[lo : hi + 1]


def test_missing_member_is_none(impl: Impl) -> None:
    assert impl().range_around("x", 2, 2) is None
    s = impl({"a": 1})
    assert s.range_around("x", 2, 2) is None
    assert s.range_around(b"x", 0, 0, reverse=True) is None


def test_middle_of_a_set(impl: Impl) -> None:
    s = impl({f"m{i:02d}": i for i in range(20)})
    assert s.range_around("m10", 2, 3) == (
        10,
        [("m08", 8.0), ("m09", 9.0), ("m10", 10.0), ("m11", 11.0), ("m12", 12.0), ("m13", 13.0)],
    )
    assert s.range_around("m10", 2, 1, reverse=True) == (
        9,
        [("m12", 12.0), ("m11", 11.0), ("m10", 10.0), ("m09", 9.0)],
    )


def test_top_of_the_order_fills_from_below(impl: Impl) -> None:
    s = impl({f"m{i:02d}": i for i in range(20)})
    index, window = found(s.range_around("m19", 5, 5, reverse=True))
    assert index == 0
    assert [m for m, _ in window] == [f"m{i:02d}" for i in range(19, 8, -1)]
    index, window = found(s.range_around("m00", 3, 1))
    assert index == 0
    assert [m for m, _ in window] == ["m00", "m01", "m02", "m03", "m04"]


def test_bottom_of_the_order_fills_from_above(impl: Impl) -> None:
    s = impl({f"m{i:02d}": i for i in range(20)})
    index, window = found(s.range_around("m00", 5, 5, reverse=True))
    assert index == 19
    assert [m for m, _ in window] == [f"m{i:02d}" for i in range(10, -1, -1)]
    index, window = found(s.range_around("m18", 1, 3))
    assert index == 18
    assert [m for m, _ in window] == ["m15", "m16", "m17", "m18", "m19"]


def test_small_set_returns_everything(impl: Impl) -> None:
    s = impl({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    for member in "abcde":
        index, window = found(s.range_around(member, 5, 5, reverse=True))
        assert index == "edcba".index(member)
        assert window == [("e", 5.0), ("d", 4.0), ("c", 3.0), ("b", 2.0), ("a", 1.0)]


def test_zero_width_window_is_the_member(impl: Impl) -> None:
    s = impl({"a": 1, "b": 2, "c": 3})
    assert s.range_around("b", 0, 0) == (1, [("b", 2.0)])
    assert s.range_around("a", 0, 0, reverse=True) == (2, [("a", 1.0)])
    assert impl({"solo": -0.0}).range_around("solo", 3, 3) == (0, [("solo", -0.0)])


def test_ties_follow_member_bytes(impl: Impl) -> None:
    s = impl({"b": 7, "a": 7, "c": 7, "z": 1, "y": 9})
    assert s.range_around("b", 1, 1) == (2, [("a", 7.0), ("b", 7.0), ("c", 7.0)])
    assert s.range_around("b", 1, 1, reverse=True) == (2, [("c", 7.0), ("b", 7.0), ("a", 7.0)])


def test_index_agrees_with_index_and_window_with_range_by_index(impl: Impl) -> None:
    rnd = random.Random(7)
    scores = {f"p{i}": float(rnd.randint(0, 40)) for i in range(300)}
    s = impl(scores)
    for member in rnd.sample(sorted(scores), 40):
        for reverse in (False, True):
            index, window = found(s.range_around(member, 4, 6, reverse=reverse))
            assert index == s.index(member, reverse=reverse)
            first = [pair[0] for pair in s.range_by_index(0, -1, reverse=reverse)].index(
                window[0][0]
            )
            assert window == s.range_by_index(first, first + 10, reverse=reverse)


@pytest.mark.parametrize("reverse", [False, True])
def test_every_member_every_window_against_the_model(impl: Impl, reverse: bool) -> None:
    rnd = random.Random(11)
    for n in range(1, 9):
        scores = {f"k{i}": float(rnd.randint(0, 3)) for i in range(n)}
        s = impl(scores)
        order = ordered(scores, reverse)
        for member in scores:
            for before in range(0, 5):
                for after in range(0, 5):
                    got = s.range_around(member, before, after, reverse=reverse)
                    assert got == model_window(order, member, before, after), (
                        n,
                        member,
                        before,
                        after,
                    )


def test_large_random_set_against_the_model(impl: Impl) -> None:
    rnd = random.Random(3)
    scores = {f"u{i}": float(rnd.randint(-50, 50)) for i in range(2000)}
    s = impl(scores)
    for reverse in (False, True):
        order = ordered(scores, reverse)
        for member in rnd.sample(sorted(scores), 60):
            before, after = rnd.randint(0, 30), rnd.randint(0, 30)
            got = s.range_around(member, before, after, reverse=reverse)
            assert got == model_window(order, member, before, after)


def test_huge_counts_take_the_whole_set(impl: Impl) -> None:
    s = impl({"a": 1, "b": 2, "c": 3})
    assert s.range_around("b", 10**30, 10**30) == (1, [("a", 1.0), ("b", 2.0), ("c", 3.0)])
    assert s.range_around("b", 0, 2**63) == (1, [("a", 1.0), ("b", 2.0), ("c", 3.0)])


def test_raw_sets_return_bytes(impl: Impl) -> None:
    s = impl({b"a": 1, b"\xff": 2}, raw=True)
    assert s.range_around(b"\xff", 1, 0) == (1, [(b"a", 1.0), (b"\xff", 2.0)])
    assert s.range_around("a", 0, 1, reverse=True) == (1, [(b"\xff", 2.0), (b"a", 1.0)])


def test_keywords_and_index_like_counts(impl: Impl) -> None:
    s = impl({"a": 1, "b": 2, "c": 3})
    assert s.range_around(member="b", before=1, after=0, reverse=True) == (
        1,
        [("c", 3.0), ("b", 2.0)],
    )
    assert s.range_around("b", True, False) == (1, [("a", 1.0), ("b", 2.0)])


@pytest.mark.parametrize(
    ("before", "after", "text"),
    [(-1, 0, "before must not be negative"), (0, -1, "after must not be negative")],
)
def test_negative_counts_raise_value_error(impl: Impl, before: int, after: int, text: str) -> None:
    s = impl({"a": 1})
    with pytest.raises(ValueError, match=text):
        s.range_around("a", before, after)
    with pytest.raises(ValueError, match=text):
        s.range_around("missing", before, after)


def test_bad_argument_types(impl: Impl) -> None:
    s = impl({"a": 1})
    with pytest.raises(TypeError, match="before must be an integer"):
        s.range_around("a", 1.5, 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="after must be an integer"):
        s.range_around("a", 0, "2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="member must be str or bytes"):
        s.range_around(3, 0, 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        s.range_around("a", 0, 0, True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        s.range_around("a", 0)  # type: ignore[call-arg]


def test_does_not_change_the_set(impl: Impl) -> None:
    s = impl({f"m{i}": i % 4 for i in range(50)})
    before = s.snapshot()
    s.range_around("m7", 3, 3)
    s.range_around("m7", 3, 3, reverse=True)
    assert s.snapshot() == before
    s._check()
