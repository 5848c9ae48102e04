"""BZPOPMIN / BZPOPMAX / BZMPOP on the keyspace alone: replies, errors, and blocking
across threads (woken by writes, timeouts, first-come-first-served, WRONGTYPE first).

Every wait is bounded: a blocked call runs in a daemon thread joined with a timeout, so a
bug fails the test instead of hanging it. Threads other than the blocked one hold
``ks.lock`` around their calls, as the keyspace's thread contract asks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ranked import Keyspace, ResponseError

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
JOIN = 5.0  # seconds: far beyond any wait here, short enough to fail fast on a bug


class Call:
    """One ``ks.execute`` running in a daemon thread; :meth:`result` joins it (bounded)."""

    def __init__(self, ks: Keyspace, *args: Any, hold_lock: bool = False) -> None:
        self.reply: object = None
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self.elapsed = 0.0

        def run() -> None:
            try:
                if hold_lock:
                    with ks.lock:
                        self.reply = ks.execute(*args)
                else:
                    self.reply = ks.execute(*args)
            except BaseException as caught:  # reported by result()
                self.error = caught
            self.elapsed = time.monotonic() - self.started

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def done(self) -> bool:
        return not self.thread.is_alive()

    def result(self, timeout: float = JOIN) -> object:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the blocked call did not return"
        if self.error is not None:
            raise self.error
        return self.reply


def waiting(ks: Keyspace) -> int:
    """How many distinct calls are blocked on the keyspace right now."""
    with ks.lock:
        return len({id(waiter) for queue in ks.blocked.values() for waiter in queue})


def until(condition: Callable[[], bool], timeout: float = JOIN) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        time.sleep(0.002)


def write(ks: Keyspace, *args: Any) -> object:
    """A write from this (the test's) thread, under the keyspace's lock."""
    with ks.lock:
        return ks.execute(*args)


@pytest.fixture
def ks() -> Iterator[Keyspace]:
    keyspace = Keyspace()
    yield keyspace
    assert waiting(keyspace) == 0, "a finished call left a waiter queued"


def error_of(ks: Keyspace, *args: Any) -> str:
    call = Call(ks, *args)
    with pytest.raises(ResponseError) as caught:
        call.result()
    return str(caught.value)


# -- without blocking -----------------------------------------------------------------
def test_pops_at_once_from_the_first_non_empty_key(ks: Keyspace) -> None:
    ks.execute("ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d")
    ks.execute("ZADD", "y", 7, "q")
    assert ks.execute("BZPOPMIN", "z", 0) == [b"z", b"a", b"1"]
    assert ks.execute("BZPOPMAX", "nokey", "z", "y", 0) == [b"z", b"d", b"4"]
    assert ks.execute("bzpopmin", "nokey", "y", "z", "0.5") == [b"y", b"q", b"7"]
    assert ks.execute("EXISTS", "y") == 0  # emptied keys go, as after ZPOPMIN
    assert ks.execute("BZMPOP", 0, 2, "nokey", "z", "MAX", "COUNT", 5) == [
        b"z",
        [[b"c", b"3"], [b"b", b"2"]],
    ]
    ks.execute("ZADD", "z", 1, "a", 2, "b", 3, "c")
    assert ks.execute("BZMPOP", 0, 1, "z", "min") == [b"z", [[b"a", b"1"]]]
    assert ks.execute("BZPOPMIN", "z", "z", 0) == [b"z", b"b", b"2"]


def test_listpack_scores_pop_as_redis_stores_them(ks: Keyspace) -> None:
    ks.execute("ZADD", "small", "-0", "a")  # a small set stores -0 as 0
    assert ks.execute("BZPOPMIN", "small", 0) == [b"small", b"a", b"0"]
    ks.execute("ZADD", "big", "-0", "b" * 65)  # a long member: skiplist, -0 kept
    assert ks.execute("BZPOPMAX", "big", 0) == [b"big", b"b" * 65, b"-0"]


def test_timeout_with_every_key_missing_replies_nil(ks: Keyspace) -> None:
    ks.execute("ZADD", "z", 1, "a")
    ks.execute("ZREM", "z", "a")
    call = Call(ks, "BZPOPMIN", "nokey", "z", "0.05")
    assert call.result() is None
    assert 0.04 <= call.elapsed < JOIN
    assert Call(ks, "BZMPOP", "0.01", 2, "a", "b", "MAX", "COUNT", 3).result() is None
    assert Call(ks, "BZPOPMAX", "nokey", "0.0001").result() is None  # rounds up to 1 ms


def test_errors_in_redis_order(ks: Keyspace) -> None:
    ks.execute("ZADD", "z", 1, "a")
    ks.execute("SET", "str", "v")
    arity = "ERR wrong number of arguments for '{}' command"
    assert error_of(ks, "BZPOPMIN", "z") == arity.format("bzpopmin")
    assert error_of(ks, "BZPOPMAX") == arity.format("bzpopmax")
    assert error_of(ks, "BZMPOP", 0, 1, "z") == arity.format("bzmpop")
    not_float = "ERR timeout is not a float or out of range"
    assert error_of(ks, "BZPOPMIN", "str", "z", "abc") == not_float  # timeout first
    assert error_of(ks, "BZPOPMIN", "str", "-1") == "ERR timeout is negative"
    assert error_of(ks, "BZPOPMIN", "str", "nokey", 0) == WRONGTYPE
    assert error_of(ks, "BZPOPMIN", "nokey", "str", "z", 0) == WRONGTYPE
    assert ks.execute("BZPOPMIN", "z", "str", 0) == [b"z", b"a", b"1"]  # never reaches str
    numkeys = "ERR numkeys should be greater than 0"
    assert error_of(ks, "BZMPOP", "abc", 0, "z", "MIN") == numkeys  # numkeys before timeout
    assert error_of(ks, "BZMPOP", "abc", "x", "z", "MIN") == numkeys
    assert error_of(ks, "BZMPOP", "abc", 2, "z", "MIN") == "ERR syntax error"
    assert error_of(ks, "BZMPOP", "abc", 1, "z", "MID") == "ERR syntax error"
    count = "ERR count should be greater than 0"
    assert error_of(ks, "BZMPOP", "abc", 1, "z", "MIN", "COUNT", 0) == count
    assert error_of(ks, "BZMPOP", 0, 1, "z", "MIN", "COUNT") == "ERR syntax error"
    assert error_of(ks, "BZMPOP", 0, 1, "z", "MIN", "COUNT", 1, "COUNT", 1) == "ERR syntax error"
    assert error_of(ks, "BZMPOP", "abc", 1, "z", "MIN", "COUNT", 1) == not_float
    assert error_of(ks, "BZMPOP", 0, 2, "nokey", "str", "MAX") == WRONGTYPE


# -- blocking across threads ------------------------------------------------------------
def test_a_write_from_another_thread_wakes_the_waiter(ks: Keyspace) -> None:
    call = Call(ks, "BZPOPMIN", "nokey", "q", 5)
    until(lambda: waiting(ks) == 1)
    time.sleep(0.02)
    assert not call.done()
    assert write(ks, "ZADD", "q", 2, "b", 1, "a") == 2
    assert call.result() == [b"q", b"a", b"1"]
    assert ks.execute("ZRANGE", "q", 0, -1, "WITHSCORES") == [b"b", b"2"]


def test_timeout_zero_waits_until_woken(ks: Keyspace) -> None:
    call = Call(ks, "BZPOPMAX", "q", 0)
    until(lambda: waiting(ks) == 1)
    time.sleep(0.2)  # longer than any small timeout: still waiting
    assert not call.done()
    write(ks, "ZADD", "q", 1, "a", 9, "z")
    assert call.result() == [b"q", b"z", b"9"]


def test_fractional_timeout_expires(ks: Keyspace) -> None:
    call = Call(ks, "BZPOPMIN", "q", "0.15")
    assert call.result() is None
    assert 0.14 <= call.elapsed < JOIN
    assert waiting(ks) == 0
    write(ks, "ZADD", "q", 1, "a")  # nobody is served any more
    assert ks.execute("ZCARD", "q") == 1


def test_waiter_holding_the_lock_releases_it_while_waiting(ks: Keyspace) -> None:
    call = Call(ks, "BZPOPMIN", "q", 0, hold_lock=True)
    until(lambda: waiting(ks) == 1)
    acquired = ks.lock.acquire(timeout=JOIN)  # would time out if the waiter kept it
    assert acquired
    try:
        ks.execute("ZADD", "q", 1, "a")
    finally:
        ks.lock.release()
    assert call.result() == [b"q", b"a", b"1"]


def test_first_blocked_is_first_served(ks: Keyspace) -> None:
    calls: list[Call] = []
    for _ in range(3):
        calls.append(Call(ks, "BZPOPMIN", "q", "other", 0))
        until(lambda: waiting(ks) == len(calls))  # each queued before the next: order known
    write(ks, "ZADD", "q", 10, "x")  # one member: only the first waiter gets it
    assert calls[0].result() == [b"q", b"x", b"10"]
    time.sleep(0.02)
    assert not calls[1].done() and not calls[2].done()
    write(ks, "ZADD", "q", 3, "c", 1, "a", 2, "b")  # each remaining waiter pops in turn
    assert calls[1].result() == [b"q", b"a", b"1"]
    assert calls[2].result() == [b"q", b"b", b"2"]
    assert ks.execute("ZRANGE", "q", 0, -1) == [b"c"]


def test_wrongtype_is_raised_before_blocking(ks: Keyspace) -> None:
    ks.execute("SET", "str", "v")
    started = time.monotonic()
    assert error_of(ks, "BZPOPMIN", "nokey", "str", 0) == WRONGTYPE
    assert error_of(ks, "BZMPOP", 0, 2, "nokey", "str", "MIN") == WRONGTYPE
    assert time.monotonic() - started < JOIN
    assert waiting(ks) == 0


def test_a_key_of_another_type_wakes_nobody(ks: Keyspace) -> None:
    call = Call(ks, "BZPOPMIN", "q", 0)
    until(lambda: waiting(ks) == 1)
    write(ks, "SET", "q", "text")  # Redis 7.0 keeps the client blocked
    time.sleep(0.02)
    assert not call.done()
    write(ks, "DEL", "q")
    write(ks, "ZADD", "q", 5, "e")
    assert call.result() == [b"q", b"e", b"5"]


def test_served_from_the_key_that_was_written(ks: Keyspace) -> None:
    call = Call(ks, "BZMPOP", 0, 3, "a", "b", "c", "MAX", "COUNT", 2)
    until(lambda: waiting(ks) == 1)
    write(ks, "ZADD", "b", 1, "x", 2, "y", 3, "z")
    assert call.result() == [b"b", [[b"z", b"3"], [b"y", b"2"]]]
    assert ks.execute("ZRANGE", "b", 0, -1) == [b"x"]


def test_a_store_command_into_the_key_wakes_the_waiter(ks: Keyspace) -> None:
    ks.execute("ZADD", "src", 4, "d", 5, "e")
    call = Call(ks, "BZPOPMAX", "dest", 0)
    until(lambda: waiting(ks) == 1)
    write(ks, "ZUNIONSTORE", "dest", 1, "src", "WEIGHTS", 2)
    assert call.result() == [b"dest", b"e", b"10"]


def test_typed_api_writes_serve_through_serve_blocked(ks: Keyspace) -> None:
    call = Call(ks, "BZPOPMIN", "q", 0)
    until(lambda: waiting(ks) == 1)
    with ks.lock:
        zset = ks.zset("q", create=True)
        assert zset is not None
        zset.add(b"a", 1.0)
        assert ks.serve_blocked() == 1
    assert call.result() == [b"q", b"a", b"1"]
    assert ks.serve_blocked() == 0  # nobody waits: nothing to do


def test_a_typed_write_is_served_by_the_next_execute_anyway(ks: Keyspace) -> None:
    call = Call(ks, "BZPOPMAX", "q", 0)
    until(lambda: waiting(ks) == 1)
    with ks.lock:
        zset = ks.zset("q", create=True)
        assert zset is not None
        zset.add(b"a", 1.0)
        zset.add(b"b", 2.0)
    assert not call.done()
    assert write(ks, "EXISTS", "nokey") == 0  # any command serves the waiters afterwards
    assert call.result() == [b"q", b"b", b"2"]


def test_expired_keys_are_missing_for_blocking_pops() -> None:
    now = [1_700_000_000.0]
    ks = Keyspace(clock=lambda: now[0])
    ks.execute("ZADD", "q", 1, "a")
    ks.execute("PEXPIRE", "q", 100)
    now[0] += 1.0
    assert Call(ks, "BZPOPMIN", "q", "0.01").result() is None  # expired: nothing to pop
    call = Call(ks, "BZPOPMIN", "q", 0)
    until(lambda: waiting(ks) == 1)
    with ks.lock:  # a write whose key is already past its deadline serves nobody
        zset = ks.zset("q", create=True)
        assert zset is not None
        zset.add(b"b", 2.0)
        ks.put_deadline(b"q", ks.now_ms() - 1)
        assert ks.serve_blocked() == 0
    write(ks, "ZADD", "q", 3, "c")  # a live key does
    assert call.result() == [b"q", b"c", b"3"]


def test_many_producers_and_consumers_lose_nothing(ks: Keyspace) -> None:
    members = [b"m%03d" % n for n in range(120)]
    consumers = [Call(ks, "BZPOPMIN", "q", "p", 0) for _ in range(4)]
    got: list[object] = []

    def consume() -> None:
        while True:
            reply = ks.execute("BZPOPMIN", "q", "p", "0.5")
            if reply is None:
                return
            got.append(reply)

    def produce(part: list[bytes], key: str) -> None:
        for member in part:
            write(ks, "ZADD", key, 1, member)

    workers = [threading.Thread(target=consume, daemon=True) for _ in range(3)]
    workers += [
        threading.Thread(target=produce, args=(members[i::2], "qp"[i]), daemon=True)
        for i in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(JOIN * 2)
        assert not worker.is_alive()
    got += [consumer.result() for consumer in consumers]
    popped = sorted(reply[1] for reply in got if isinstance(reply, list))
    assert popped == sorted(members)
    assert ks.execute("EXISTS", "q", "p") == 0
