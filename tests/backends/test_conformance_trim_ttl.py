"""Conformance: keep top N (trimming the rest), TTLs on windowed targets and companions."""

from __future__ import annotations

import time

import pytest

from ranked.core.ranks import RankStyle

from .conftest import MISSING, NO_TTL, STYLES, Probe, Steps, fill, request, submit, target

TTL = 60_000


def test_keep_trims_the_worst_when_higher_is_better(backend: Steps) -> None:
    fill(backend, {b"a": 50, b"b": 40, b"c": 30, b"d": 20})
    outcome = submit(backend, b"e", 35, "set", keep=3)
    assert (outcome.rank, outcome.score, outcome.changed) == (3, 35.0, True)
    rows = backend.page(target(), 0, 9, True, RankStyle.COMPETITION)
    assert rows == [(b"a", 50.0, 1), (b"b", 40.0, 2), (b"e", 35.0, 3)]


def test_keep_trims_the_worst_when_lower_is_better(backend: Steps) -> None:
    fill(backend, {b"a": 50, b"b": 40, b"c": 30, b"d": 20}, high_first=False)
    outcome = submit(backend, b"e", 35, "set", keep=3, high_first=False)
    assert outcome.rank == 3
    rows = backend.page(target(), 0, 9, False, RankStyle.COMPETITION)
    assert rows == [(b"d", 20.0, 1), (b"c", 30.0, 2), (b"e", 35.0, 3)]


@pytest.mark.parametrize("style", STYLES)
def test_a_trimmed_submitter_has_no_rank(backend: Steps, style: RankStyle) -> None:
    fill(backend, {b"a": 50, b"b": 40})
    outcome = submit(backend, b"z", 1, "set", keep=2, style=style)
    assert (outcome.score, outcome.previous_score, outcome.changed) == (1.0, None, True)
    assert (outcome.rank, outcome.previous_rank) == (None, None)
    assert backend.scores(target().key, [b"z"]) == [None]
    assert backend.count(target().key) == 2


def test_a_member_pushed_below_the_cut_loses_its_previous_rank(backend: Steps) -> None:
    fill(backend, {b"a": 50, b"b": 40, b"c": 30})
    outcome = submit(backend, b"c", 10, "set", keep=2, style=RankStyle.DENSE)
    assert (outcome.previous_rank, outcome.rank, outcome.previous_score) == (3, None, 30.0)


def test_trim_at_a_tie_removes_the_last_in_board_order(backend: Steps) -> None:
    fill(backend, {b"a": 1, b"b": 1, b"c": 1})
    outcome = submit(backend, b"d", 2, "set", keep=2, style=RankStyle.UNIQUE)
    assert outcome.rank == 1
    # Board order among equal scores is descending member bytes: c, b, a; a and b go.
    assert backend.page(target(), 0, 9, True, RankStyle.UNIQUE) == [
        (b"d", 2.0, 1),
        (b"c", 1.0, 2),
    ]


def test_dense_ranks_stay_right_after_trimming(backend: Steps) -> None:
    fill(backend, {b"a": 9, b"b": 9, b"c": 7, b"d": 5, b"e": 5, b"f": 3})
    submit(backend, b"g", 8, "set", keep=4)
    rows = backend.page(target(), 0, 9, True, RankStyle.DENSE)
    assert rows == [(b"b", 9.0, 1), (b"a", 9.0, 1), (b"g", 8.0, 2), (b"c", 7.0, 3)]
    submit(backend, b"h", 5, "set")
    assert backend.ranks(target(), [b"h"], True, RankStyle.DENSE) == [(5.0, 4)]


def test_keep_applies_to_every_target(backend: Steps) -> None:
    daily, total = target(window="d:1"), target()
    for member, score in [(b"a", 5), (b"b", 4), (b"c", 3)]:
        backend.submit(request(member, score, "set", targets=(daily, total)))
    outcomes = backend.submit(request(b"c", 10, "incr", targets=(daily, total), keep=2))
    assert [o.rank for o in outcomes] == [1, 1]
    assert backend.count(daily) == backend.count(total) == 2
    assert backend.scores(total, [b"a", b"b", b"c"]) == [5.0, None, 13.0]


def test_keep_larger_than_the_board_removes_nothing(backend: Steps) -> None:
    fill(backend, {b"a": 1, b"b": 2})
    assert submit(backend, b"c", 0, "set", keep=10).rank == 3
    assert backend.count(target().key) == 3


def _assert_ttl(probe: Probe, key: bytes, ttl_ms: int) -> None:
    left = probe.pttl(key)
    assert 0 < left <= ttl_ms, (key, left)
    assert left > ttl_ms - 10_000, (key, left)


def test_windowed_target_and_its_companions_get_the_ttl(backend: Steps, probe: Probe) -> None:
    daily, total = target(window="d:1", ttl_ms=TTL), target()
    backend.submit(request(b"ann", 5, "set", targets=(daily, total)))
    _assert_ttl(probe, daily.key, TTL)
    assert probe.pttl(total.key) == NO_TTL
    for companion in (daily.dense_key, daily.counts_key):
        if probe.has_companions:
            _assert_ttl(probe, companion, TTL)
        else:
            assert probe.pttl(companion) == MISSING
    for companion in (total.dense_key, total.counts_key):
        assert probe.pttl(companion) == (NO_TTL if probe.has_companions else MISSING)


def test_every_write_sets_the_ttl_again(backend: Steps, probe: Probe) -> None:
    daily = target(window="d:1", ttl_ms=TTL)
    submit(backend, b"ann", 5, "set", targets=[daily])
    backend.expire_at([daily.key], backend.now_ms() + 5_000)
    assert probe.pttl(daily.key) <= 10_000  # the clocks may differ by a few ms
    unchanged = submit(backend, b"ann", 1, "best", targets=[daily])
    assert unchanged.changed is False
    _assert_ttl(probe, daily.key, TTL)


def test_a_windowed_key_expires(backend: Steps, probe: Probe) -> None:
    short = target(window="d:1", ttl_ms=400)
    submit(backend, b"ann", 5, "set", targets=[short])
    assert backend.count(short) == 1
    time.sleep(0.8)
    assert backend.count(short) == 0
    assert backend.scores(short, [b"ann"]) == [None]
    assert not probe.exists(short.key)
    fresh = submit(backend, b"ann", 1, "incr", targets=[short])
    assert (fresh.score, fresh.previous_score) == (1.0, None)
