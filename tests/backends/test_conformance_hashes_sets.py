"""Conformance: member-data hashes (with TTL), friend sets, board ∩ set."""

from __future__ import annotations

from ranked.backends.base import Backend
from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle

from .conftest import MISSING, NO_TTL, Case, Probe, fill, submit

KEYS = BoardKeys("arena")


def test_hash_set_get_delete(backend: Backend) -> None:
    key = KEYS.data
    backend.hash_set(key, {b"ann": b"Ann", b"bob": b"\x00\xffbin"}, None)
    assert backend.hash_get(key, [b"bob", b"nobody", b"ann"]) == [b"\x00\xffbin", None, b"Ann"]
    backend.hash_set(key, {b"ann": b"Annie"}, None)
    assert backend.hash_get(key, [b"ann"]) == [b"Annie"]
    assert backend.hash_delete(key, [b"ann", b"nobody"]) == 1
    assert backend.hash_get(key, [b"ann", b"bob"]) == [None, b"\x00\xffbin"]
    assert backend.hash_delete(key, [b"bob"]) == 1
    assert backend.hash_get(key, [b"bob"]) == [None]
    assert backend.hash_delete(KEYS.meta, [b"x"]) == 0
    assert backend.hash_get(KEYS.meta, [b"x", b"y"]) == [None, None]


def test_hash_set_with_a_ttl(backend: Backend, probe: Probe) -> None:
    backend.hash_set(KEYS.data, {b"ann": b"Ann"}, 60_000)
    assert 50_000 < probe.pttl(KEYS.data) <= 60_000
    backend.hash_set(KEYS.data, {b"bob": b"Bob"}, None)  # HSET keeps the expiry
    assert 50_000 < probe.pttl(KEYS.data) <= 60_000
    backend.hash_set(KEYS.data, {b"cat": b"Cat"}, 5_000)
    assert 0 < probe.pttl(KEYS.data) <= 5_000
    backend.hash_set(KEYS.meta, {b"order": b"desc"}, None)
    assert probe.pttl(KEYS.meta) == NO_TTL


def test_many_hash_fields_at_once(backend: Backend) -> None:
    fields = {b"f%d" % n: b"v%d" % n for n in range(3000)}
    backend.hash_set(KEYS.data, fields, None)
    names = list(fields)
    assert backend.hash_get(KEYS.data, names) == list(fields.values())
    assert backend.hash_delete(KEYS.data, names[:1000]) == 1000


def test_sets(backend: Backend, probe: Probe) -> None:
    key = KEYS.friends(b"ann")
    assert backend.set_add(key, [b"bob", b"cat", b"bob"]) == 2
    assert backend.set_add(key, [b"cat", b"dan"]) == 1
    assert backend.set_members(key) == {b"bob", b"cat", b"dan"}
    assert backend.set_remove(key, [b"bob", b"nobody"]) == 1
    assert backend.set_members(key) == {b"cat", b"dan"}
    assert backend.set_remove(key, [b"cat", b"dan"]) == 0 + 2
    assert backend.set_members(key) == set()
    assert not probe.exists(key)
    assert backend.set_members(KEYS.friends(b"nobody")) == set()
    assert backend.set_remove(KEYS.friends(b"nobody"), [b"x"]) == 0


def test_intersect_store_keeps_board_scores(case: Case) -> None:
    backend, probe = case.backend, case.probe
    board = fill(backend, {b"ann": 50, b"bob": 40, b"cat": 30, b"dan": 20})
    friends = KEYS.friends(b"ann")
    backend.set_add(friends, [b"ann", b"cat", b"dan", b"stranger"])
    view = KEYS.friend_view(b"ann")
    if not backend.cross_slot:
        # Redis Cluster forbids multi-key commands across slots; features fall back to
        # batched score lookups there, which must give the same numbers.
        assert case.kind == "cluster"
        members = sorted(backend.set_members(friends))
        scores = backend.scores(board, members)
        assert dict(zip(members, scores, strict=True)) == {
            b"ann": 50.0,
            b"cat": 30.0,
            b"dan": 20.0,
            b"stranger": None,
        }
        return
    assert backend.intersect_store(view, board.key, friends, 60_000) == 3
    assert backend.range_all(view, True, 10) == [(b"ann", 50.0), (b"cat", 30.0), (b"dan", 20.0)]
    assert 50_000 < probe.pttl(view) <= 60_000
    # Stored again: replaced, not merged.
    backend.set_remove(friends, [b"ann"])
    assert backend.intersect_store(view, board.key, friends, 60_000) == 2
    assert backend.range_all(view, False, 10) == [(b"dan", 20.0), (b"cat", 30.0)]
    # Nothing in common: the view is gone.
    assert backend.intersect_store(view, board.key, KEYS.friends(b"nobody"), 60_000) == 0
    assert probe.pttl(view) == MISSING
    assert backend.range_all(view, True, 10) == []


def test_member_data_beside_a_board(backend: Backend) -> None:
    submit(backend, b"ann", 10, "set")
    backend.hash_set(KEYS.data, {b"ann": b'{"name": "Ann"}'}, None)
    rows = backend.page(fill(backend, {}), 0, 0, True, RankStyle.UNIQUE)
    names = backend.hash_get(KEYS.data, [row[0] for row in rows])
    assert names == [b'{"name": "Ann"}']
