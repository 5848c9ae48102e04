"""Memory backend only: an injected clock drives now_ms, TTLs and composite stamps;
the keyspace's Redis-syntax view sees the same data."""

from __future__ import annotations

import pytest

from ranked.backends.base import AsyncBackend, Backend
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle
from ranked.leaderboard._requests import Composite

from .conftest import Steps, request, target


class FakeClock:
    """Unix seconds that move only when told."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance_ms(self, ms: int) -> None:
        self.now += ms / 1000


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def memory(clock: FakeClock) -> Steps:
    return Steps(MemoryBackend(clock=clock))


def test_now_ms_reads_the_injected_clock(memory: Steps, clock: FakeClock) -> None:
    assert memory.now_ms() == 1_700_000_000_000
    clock.advance_ms(1_234)
    assert memory.now_ms() == 1_700_000_001_234


def test_windowed_keys_expire_when_the_clock_passes_the_ttl(
    memory: Steps, clock: FakeClock
) -> None:
    daily, total = target(window="d:1", ttl_ms=10_000), target()
    memory.submit(request(b"ann", 5, "set", targets=(daily, total)))
    assert memory.keyspace.deadline(daily.key) == memory.now_ms() + 10_000
    clock.advance_ms(9_999)
    assert memory.count(daily) == 1
    memory.submit(request(b"bob", 1, "set", targets=(daily,)))  # pushes the deadline on
    clock.advance_ms(9_999)
    assert memory.count(daily) == 2
    clock.advance_ms(2)
    assert memory.count(daily) == 0
    assert memory.count(total) == 1
    assert memory.keyspace.deadline(total.key) is None


def test_active_expiry_reclaims_keys_nobody_reads(memory: Steps, clock: FakeClock) -> None:
    for day in range(20):
        memory.submit(request(b"ann", 1, "set", targets=(target(window=f"d:{day}", ttl_ms=1),)))
    clock.advance_ms(10)
    for _ in range(200):  # writes elsewhere do the housekeeping
        memory.submit(request(b"ann", 1, "incr"))
    assert len(memory.keyspace) == 1


def test_expire_at_uses_absolute_clock_time(memory: Steps, clock: FakeClock) -> None:
    memory.submit(request(b"ann", 5, "set"))
    memory.expire_at([target().key], memory.now_ms() + 500)
    clock.advance_ms(500)
    assert memory.count(target().key) == 1
    clock.advance_ms(1)
    assert memory.count(target().key) == 0


def test_hash_ttls_follow_the_clock(memory: Steps, clock: FakeClock) -> None:
    keys = BoardKeys("arena")
    memory.hash_set(keys.data, {b"ann": b"Ann"}, 1_000)
    memory.submit(request(b"ann", 5, "set"))
    assert memory.hash_get(keys.data, [b"ann"]) == [b"Ann"]
    clock.advance_ms(1_001)
    assert memory.hash_get(keys.data, [b"ann"]) == [None]


def test_composite_stamps_come_from_the_request(memory: Steps) -> None:
    layout = Composite(score_bits=21, time_bits=32, epoch_ms=0, unit_ms=1000)
    now = memory.now_ms()
    [outcome] = memory.submit(request(b"ann", 3, "set", composite=layout, now_ms=now))
    assert outcome.score == float((3 << 32) + (2**32 - 1 - now // 1000))


def test_execute_sees_the_same_data(memory: Steps) -> None:
    keys = BoardKeys("arena")
    memory.submit(request(b"ann", 5, "set"))
    memory.submit(request(b"bob", 7, "set"))
    memory.hash_set(keys.data, {b"ann": b"Ann"}, None)
    memory.set_add(keys.friends(b"ann"), [b"bob"])
    keyspace = memory.keyspace
    assert keyspace.execute("ZREVRANGE", target().key, 0, -1, "WITHSCORES") == [
        b"bob",
        b"7",
        b"ann",
        b"5",
    ]
    assert keyspace.execute("HGET", keys.data, "ann") == b"Ann"
    assert keyspace.execute("SMEMBERS", keys.friends(b"ann")) == [b"bob"]
    keyspace.execute("ZADD", target().key, 9, "cat")
    assert memory.ranks(target(), [b"cat"], True, RankStyle.UNIQUE) == [(9.0, 1)]


def test_batch_rollback_restores_ttls_and_trimmed_members(memory: Steps, clock: FakeClock) -> None:
    daily = target(window="d:1", ttl_ms=5_000)
    memory.submit_batch([request(m, s, "set", targets=(daily,)) for m, s in [(b"a", 3), (b"b", 2)]])
    deadline = memory.keyspace.deadline(daily.key)
    clock.advance_ms(1_000)
    with pytest.raises(ValueError):
        memory.submit_batch(
            [
                request(b"c", 9, "set", targets=(daily, target(window="d:2", ttl_ms=5))),
                request(b"d", 8, "set", targets=(daily,), keep=0),  # empties the window
                request(b"e", 1, "set", targets=(daily,), keep=-1),
            ]
        )
    assert memory.keyspace.deadline(daily.key) == deadline
    assert memory.page(daily, 0, 9, True, RankStyle.UNIQUE) == [(b"a", 3.0, 1), (b"b", 2.0, 2)]
    assert memory.count(target(window="d:2").key) == 0
    assert len(memory.keyspace) == 1


def test_from_url_and_the_async_twin() -> None:
    assert MemoryBackend.from_url("memory://").url == "memory://"
    with pytest.raises(ValueError):
        MemoryBackend.from_url("redis://localhost")
    twin = AsyncMemoryBackend.from_url()
    assert twin.cross_slot is True
    assert twin.keyspace is twin.sync.keyspace is MemoryBackend.from_url().keyspace
    assert MemoryBackend().cross_slot is True


def test_both_classes_satisfy_the_protocols() -> None:
    # mypy checks these assignments against the Protocols of base.py.
    sync: Backend = MemoryBackend()
    twin: AsyncBackend = AsyncMemoryBackend()
    assert sync.url == twin.url == "memory://"
