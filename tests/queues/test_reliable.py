"""Reliable mode: reserve -> ack; expired leases requeue; retries; dead letters; nack."""

from __future__ import annotations

import pytest

from ranked.queue import Counts, Lease, Queue

from .conftest import SECOND, T0, Api


def reserve(queue: Queue[bytes], at: int, lease: float = 10) -> Lease[bytes]:
    found = queue.reserve(lease=lease, now_us=at)
    assert found is not None
    return found


def test_reserve_then_ack_removes_the_item(api: Api) -> None:
    queue = api.Queue("jobs")
    queue.push(b"job", 3, now_us=T0)
    lease = reserve(queue, T0)
    assert (lease.item, lease.priority, lease.delivery) == (b"job", 3.0, 1)
    assert lease.deadline_us == T0 + 10 * SECOND
    assert lease.deadline == pytest.approx((T0 + 10 * SECOND) / 1e6)
    assert queue.counts(now_us=T0) == Counts(ready=0, delayed=0, leased=1, dead=0)
    assert queue.pop(now_us=T0) is None  # a leased item is invisible
    assert queue.ack(lease, now_us=T0 + 10 * SECOND - 1)
    assert not queue.ack(lease, now_us=T0 + 1)  # settled already
    assert queue.counts(now_us=T0 + 100 * SECOND) == Counts(0, 0, 0, 0)


def test_an_expired_lease_requeues_in_place_with_attempts_counted(api: Api) -> None:
    queue = api.Queue("retry")
    queue.push(b"first", 1, now_us=T0)
    queue.push(b"second", 1, now_us=T0 + 1)
    lease = reserve(queue, T0 + 2)
    assert lease.item == b"first"
    expiry = lease.deadline_us
    assert queue.peek(now_us=expiry - 1) == b"second"
    assert queue.peek(now_us=expiry) == b"first"  # back ahead of "second": push order
    again = reserve(queue, expiry)
    assert (again.item, again.delivery) == (b"first", 2)
    assert not queue.ack(lease, now_us=expiry)  # the first delivery cannot settle the second
    assert queue.ack(again, now_us=expiry)


def test_ack_at_the_deadline_is_refused(api: Api) -> None:
    queue = api.Queue("late")
    queue.push(b"job", 0, now_us=T0)
    lease = reserve(queue, T0, lease=1)
    assert not queue.ack(lease, now_us=T0 + SECOND)
    assert queue.counts(now_us=T0 + SECOND) == Counts(ready=1, delayed=0, leased=0, dead=0)


def test_dead_letter_after_max_attempts(api: Api) -> None:
    queue = api.Queue("poison", max_attempts=3)
    queue.push(b"bad", 7, now_us=T0)
    now = T0
    for delivery in (1, 2, 3):
        lease = reserve(queue, now, lease=1)
        assert lease.delivery == delivery
        now = lease.deadline_us
    assert queue.reserve(now_us=now) is None
    assert queue.counts(now_us=now) == Counts(ready=0, delayed=0, leased=0, dead=1)
    [letter] = queue.dead_letters(now_us=now)
    assert (letter.item, letter.priority, letter.deliveries, letter.died_at_us) == (
        b"bad",
        7.0,
        3,
        now,
    )
    assert queue.retry_dead(now_us=now) == 1
    lease = reserve(queue, now)
    assert (lease.item, lease.delivery) == (b"bad", 1)
    assert queue.ack(lease, now_us=now)


def test_nack_requeues_delays_and_kills(api: Api) -> None:
    queue = api.Queue("nack", max_attempts=3)
    queue.push(b"job", 1, now_us=T0)
    first = reserve(queue, T0)
    assert queue.nack(first, now_us=T0 + 1) == "requeued"
    assert queue.nack(first, now_us=T0 + 1) == "not held"
    second = reserve(queue, T0 + 2)
    assert second.delivery == 2
    assert queue.nack(second, delay=5, now_us=T0 + 3) == "delayed"
    assert queue.reserve(now_us=T0 + 3 + 5 * SECOND - 1) is None
    third = reserve(queue, T0 + 3 + 5 * SECOND)
    assert third.delivery == 3
    assert queue.nack(third, now_us=T0 + 6 * SECOND) == "dead"
    assert queue.counts(now_us=T0 + 6 * SECOND) == Counts(ready=0, delayed=0, leased=0, dead=1)


