"""Every operation of a queue in one scenario, through each API on each backend."""

from __future__ import annotations

from ranked.queue import Counts

from .conftest import SECOND, T0, Api


def test_every_operation(api: Api) -> None:
    queue = api.Queue("aq", max_attempts=2, text=True)
    queue.push("b", 2, now_us=T0)
    queue.push("a", 1, now_us=T0)
    assert queue.push_many([("c", 3), ("d", 3)], now_us=T0) == 2
    queue.push("later", 0, delay=1, now_us=T0)
    assert queue.size(now_us=T0) == 4
    assert not queue.is_empty(now_us=T0)
    assert queue.peek(now_us=T0) == "a"
    assert queue.peek_many(2, now_us=T0) == [("a", 1.0), ("b", 2.0)]
    assert queue.pop(now_us=T0) == "a"
    assert queue.pop_with_priority(now_us=T0) == ("b", 2.0)
    assert queue.pop_many(1, now_us=T0) == ["c"]
    lease = queue.reserve(lease=1, now_us=T0)
    assert lease is not None and (lease.item, lease.delivery) == ("d", 1)
    renewed = queue.extend(lease, 2, now_us=T0 + 1)
    assert renewed is not None and renewed.deadline_us == T0 + 1 + 2 * SECOND
    assert queue.nack(renewed, now_us=T0 + 2) == "requeued"
    [again] = queue.reserve_many(1, lease=1, now_us=T0 + 3)
    assert again.delivery == 2
    assert queue.nack(again, now_us=T0 + 4) == "dead"
    assert [letter.item for letter in queue.dead_letters(now_us=T0)] == ["d"]
    assert queue.retry_dead(now_us=T0 + 5) == 1
    lease = queue.reserve(now_us=T0 + 6)
    assert lease is not None and lease.item == "d"
    assert queue.ack(lease, now_us=T0 + 7)
    assert queue.ack_many([lease], now_us=T0 + 7) == 0
    assert queue.purge_dead() == 0
    assert queue.counts(now_us=T0 + SECOND) == Counts(1, 0, 0, 0)
    assert queue.clear() == 1
    assert queue.pop() is None
    assert queue.name == "aq"
