"""Bad input: a typed error (RankedError + the fitting builtin), raised before any write.

Durations and instants (a delay, ``at``, a lease, a timeout, ``max_age``, ``now_us``) are
checked against the one range every backend holds exactly (``ranked.core.limits``): a
value outside raises ``OutOfRangeError`` naming the limit, and the largest values inside
behave exactly, on Redis too (defect 2). A lease whose token is not the bytes reserve
returned raises ``QueueArgumentError`` on every backend (defect 6).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from ranked.core.limits import MAX_DURATION_S, MAX_INSTANT_S
from ranked.errors import InvalidNameError, OutOfRangeError, RankedError
from ranked.queue import (
    Counts,
    InvalidItemError,
    InvalidPriorityError,
    Lease,
    Queue,
    QueueArgumentError,
)

from .conftest import SECOND, T0, Api

MAX_DURATION_US = MAX_DURATION_S * SECOND
MAX_INSTANT_US = MAX_INSTANT_S * SECOND

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


def snapshot(api: Api, queue: Queue[Any]) -> tuple[object, ...]:
    """What a refused call must leave as it was: every key, the counts, the heads."""
    return api.env.keys(), queue.counts(now_us=T0), queue.peek_many(10, now_us=T0)


def loaded(api: Api, name: str = "q") -> tuple[Queue[Any], Lease[Any]]:
    """A queue with two items ready, one delayed and one leased (at T0)."""
    queue = api.Queue(name)
    queue.push_many([(b"a", 1), (b"b", 2), (b"c", 3)], now_us=T0)
    queue.push(b"later", 0, delay=60, now_us=T0)
    lease = queue.reserve(lease=60, now_us=T0)
    assert lease is not None
    return queue, lease


@pytest.mark.parametrize("priority", BAD_PRIORITIES, ids=repr)
def test_bad_priorities(api: Api, priority: Any) -> None:
    queue = api.Queue("q")
    with pytest.raises(InvalidPriorityError) as caught:
        queue.push(b"x", priority)
    assert isinstance(caught.value, RankedError) and isinstance(caught.value, ValueError)
    with pytest.raises(InvalidPriorityError):
        queue.push_many([(b"ok", 1), (b"x", priority)])  # the good one is not written either
    assert api.env.keys() == set()


@pytest.mark.parametrize("item", [1, None, 2.5, ["x"], "\udc80"], ids=repr)
def test_bad_items(api: Api, item: Any) -> None:
    queue = api.Queue("q")
    with pytest.raises(InvalidItemError) as caught:
        queue.push(item, 1)
    assert isinstance(caught.value, RankedError)
    assert api.env.keys() == set()


def test_bytes_like_items_are_accepted(api: Api) -> None:
    queue = api.Queue("q")
    queue.push(bytearray(b"ba"), 1)
    queue.push(memoryview(b"mv"), 2)
    assert queue.pop_many(2) == [b"ba", b"mv"]


@pytest.mark.parametrize(
    "call",
    [
        lambda q: q.push(b"x", 1, delay=1, at=5),
        lambda q: q.push_many([(b"x",)]),
        lambda q: q.push_many([b"x"]),
        lambda q: q.pop_many(-1),
        lambda q: q.pop_many(1.5),
        lambda q: q.peek_many(True),
        lambda q: q.reserve_many(-1),
        lambda q: q.dead_letters(0),
        lambda q: q.retry_dead(-2),
    ],
)
def test_bad_arguments(api: Api, call: Any) -> None:
    queue, _ = loaded(api)
    before = snapshot(api, queue)
    with pytest.raises(QueueArgumentError) as caught:
        call(queue)
    assert isinstance(caught.value, ValueError)
    assert snapshot(api, queue) == before


OUT_OF_RANGE: list[Any] = [
    pytest.param(lambda q: q.push(b"x", 1, delay=-1), id="delay<0"),
    pytest.param(lambda q: q.push(b"x", 1, delay=math.nan), id="delay-nan"),
    pytest.param(lambda q: q.push(b"x", 1, delay="1"), id="delay-text"),
    pytest.param(lambda q: q.push(b"x", 1, delay=1e13), id="delay-far"),
    pytest.param(lambda q: q.push(b"x", 1, delay=MAX_DURATION_S + 1), id="delay-max+1"),
    pytest.param(lambda q: q.push(b"x", 1, at=-5), id="at<0"),
    pytest.param(lambda q: q.push(b"x", 1, at=1e13), id="at-far"),
    pytest.param(lambda q: q.push(b"x", 1, at=MAX_INSTANT_S + 1), id="at-max+1"),
    pytest.param(lambda q: q.push_many([(b"x", 1)], delay=1e13), id="many-delay-far"),
    pytest.param(lambda q: q.push_many([], delay=1e13), id="many-empty-delay-far"),
    pytest.param(lambda q: q.push(b"x", 1, now_us=-1), id="now<0"),
    pytest.param(lambda q: q.push(b"x", 1, now_us=MAX_INSTANT_US + 1), id="now-far"),
    pytest.param(lambda q: q.push(b"x", 1, now_us=1.5), id="now-float"),
    pytest.param(lambda q: q.pop(now_us=2**70), id="pop-now-far"),
    pytest.param(lambda q: q.pop_many(3, now_us=-1), id="pop-many-now"),
    pytest.param(lambda q: q.reserve(lease=0), id="lease-0"),
    pytest.param(lambda q: q.reserve(lease=-1), id="lease<0"),
    pytest.param(lambda q: q.reserve(lease=1e13), id="lease-far"),
    pytest.param(lambda q: q.reserve_many(2, lease=math.inf), id="lease-inf"),
    pytest.param(lambda q: q.reserve_many(0, lease=1e13), id="lease-far-none-wanted"),
    pytest.param(lambda q: q.pop(timeout=-1), id="timeout<0"),
    pytest.param(lambda q: q.pop(timeout=1e13), id="timeout-far"),
    pytest.param(lambda q: q.reserve(timeout=math.inf), id="reserve-timeout-inf"),
]


@pytest.mark.parametrize("call", OUT_OF_RANGE)
def test_durations_and_instants_out_of_range(api: Api, call: Any) -> None:
    queue, _ = loaded(api)
    before = snapshot(api, queue)
    with pytest.raises(OutOfRangeError) as caught:
        call(queue)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, RankedError)
    assert snapshot(api, queue) == before


def test_lease_durations_out_of_range(api: Api) -> None:
    queue, lease = loaded(api)
    before = snapshot(api, queue)
    for call in (
        lambda: queue.extend(lease, 1e13, now_us=T0),
        lambda: queue.extend(lease, 0, now_us=T0),
        lambda: queue.nack(lease, delay=1e13, now_us=T0),
        lambda: queue.nack(lease, delay=-1, now_us=T0),
        lambda: queue.ack(lease, now_us=-5),
    ):
        with pytest.raises(OutOfRangeError):
            call()
    assert snapshot(api, queue) == before
    assert queue.ack(lease, now_us=T0)


def test_the_longest_delay_is_exact(api: Api) -> None:
    """Defect 2: on Redis a far delay overflowed the script's integer text and the item
    was ready at once. The longest delay now holds to the microsecond everywhere."""
    queue = api.Queue("far")
    queue.push(b"x", 1, delay=MAX_DURATION_S, now_us=T0)
    due = T0 + MAX_DURATION_US
    assert queue.pop(now_us=T0) is None
    assert queue.pop(now_us=due - 1) is None
    assert queue.counts(now_us=due - 1) == Counts(ready=0, delayed=1, leased=0, dead=0)
    assert queue.pop(now_us=due) == b"x"


def test_the_latest_instant_is_exact(api: Api) -> None:
    queue = api.Queue("late")
    queue.push(b"x", 1, at=MAX_INSTANT_S, now_us=T0)
    assert queue.pop(now_us=MAX_INSTANT_US - 1) is None
    assert queue.pop(now_us=MAX_INSTANT_US) == b"x"


def test_the_longest_lease_is_not_delivered_again(api: Api) -> None:
    """Defect 2: on Redis ``reserve(1e13)`` wrapped its deadline into the past and a second
    consumer took the same item. The longest lease now holds until its deadline."""
    queue = api.Queue("held")
    queue.push(b"job", 1, now_us=T0)
    lease = queue.reserve(lease=MAX_DURATION_S, now_us=T0)
    assert lease is not None and lease.deadline_us == T0 + MAX_DURATION_US
    assert queue.reserve(lease=1, now_us=T0 + 1) is None  # a second consumer gets nothing
    assert queue.reserve(lease=1, now_us=lease.deadline_us - 1) is None
    assert queue.counts(now_us=lease.deadline_us - 1) == Counts(0, 0, 1, 0)
    renewed = queue.extend(lease, MAX_DURATION_S, now_us=T0 + 1)
    assert renewed is not None and renewed.deadline_us == T0 + 1 + MAX_DURATION_US
    assert queue.reserve(lease=1, now_us=lease.deadline_us) is None  # extended: still held
    again = queue.reserve(lease=1, now_us=renewed.deadline_us)  # expired at its deadline
    assert again is not None and (again.item, again.delivery) == (b"job", 2)
    assert queue.nack(again, delay=MAX_DURATION_S, now_us=renewed.deadline_us) == "delayed"
    assert queue.counts(now_us=renewed.deadline_us) == Counts(0, 1, 0, 0)


BAD_LEASES: list[Any] = [
    pytest.param(Lease(b"a", 1.0, 1, T0, None), id="token-none"),  # type: ignore[arg-type]
    pytest.param(Lease(b"a", 1.0, 1, T0, "text"), id="token-str"),  # type: ignore[arg-type]
    pytest.param(Lease(b"a", 1.0, 1, T0, 12), id="token-int"),  # type: ignore[arg-type]
    pytest.param("not a lease", id="str"),
    pytest.param(None, id="none"),
]


@pytest.mark.parametrize("bad", BAD_LEASES)
def test_a_lease_with_a_bad_token_is_refused(api: Api, bad: Any) -> None:
    """Defect 6: ``ack(Lease(..., token=None))`` raised a bare TypeError inside the Redis
    path. Every lease is checked where it enters; nothing changes."""
    queue, lease = loaded(api)
    before = snapshot(api, queue)
    for call in (
        lambda: queue.ack(bad, now_us=T0),
        lambda: queue.ack_many([lease, bad], now_us=T0),  # the good lease is not acked
        lambda: queue.nack(bad, now_us=T0),
        lambda: queue.extend(bad, 5, now_us=T0),
    ):
        with pytest.raises(QueueArgumentError) as caught:
            call()
        assert isinstance(caught.value, RankedError)
    assert snapshot(api, queue) == before
    assert queue.ack(lease, now_us=T0)


def test_ack_many_wants_leases(api: Api) -> None:
    queue, lease = loaded(api)
    with pytest.raises(QueueArgumentError):
        queue.ack_many(lease, now_us=T0)  # type: ignore[arg-type]
    with pytest.raises(QueueArgumentError):
        queue.ack_many(5, now_us=T0)  # type: ignore[arg-type]
    assert queue.counts(now_us=T0).leased == 1


def test_a_well_formed_token_of_no_delivery_is_not_held(api: Api) -> None:
    queue, _ = loaded(api)
    forged: Lease[bytes] = Lease(b"x", 1.0, 1, 0, b"not a lease")
    assert not queue.ack(forged, now_us=T0)
    assert queue.nack(forged, now_us=T0) == "not held"
    assert queue.extend(forged, 5, now_us=T0) is None
    assert queue.counts(now_us=T0).leased == 1


def test_bad_lease_arguments(api: Api) -> None:
    queue = api.Queue("q")
    queue.push(b"x", 1)
    lease = queue.reserve(lease=10)
    assert lease is not None
    with pytest.raises(OutOfRangeError):
        queue.nack(lease, delay=-1)
    with pytest.raises(OutOfRangeError):
        queue.extend(lease, 0)
    assert queue.counts().leased == 1


@pytest.mark.parametrize("max_attempts", [0, -1, True, 1.5])
def test_bad_queue_options(api: Api, max_attempts: Any) -> None:
    with pytest.raises(QueueArgumentError):
        api.Queue("q", max_attempts=max_attempts)


@pytest.mark.parametrize("max_age", [0, -1, math.nan, 1e13, "60"])
def test_bad_max_age(api: Api, max_age: Any) -> None:
    with pytest.raises(OutOfRangeError, match="max_age"):
        api.Queue("q", max_age=max_age)
    with pytest.raises(OutOfRangeError, match="max_age"):
        api.ShardedQueue("s", 2, max_age=max_age)


@pytest.mark.parametrize("name", ["", "a{b", "c}d", "tab\there", 5])
def test_bad_names(api: Api, name: Any) -> None:
    with pytest.raises(InvalidNameError):
        api.Queue(name)


BAD_TIMEOUTS: list[Any] = [-1, -0.5, math.nan, math.inf, 1e13, "1", True, b"1"]


@pytest.mark.parametrize("timeout", BAD_TIMEOUTS, ids=repr)
def test_bad_timeouts_fail_even_with_items_ready(api: Api, timeout: Any) -> None:
    # Checked before anything is popped: the same error whether or not an item is ready,
    # on every path (memory's C lane, the reference, the scripts, sharded, both APIs).
    queue = api.Queue("q")
    sharded = api.ShardedQueue("s", shards=2)
    queue.push_many([(b"a", 1), (b"b", 2)])
    sharded.push_many([(b"a", 1), (b"b", 2)])
    for call in (
        lambda: queue.pop(timeout),
        lambda: queue.pop_with_priority(timeout=timeout),
        lambda: queue.reserve(timeout=timeout),
        lambda: sharded.pop(timeout),
        lambda: sharded.pop_with_priority(timeout),
    ):
        with pytest.raises(OutOfRangeError, match="timeout"):
            call()
    assert queue.size() == 2 and sharded.size() == 2  # nothing was popped
