"""Bad input: a typed error (RankedError + the fitting builtin), raised before any write."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ranked.backends.base import Backend
from ranked.errors import InvalidNameError, RankedError
from ranked.queue import (
    AsyncQueue,
    AsyncShardedQueue,
    InvalidItemError,
    InvalidPriorityError,
    Lease,
    Queue,
    QueueArgumentError,
    ShardedQueue,
)

from .conftest import Env

BAD_PRIORITIES: list[Any] = [
    math.nan,
    math.inf,
    -math.inf,
    True,
    "1",
    b"1",
    None,
    2**53 + 1,
    -(2**53) - 1,
]


@pytest.mark.parametrize("priority", BAD_PRIORITIES, ids=repr)
def test_bad_priorities(env: Env, priority: Any) -> None:
    queue = Queue(env.backend, "q")
    with pytest.raises(InvalidPriorityError) as caught:
        queue.push(b"x", priority)
    assert isinstance(caught.value, RankedError) and isinstance(caught.value, ValueError)
    with pytest.raises(InvalidPriorityError):
        queue.push_many([(b"ok", 1), (b"x", priority)])  # the good one is not written either
    assert env.keys() == set()


@pytest.mark.parametrize("item", [1, None, 2.5, ["x"], "\udc80"], ids=repr)
def test_bad_items(env: Env, item: Any) -> None:
    queue = Queue(env.backend, "q")
    with pytest.raises(InvalidItemError) as caught:
        queue.push(item, 1)
    assert isinstance(caught.value, RankedError)
    assert env.keys() == set()


def test_bytes_like_items_are_accepted(backend: Backend) -> None:
    queue = Queue(backend, "q")
    queue.push(bytearray(b"ba"), 1)
    queue.push(memoryview(b"mv"), 2)
    assert queue.pop_many(2) == [b"ba", b"mv"]


@pytest.mark.parametrize(
    "call",
    [
        lambda q: q.push(b"x", 1, delay=-1),
        lambda q: q.push(b"x", 1, delay=math.nan),
        lambda q: q.push(b"x", 1, delay="1"),
        lambda q: q.push(b"x", 1, at=-5),
        lambda q: q.push(b"x", 1, delay=1, at=5),
        lambda q: q.push_many([(b"x",)]),
        lambda q: q.push_many([b"x"]),
        lambda q: q.pop_many(-1),
        lambda q: q.pop_many(1.5),
        lambda q: q.peek_many(True),
        lambda q: q.reserve(lease=0),
        lambda q: q.reserve(lease=-1),
        lambda q: q.reserve_many(2, lease=math.inf),
        lambda q: q.pop(timeout=-1),
        lambda q: q.dead_letters(0),
        lambda q: q.retry_dead(-2),
    ],
)
def test_bad_arguments(env: Env, call: Any) -> None:
    queue = Queue(env.backend, "q")
    with pytest.raises(QueueArgumentError) as caught:
        call(queue)
    assert isinstance(caught.value, ValueError)
    assert env.keys() == set()


def test_bad_lease_arguments(backend: Backend) -> None:
    queue = Queue(backend, "q")
    queue.push(b"x", 1)
    lease = queue.reserve(lease=10)
    assert lease is not None
    with pytest.raises(QueueArgumentError):
        queue.nack(lease, delay=-1)
    with pytest.raises(QueueArgumentError):
        queue.extend(lease, 0)
    assert queue.counts().leased == 1
    forged: Lease[bytes] = Lease(b"x", 1.0, 1, 0, b"not a lease")
    assert not queue.ack(forged)
    assert queue.nack(forged) == "not held"


@pytest.mark.parametrize("max_attempts", [0, -1, True, 1.5])
def test_bad_queue_options(backend: Backend, max_attempts: Any) -> None:
    with pytest.raises(QueueArgumentError):
        Queue(backend, "q", max_attempts=max_attempts)


@pytest.mark.parametrize("max_age", [0, -1, math.nan])
def test_bad_max_age(backend: Backend, max_age: float) -> None:
    with pytest.raises(QueueArgumentError):
        Queue(backend, "q", max_age=max_age)


@pytest.mark.parametrize("name", ["", "a{b", "c}d", "tab\there", 5])
def test_bad_names(backend: Backend, name: Any) -> None:
    with pytest.raises(InvalidNameError):
        Queue(backend, name)


BAD_TIMEOUTS: list[Any] = [-1, -0.5, math.nan, math.inf, "1", True, b"1"]


@pytest.mark.parametrize("timeout", BAD_TIMEOUTS, ids=repr)
def test_bad_timeouts_fail_even_with_items_ready(env: Env, timeout: Any) -> None:
    # Checked before anything is popped: the same error whether or not an item is ready,
    # on every path (memory's C lane and Python lane, the scripts, sharded, async).
    queue = Queue(env.backend, "q")
    sharded = ShardedQueue(env.backend, "s", shards=2)
    queue.push_many([(b"a", 1), (b"b", 2)])
    sharded.push_many([(b"a", 1), (b"b", 2)])
    for call in (
        lambda: queue.pop(timeout),
        lambda: queue.pop_with_priority(timeout=timeout),
        lambda: queue.reserve(timeout=timeout),
        lambda: sharded.pop(timeout),
        lambda: sharded.pop_with_priority(timeout),
    ):
        with pytest.raises(QueueArgumentError, match="timeout"):
            call()

    async def scenario(backend: Any) -> None:
        for call in (
            lambda: AsyncQueue(backend, "q").pop(timeout),
            lambda: AsyncQueue(backend, "q").pop_with_priority(timeout),
            lambda: AsyncQueue(backend, "q").reserve(timeout=timeout),
            lambda: AsyncShardedQueue(backend, "s", shards=2).pop(timeout),
        ):
            with pytest.raises(QueueArgumentError, match="timeout"):
                await call()

    env.run_async(scenario)
    assert queue.size() == 2 and sharded.size() == 2  # nothing was popped
