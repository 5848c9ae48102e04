"""The keyspace's hot-path accessors: get_at, keep_deadline, raw tables."""

from __future__ import annotations

from ranked.engine.keyspace import Keyspace


class Clock:
    def __init__(self, seconds: float = 1_000.0) -> None:
        self.seconds = seconds

    def __call__(self) -> float:
        return self.seconds


def test_get_at_expires_like_get() -> None:
    clock = Clock()
    keyspace = Keyspace(clock=clock)
    keyspace.execute("SET", "k", "v", "PX", "100")
    now_ms = keyspace.now_ms()
    assert keyspace.get_at(b"k", now_ms + 100) == b"v"
    assert keyspace.get_at(b"k", now_ms + 101) is None
    assert keyspace.execute("EXISTS", "k") == 0


def test_keep_deadline_moved_later_expires_at_the_new_deadline() -> None:
    clock = Clock()
    keyspace = Keyspace(clock=clock)
    keyspace.execute("SET", "k", "v")
    start = keyspace.now_ms()
    keyspace.keep_deadline(b"k", start + 100)
    for step in range(1, 50):  # a key hit again and again: its deadline keeps moving
        keyspace.keep_deadline(b"k", start + 100 + step * 10)
    assert keyspace.execute("PTTL", "k") == 100 + 49 * 10
    clock.seconds += 0.2  # past the first deadline, before the last
    assert keyspace.expire_pending() == 0
    assert keyspace.raw_values.get(b"k") == b"v"  # active expiry did not take it early
    clock.seconds += 0.4  # past the last deadline
    assert keyspace.expire_pending() == 1
    assert b"k" not in keyspace.raw_values
    assert b"k" not in keyspace.raw_deadlines


def test_keep_deadline_moved_earlier_takes_effect_at_once() -> None:
    clock = Clock()
    keyspace = Keyspace(clock=clock)
    keyspace.execute("SET", "k", "v")
    start = keyspace.now_ms()
    keyspace.keep_deadline(b"k", start + 1000)
    keyspace.keep_deadline(b"k", start + 100)
    clock.seconds += 0.2
    assert keyspace.expire_pending() == 1
    assert b"k" not in keyspace.raw_values


def test_a_late_key_deleted_or_persisted_is_forgotten() -> None:
    clock = Clock()
    keyspace = Keyspace(clock=clock)
    keyspace.execute("SET", "a", "1")
    keyspace.execute("SET", "b", "2")
    start = keyspace.now_ms()
    for key in (b"a", b"b"):
        keyspace.keep_deadline(key, start + 100)
        keyspace.keep_deadline(key, start + 200)
    keyspace.execute("DEL", "a")
    keyspace.execute("PERSIST", "b")
    clock.seconds += 1
    assert keyspace.expire_pending() == 0
    assert keyspace.execute("GET", "b") == b"2"
    assert keyspace.execute("PTTL", "b") == -1
