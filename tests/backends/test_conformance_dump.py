"""Key dumps (``ranked.backends.dump``): every key under a prefix, with its value and
deadline, dumped atomically and restored equal on memory://; Redis and Redis Cluster
refuse before sending anything."""

from __future__ import annotations

import pytest

from ranked.backends.dump import DUMP_PREFIX, RESTORE_DUMP, parse_dump
from ranked.backends.memory import MemoryBackend
from ranked.core.keys import BoardKeys
from ranked.errors import SnapshotError, UnsupportedOperationError

from .conftest import Case, Steps, request, target

KEYS = BoardKeys("arena")


def fill(backend: Steps) -> None:
    for i in range(50):
        backend.submit(request(b"m%d" % i, float(i % 7), "set"))
    backend.hash_set(KEYS.data, {b"m1": b"data"}, None)
    backend.set_add(KEYS.friends(b"m1"), [b"m2", b"m3"])
    backend.expire_at([KEYS.friends(b"m1")], 4_000_000_000_000)
    backend.set_add(BoardKeys("other").data, [b"elsewhere"])


def test_round_trip_on_memory() -> None:
    backend = MemoryBackend()
    source = Steps(backend)
    fill(source)
    payload = backend.bind(DUMP_PREFIX)(KEYS.prefix, KEYS.prefix + b":seq")[0]
    keys = {key for key, _, _ in parse_dump(payload)}
    assert {KEYS.window("all"), KEYS.data, KEYS.friends(b"m1")} <= keys
    assert all(key.startswith(KEYS.prefix) for key in keys)
    copy = MemoryBackend()
    try:
        assert copy.bind(RESTORE_DUMP)(payload) == len(parse_dump(payload))
        again = Steps(copy)
        page = again.page(target(), 0, 100, True, "competition")
        assert page == source.page(target(), 0, 100, True, "competition")
        assert again.count(target()) == 50
        assert again.hash_get(KEYS.data, [b"m1"]) == [b"data"]
        assert again.set_members(KEYS.friends(b"m1")) == {b"m2", b"m3"}
        assert copy.keyspace.deadline(KEYS.friends(b"m1")) == 4_000_000_000_000
        assert again.set_members(BoardKeys("other").data) == set()
        assert copy.bind(DUMP_PREFIX)(KEYS.prefix, KEYS.prefix + b":seq")[0] == payload
    finally:
        copy.close()
        backend.close()


@pytest.mark.parametrize("cut", [0, 3, 20, 100, -1])
def test_a_damaged_payload_changes_nothing(cut: int) -> None:
    source = MemoryBackend()
    target_backend = MemoryBackend()
    try:
        fill(Steps(source))
        payload = source.bind(DUMP_PREFIX)(KEYS.prefix, KEYS.prefix + b":seq")[0]
        with pytest.raises(SnapshotError):
            target_backend.bind(RESTORE_DUMP)(payload[:cut])
        assert len(target_backend.keyspace) == 0
    finally:
        source.close()
        target_backend.close()


def test_only_memory_dumps(case: Case) -> None:
    if case.kind == "memory":
        dump = case.backend.bind(DUMP_PREFIX)
        assert dump(KEYS.prefix, KEYS.prefix + b":seq") == (b"RKDP\x01", None)
        assert case.backend.bind(RESTORE_DUMP)(b"RKDP\x01") == 0
        return
    with pytest.raises(UnsupportedOperationError):
        case.backend.bind(DUMP_PREFIX)(KEYS.prefix, KEYS.prefix + b":seq")[0]
    with pytest.raises(UnsupportedOperationError):
        case.backend.bind(RESTORE_DUMP)(b"RKDP\x01")
