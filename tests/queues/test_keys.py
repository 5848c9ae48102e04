"""Every key of one queue shares one hash tag (one cluster slot); nothing leaks."""

from __future__ import annotations

from ranked.core.keys import hash_slot
from ranked.queue.keys import QueueKeys

from .conftest import SECOND, T0, Api


def test_every_key_of_a_queue_is_in_one_slot(api: Api) -> None:
    queue = api.Queue("slots", max_attempts=1, max_age=3600)
    queue.push_many([(b"a", 1), (b"b", 2), (b"c", 3)], now_us=T0)
    queue.push(b"later", 0, delay=60, now_us=T0)
    lease = queue.reserve(lease=1, now_us=T0)
    assert lease is not None
    retried = queue.reserve(lease=1, now_us=T0)
    assert retried is not None
    queue.nack(retried, now_us=T0 + 1)  # dead: max_attempts=1
    keys = api.env.keys()
    names = QueueKeys.of("slots")
    assert {names.ready, names.delayed, names.leases, names.dead, names.born, names.seq} <= keys
    assert keys <= set(names.all()) | {names.seq}
    assert len({hash_slot(key) for key in keys}) == 1


def test_acked_and_popped_items_leave_no_trace(api: Api) -> None:
    queue = api.Queue("trace", max_age=60)
    queue.push_many([(b"a", 1), (b"b", 2)], now_us=T0)
    lease = queue.reserve(lease=1, now_us=T0)
    assert lease is not None
    queue.pop(now_us=T0)
    assert queue.ack(lease, now_us=T0)
    retry = api.Queue("trace2")
    retry.push(b"x", 1, now_us=T0)
    failed = retry.reserve(lease=1, now_us=T0)
    assert failed is not None
    again = retry.reserve(now_us=T0 + SECOND)  # the lease expired: delivery 2
    assert again is not None and retry.ack(again, now_us=T0 + SECOND)
    assert api.env.keys() == {QueueKeys.of("trace").seq, QueueKeys.of("trace2").seq}
