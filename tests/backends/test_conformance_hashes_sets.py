"""Conformance: member-data hashes (with TTL), friend sets, board ∩ set."""

from __future__ import annotations

from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle

from .conftest import NO_TTL, Probe, Steps, fill, submit

KEYS = BoardKeys("arena")


def test_hash_set_get_delete(backend: Steps) -> None:
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


def test_hash_set_with_a_ttl(backend: Steps, probe: Probe) -> None:
    backend.hash_set(KEYS.data, {b"ann": b"Ann"}, 60_000)
    assert 50_000 < probe.pttl(KEYS.data) <= 60_000
    backend.hash_set(KEYS.data, {b"bob": b"Bob"}, None)  # HSET keeps the expiry
    assert 50_000 < probe.pttl(KEYS.data) <= 60_000
    backend.hash_set(KEYS.data, {b"cat": b"Cat"}, 5_000)
    assert 0 < probe.pttl(KEYS.data) <= 5_000
    backend.hash_set(KEYS.meta, {b"order": b"desc"}, None)
    assert probe.pttl(KEYS.meta) == NO_TTL


def test_many_hash_fields_at_once(backend: Steps) -> None:
    fields = {b"f%d" % n: b"v%d" % n for n in range(3000)}
    backend.hash_set(KEYS.data, fields, None)
    names = list(fields)
    assert backend.hash_get(KEYS.data, names) == list(fields.values())
    assert backend.hash_delete(KEYS.data, names[:1000]) == 1000


def test_sets(backend: Steps, probe: Probe) -> None:
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


def test_member_data_beside_a_board(backend: Steps) -> None:
    submit(backend, b"ann", 10, "set")
    backend.hash_set(KEYS.data, {b"ann": b'{"name": "Ann"}'}, None)
    rows = backend.page(fill(backend, {}), 0, 0, True, RankStyle.UNIQUE)
    names = backend.hash_get(KEYS.data, [row[0] for row in rows])
    assert names == [b'{"name": "Ann"}']
