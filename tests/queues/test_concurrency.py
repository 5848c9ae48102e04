"""Many consumers on one queue: each item delivered once; a dead consumer loses nothing."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter

from ranked.backends.base import AsyncBackend
from ranked.queue import AsyncQueue, Counts

from .conftest import Api, Env

ITEMS = 400
CONSUMERS = 6


def consume(api: Api, name: str, seen: list[bytes], failures: list[BaseException]) -> None:
    queue = api.Queue(name)
    try:
        while (lease := queue.reserve(lease=30, timeout=0.2)) is not None:
            seen.append(lease.item)
            assert queue.ack(lease)
    except BaseException as error:  # reported by the test thread
        failures.append(error)


def test_threads_each_item_delivered_exactly_once(api: Api) -> None:
    queue = api.Queue("work")
    queue.push_many([(b"%d" % index, index % 5) for index in range(ITEMS)])
    connections = [api.connect() for _ in range(CONSUMERS)]
    seen: list[bytes] = []
    failures: list[BaseException] = []
    threads = [
        threading.Thread(target=consume, args=(connection, "work", seen, failures))
        for connection in connections
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for connection in connections:
        connection.close()
    assert failures == []
    assert Counter(seen) == Counter(b"%d" % index for index in range(ITEMS))
    assert queue.counts() == Counts(0, 0, 0, 0)


def test_plain_pops_from_threads_lose_and_repeat_nothing(api: Api) -> None:
    queue = api.Queue("plain")
    queue.push_many([(b"%d" % index, 0) for index in range(ITEMS)])
    seen: list[bytes] = []

    def pop_all(connection: Api) -> None:
        mine = connection.Queue("plain")
        while (item := mine.pop()) is not None:
            seen.append(item)

    connections = [api.connect() for _ in range(4)]
    threads = [threading.Thread(target=pop_all, args=(each,)) for each in connections]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for connection in connections:
        connection.close()
    assert sorted(seen) == sorted(b"%d" % index for index in range(ITEMS))


def test_asyncio_tasks_each_item_delivered_exactly_once(env: Env) -> None:
    async def scenario(backend: AsyncBackend) -> list[bytes]:
        queue = AsyncQueue(backend, "tasks")
        await queue.push_many([(b"%d" % index, index % 3) for index in range(200)])
        seen: list[bytes] = []

        async def worker() -> None:
            mine = AsyncQueue(backend, "tasks")
            while (lease := await mine.reserve(lease=30, timeout=0.1)) is not None:
                seen.append(lease.item)
                assert await mine.ack(lease)

        await asyncio.gather(*(worker() for _ in range(8)))
        assert await queue.counts() == Counts(0, 0, 0, 0)
        return seen

    seen = env.run_async(scenario)
    assert Counter(seen) == Counter(b"%d" % index for index in range(200))


def test_a_consumer_that_dies_holding_a_lease_loses_nothing(api: Api) -> None:
    queue = api.Queue("crash", max_attempts=5)
    queue.push_many([(b"a", 1), (b"b", 2), (b"c", 3)])
    doomed = queue.reserve(lease=0.3)  # this consumer "dies": never acks
    assert doomed is not None and doomed.item == b"a"
    survivors: list[tuple[bytes, int]] = []
    while (lease := queue.reserve(lease=30, timeout=2)) is not None:
        survivors.append((lease.item, lease.delivery))
        assert queue.ack(lease)
    assert sorted(survivors) == [(b"a", 2), (b"b", 1), (b"c", 1)]
    assert not queue.ack(doomed)
    assert queue.counts() == Counts(0, 0, 0, 0)
