"""Secondary tie-break: over-fetch around a page and re-sort, checked against brute force."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ranked.core.ties import IndexWindow, overfetch, resort_page, tie_hash

Row = tuple[bytes, float]


def redis_order(scores: dict[bytes, float]) -> list[Row]:
    """ZRANGE ... REV order: score descending, then member bytes descending."""
    return sorted(scores.items(), key=lambda row: (row[1], row[0]), reverse=True)


def test_tie_hash_is_stable_and_salted() -> None:
    assert tie_hash("alice") == tie_hash(b"alice")
    assert tie_hash("alice") != tie_hash("bob")
    assert tie_hash("alice", salt=b"season-2") != tie_hash("alice")
    assert 0 <= tie_hash(b"\x00" * 100) < 2**64
    # A fixed value: the same in every process and Python version (BLAKE2b-64).
    assert tie_hash(b"") == tie_hash("") == 0xE4A6A057_7479B2B4


def test_overfetch() -> None:
    assert overfetch(20, 10, 5) == IndexWindow(15, 35)
    assert overfetch(2, 10, 5) == IndexWindow(0, 17)
    for bad in [(-1, 10, 0), (0, 0, 0), (0, 1, -1)]:
        with pytest.raises(ValueError):
            overfetch(*bad)


def test_seed000_example_earlier_timestamp_wins() -> None:
    scores = {b"alice": 100.0, b"bob": 100.0, b"charlie": 100.0, b"dave": 90.0}
    reached = {b"alice": 30.0, b"bob": 10.0, b"charlie": 20.0, b"dave": 5.0}
    window = overfetch(0, 2, 2)
    rows = redis_order(scores)[window.start : window.stop]
    page = resort_page(rows, window, 0, 2, reached.__getitem__)
    assert page == [(b"bob", 100.0), (b"charlie", 100.0)]


def test_boundary_group_cut_by_the_window_is_reported() -> None:
    scores = {bytes([65 + i]): 100.0 for i in range(6)} | {b"z": 50.0}
    order = redis_order(scores)
    window = overfetch(2, 2, 1)  # [1, 5): the tie group of six runs past both edges
    rows = order[window.start : window.stop]
    assert resort_page(rows, window, 2, 2, tie_hash) is None
    window = overfetch(2, 2, 10)
    rows = order[window.start : window.stop]
    page = resort_page(rows, window, 2, 2, tie_hash)
    expected = sorted(order, key=lambda row: (-row[1], tie_hash(row[0])))[2:4]
    assert page == expected


def test_lower_is_better_and_short_pages() -> None:
    scores = {b"a": 3.0, b"b": 1.0, b"c": 1.0}
    rows = sorted(scores.items(), key=lambda row: (row[1], row[0]))  # ascending ZRANGE
    ranks = {b"a": 0, b"b": 2, b"c": 1}
    page = resort_page(rows, IndexWindow(0, 10), 0, 10, ranks.__getitem__, higher_is_better=False)
    assert page == [(b"c", 1.0), (b"b", 1.0), (b"a", 3.0)]
    assert resort_page(rows, IndexWindow(0, 10), 5, 5, ranks.__getitem__) == []


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="not inside"):
        resort_page([], IndexWindow(5, 10), 0, 3, tie_hash)
    with pytest.raises(ValueError, match="more rows"):
        resort_page([(b"a", 1.0)] * 3, IndexWindow(0, 2), 0, 1, tie_hash)


@given(
    scores=st.dictionaries(st.binary(min_size=1, max_size=3), st.sampled_from([1.0, 2.0, 3.0])),
    offset=st.integers(0, 30),
    limit=st.integers(1, 10),
    extra=st.integers(0, 12),
)
def test_matches_brute_force_or_asks_for_more(
    scores: dict[bytes, float], offset: int, limit: int, extra: int
) -> None:
    order = redis_order(scores)
    truth = sorted(order, key=lambda row: (-row[1], tie_hash(row[0])))
    expected = truth[offset : offset + limit]
    while True:
        window = overfetch(offset, limit, extra)
        rows = order[window.start : window.stop]
        page = resort_page(rows, window, offset, limit, tie_hash)
        if page is not None:
            assert page == expected
            return
        assert extra <= len(order)  # with the whole set fetched it must always answer
        extra = extra * 2 + 1