def test_extend_keeps_a_lease(api: Api) -> None:
    queue = api.Queue("long")
    queue.push(b"job", 1, now_us=T0)
    lease = reserve(queue, T0, lease=1)
    renewed = queue.extend(lease, 5, now_us=T0 + SECOND - 1)
    assert renewed is not None
    assert renewed.deadline_us == T0 + 6 * SECOND - 1
    assert queue.pop(now_us=T0 + 2 * SECOND) is None  # still leased
    assert queue.ack(renewed, now_us=T0 + 2 * SECOND)
    assert queue.extend(lease, 5, now_us=T0 + 3 * SECOND) is None


def test_extend_after_expiry_is_refused(api: Api) -> None:
    queue = api.Queue("expired")
    queue.push(b"job", 1, now_us=T0)
    lease = reserve(queue, T0, lease=1)
    assert queue.extend(lease, 5, now_us=T0 + SECOND) is None


def test_reserve_many_and_ack_many(api: Api) -> None:
    queue = api.Queue("batch")
    queue.push_many([(b"%d" % index, index) for index in range(5)], now_us=T0)
    leases = queue.reserve_many(3, lease=10, now_us=T0)
    assert [lease.item for lease in leases] == [b"0", b"1", b"2"]
    assert queue.ack_many(leases, now_us=T0 + 1) == 3
    assert queue.ack_many(leases, now_us=T0 + 1) == 0
    assert queue.ack_many([], now_us=T0) == 0
    assert queue.reserve_many(0) == []
    assert queue.counts(now_us=T0 + 1) == Counts(ready=2, delayed=0, leased=0, dead=0)


def test_pop_after_a_failed_delivery_forgets_its_attempts(api: Api) -> None:
    queue = api.Queue("mixed")
    queue.push(b"job", 1, now_us=T0)
    lease = reserve(queue, T0, lease=1)
    assert queue.peek_many(1, now_us=lease.deadline_us) == [(b"job", 1.0)]
    assert queue.pop(now_us=lease.deadline_us) == b"job"
    assert queue.counts(now_us=lease.deadline_us) == Counts(0, 0, 0, 0)


def test_purge_dead(api: Api) -> None:
    queue = api.Queue("purge", max_attempts=1)
    queue.push_many([(b"a", 1), (b"b", 2)], now_us=T0)
    for lease in queue.reserve_many(2, lease=1, now_us=T0):
        assert queue.nack(lease, now_us=T0 + 1) == "dead"
    assert [letter.item for letter in queue.dead_letters(1, now_us=T0)] == [b"a"]
    assert queue.purge_dead() == 2
    assert queue.dead_letters() == []
    assert queue.retry_dead() == 0


def test_max_age_drops_stale_items_on_access(api: Api) -> None:
    queue = api.Queue("fresh", max_age=10)
    queue.push(b"old", 1, now_us=T0)
    queue.push(b"old-delayed", 1, delay=20, now_us=T0 + 1)
    queue.push(b"young", 2, now_us=T0 + 5 * SECOND)
    assert queue.peek(now_us=T0 + 10 * SECOND) == b"old"  # exactly max_age: still fresh
    assert queue.pop_many(5, now_us=T0 + 10 * SECOND + 2) == [b"young"]
    assert queue.counts(now_us=T0 + 30 * SECOND) == Counts(0, 0, 0, 0)


def test_max_age_drops_a_stale_item_instead_of_requeueing_it(api: Api) -> None:
    queue = api.Queue("fresh-lease", max_age=10)
    queue.push(b"job", 1, now_us=T0)
    lease = reserve(queue, T0, lease=30)
    assert queue.counts(now_us=lease.deadline_us) == Counts(0, 0, 0, 0)
    queue.push(b"other", 1, now_us=T0)
    other = reserve(queue, T0 + SECOND, lease=30)
    assert queue.nack(other, now_us=T0 + 11 * SECOND) == "dropped"
    queue.push(b"acked", 1, now_us=T0)
    assert queue.ack(reserve(queue, T0), now_us=T0 + 1)
