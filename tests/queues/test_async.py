"""AsyncQueue: the same operations and answers as Queue, awaited."""

from __future__ import annotations

from ranked.backends.base import AsyncBackend
from ranked.queue import AsyncQueue, Counts

from .conftest import SECOND, T0, Env


def test_async_queue_operations(env: Env) -> None:
    async def scenario(backend: AsyncBackend) -> None:
        queue = AsyncQueue(backend, "aq", max_attempts=2, text=True)
        await queue.push("b", 2, now_us=T0)
        await queue.push("a", 1, now_us=T0)
        assert await queue.push_many([("c", 3), ("d", 3)], now_us=T0) == 2
        await queue.push("later", 0, delay=1, now_us=T0)
        assert await queue.size(now_us=T0) == 4
        assert not await queue.is_empty(now_us=T0)
        assert await queue.peek(now_us=T0) == "a"
        assert await queue.peek_many(2, now_us=T0) == [("a", 1.0), ("b", 2.0)]
        assert await queue.pop(now_us=T0) == "a"
        assert await queue.pop_with_priority(now_us=T0) == ("b", 2.0)
        assert await queue.pop_many(1, now_us=T0) == ["c"]
        lease = await queue.reserve(lease=1, now_us=T0)
        assert lease is not None and (lease.item, lease.delivery) == ("d", 1)
        renewed = await queue.extend(lease, 2, now_us=T0 + 1)
        assert renewed is not None and renewed.deadline_us == T0 + 1 + 2 * SECOND
        assert await queue.nack(renewed, now_us=T0 + 2) == "requeued"
        [again] = await queue.reserve_many(1, lease=1, now_us=T0 + 3)
        assert again.delivery == 2
        assert await queue.nack(again, now_us=T0 + 4) == "dead"
        assert [letter.item for letter in await queue.dead_letters(now_us=T0)] == ["d"]
        assert await queue.retry_dead(now_us=T0 + 5) == 1
        lease = await queue.reserve(now_us=T0 + 6)
        assert lease is not None and lease.item == "d"
        assert await queue.ack(lease, now_us=T0 + 7)
        assert await queue.ack_many([lease], now_us=T0 + 7) == 0
        assert await queue.purge_dead() == 0
        assert await queue.counts(now_us=T0 + SECOND) == Counts(1, 0, 0, 0)
        assert await queue.clear() == 1
        assert await queue.pop() is None

    env.run_async(scenario)
