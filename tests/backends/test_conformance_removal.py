"""Conformance: removing members, deleting keys, absolute expiry."""

from __future__ import annotations

import time

from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle

from .conftest import MISSING, NO_TTL, Probe, Steps, fill, request, submit, target


def test_remove_from_every_target_sums_removals(backend: Steps) -> None:
    daily, total = target(window="d:1"), target()
    for member, score in [(b"a", 3), (b"b", 2), (b"c", 1)]:
        backend.submit(request(member, score, "set", targets=(daily, total)))
    submit(backend, b"only-total", 9, "set", targets=[total])
    assert backend.remove([daily, total], [b"a", b"only-total", b"nobody"]) == 3
    assert backend.scores(daily, [b"a", b"b"]) == [None, 2.0]
    assert backend.scores(total, [b"a", b"only-total", b"c"]) == [None, None, 1.0]
    assert backend.remove([daily, total], []) == 0
    assert backend.remove([target(board="empty")], [b"a"]) == 0


def test_ranks_stay_right_after_removals(backend: Steps) -> None:
    board = fill(backend, {b"a": 9, b"b": 9, b"c": 8, b"d": 7, b"e": 7, b"f": 6})
    backend.remove([board], [b"c", b"a"])
    rows = backend.page(board, 0, 9, True, RankStyle.DENSE)
    assert rows == [(b"b", 9.0, 1), (b"e", 7.0, 2), (b"d", 7.0, 2), (b"f", 6.0, 3)]
    backend.remove([board], [b"d"])
    assert backend.ranks(board, [b"e", b"f"], True, RankStyle.DENSE) == [(7.0, 2), (6.0, 3)]
    backend.remove([board], [b"e"])
    assert backend.ranks(board, [b"f"], True, RankStyle.DENSE) == [(6.0, 2)]
    assert backend.ranks(board, [b"f"], True, RankStyle.COMPETITION) == [(6.0, 2)]


def test_dense_ranks_follow_rescoring(backend: Steps) -> None:
    board = fill(backend, {b"a": 5, b"b": 5, b"c": 4})
    submit(backend, b"a", 6, "set")
    submit(backend, b"b", 6, "set")  # the score 5 is held by nobody now
    assert backend.ranks(board, [b"c"], True, RankStyle.DENSE) == [(4.0, 2)]
    submit(backend, b"c", 1, "incr")
    assert backend.ranks(board, [b"c"], True, RankStyle.DENSE) == [(5.0, 2)]


def test_removing_the_last_member_empties_the_board(backend: Steps, probe: Probe) -> None:
    board = fill(backend, {b"a": 1})
    assert backend.remove([board], [b"a"]) == 1
    assert backend.count(board.key) == 0
    assert not probe.exists(board.key)
    assert submit(backend, b"b", 2, "set").rank == 1


def test_delete_counts_existing_keys_of_any_type(backend: Steps, probe: Probe) -> None:
    keys = BoardKeys("arena")
    board = fill(backend, {b"a": 1, b"b": 2})
    backend.hash_set(keys.data, {b"a": b"Ann"}, None)
    backend.set_add(keys.friends(b"a"), [b"b"])
    deleted = backend.delete([board.key, keys.data, keys.friends(b"a"), keys.meta])
    assert deleted == 3
    assert backend.count(board.key) == 0
    assert backend.hash_get(keys.data, [b"a"]) == [None]
    assert backend.set_members(keys.friends(b"a")) == set()
    for key in (board.key, keys.data, keys.friends(b"a")):
        assert not probe.exists(key)
    assert backend.delete([board.key]) == 0
    assert backend.delete([]) == 0


def test_delete_of_a_board_with_its_companions(backend: Steps, probe: Probe) -> None:
    board = fill(backend, {b"a": 1, b"b": 2})
    assert backend.delete([board.key, board.dense_key, board.counts_key]) >= 1
    for key in (board.key, board.dense_key, board.counts_key):
        assert not probe.exists(key)
    assert submit(backend, b"c", 5, "set", style=RankStyle.DENSE).rank == 1


def test_expire_at_sets_an_absolute_deadline(backend: Steps, probe: Probe) -> None:
    keys = BoardKeys("arena")
    board = fill(backend, {b"a": 1})
    backend.hash_set(keys.data, {b"a": b"Ann"}, None)
    deadline = backend.now_ms() + 30_000
    backend.expire_at([board.key, keys.data, keys.meta], deadline)
    for key in (board.key, keys.data):
        left = probe.pttl(key)
        # now_ms() of a Redis backend is the server clock estimated from TIME: a few ms off.
        assert 20_000 < left <= 31_000, left
    assert probe.pttl(keys.meta) == MISSING  # expiry never creates a key
    assert probe.pttl(board.dense_key) in (MISSING, NO_TTL)


def test_expire_at_in_the_past_deletes(backend: Steps, probe: Probe) -> None:
    board = fill(backend, {b"a": 1})
    backend.expire_at([board.key], backend.now_ms() - 1_000)
    assert backend.count(board.key) == 0
    assert not probe.exists(board.key)


def test_expire_at_takes_effect_at_the_deadline(backend: Steps) -> None:
    board = fill(backend, {b"a": 1})
    backend.expire_at([board.key], backend.now_ms() + 400)
    assert backend.count(board.key) == 1
    time.sleep(0.8)
    assert backend.count(board.key) == 0
    assert backend.page(board, 0, 9, True, RankStyle.UNIQUE) == []
