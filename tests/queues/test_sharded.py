"""The sharded queue: local heaps on N hash tags, merged by the global minimum."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest

from ranked.core.keys import hash_slot
from ranked.queue import Counts, QueueArgumentError

from .conftest import SECOND, T0, Api


def test_one_consumer_pops_in_global_priority_order(api: Api) -> None:
    queue = api.ShardedQueue("dist", 4)
    rng = random.Random(3)
    priorities = [rng.randrange(1000) for _ in range(200)]
    for index, priority in enumerate(priorities):
        queue.push(b"%d" % index, priority)
    assert queue.size() == 200
    popped = []
    while (pair := queue.pop_with_priority()) is not None:
        popped.append(pair[1])
    assert popped == sorted(float(priority) for priority in priorities)


def test_equal_priorities_leave_in_push_order_across_shards(api: Api) -> None:
    queue = api.ShardedQueue("fifo", 3)
    for index in range(30):
        queue.push(b"%02d" % index, 0, now_us=T0 + index)
    assert [queue.pop(now_us=T0 + 100) for _ in range(30)] == [b"%02d" % i for i in range(30)]


def test_shard_key_pins_items_to_one_shard(api: Api) -> None:
    queue = api.ShardedQueue("keyed", 4)
    for index in range(20):
        queue.push(b"%d" % index, index, key="user-7")
    counts = [api.Queue(f"keyed.{index}").size() for index in range(4)]
    assert sorted(counts) == [0, 0, 0, 20]


def test_round_robin_spreads_items(api: Api) -> None:
    queue = api.ShardedQueue("robin", 4)
    for index in range(20):
        queue.push(b"%d" % index, index)
    assert [api.Queue(f"robin.{index}").size() for index in range(4)] == [5, 5, 5, 5]


def test_several_consumers_lose_and_repeat_nothing(api: Api) -> None:
    queue = api.ShardedQueue("many", 3)
    assert queue.push_many([(b"%d" % index, index % 7) for index in range(300)]) == 300
    seen: list[bytes] = []
    connections = [api.connect() for _ in range(4)]

    def drain(connection: Api) -> None:
        mine = connection.ShardedQueue("many", 3)
        while (item := mine.pop()) is not None:
            seen.append(item)

    threads = [threading.Thread(target=drain, args=(each,)) for each in connections]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for connection in connections:
        connection.close()
    assert Counter(seen) == Counter(b"%d" % index for index in range(300))
    assert queue.is_empty()


def test_window_evicts_stale_entries_in_every_shard(api: Api) -> None:
    queue = api.ShardedQueue("window", 2, max_age=5)
    queue.push_many([(b"old-1", 0), (b"old-2", 0)], now_us=T0)
    queue.push_many([(b"new-1", 9), (b"new-2", 9)], now_us=T0 + 4 * SECOND)
    assert queue.counts(now_us=T0 + 5 * SECOND).ready == 4
    later = T0 + 5 * SECOND + 1
    assert queue.peek(now_us=later) in (b"new-1", b"new-2")
    popped = [queue.pop(now_us=later), queue.pop(now_us=later)]
    assert sorted(item for item in popped if item is not None) == [b"new-1", b"new-2"]
    assert queue.counts(now_us=later) == Counts(0, 0, 0, 0)


def test_shards_use_distinct_hash_tags(api: Api) -> None:
    queue = api.ShardedQueue("spread", 8)
    queue.push_many([(b"%d" % index, 1) for index in range(16)])
    keys = api.env.keys()
    shard_slots = {hash_slot(key) for key in keys}
    assert len(shard_slots) == 8
    assert queue.clear() == 16
    assert api.env.keys() == set()


def test_delayed_items_become_visible_in_the_merge(api: Api) -> None:
    queue = api.ShardedQueue("later", 2, text=True)
    queue.push("x", 1, delay=1, now_us=T0)
    queue.push("y", 2, now_us=T0)
    assert queue.peek(now_us=T0) == "y"
    assert queue.pop_with_priority(now_us=T0 + SECOND) == ("x", 1.0)
    assert queue.pop(now_us=T0 + SECOND) == "y"
    assert queue.pop(timeout=0.05) is None
    assert queue.shards == 2


def test_bad_shard_counts(api: Api) -> None:
    for shards in (0, -1, 1025, True, 2.0):
        with pytest.raises(QueueArgumentError):
            api.ShardedQueue("bad", shards)  # type: ignore[arg-type]


def test_sharded_queue_operations(api: Api) -> None:
    queue = api.ShardedQueue("adist", 3, text=True)
    queue.push("c", 3)
    queue.push("a", 1, key="k")
    assert queue.push_many({"b": 2, "d": 4}) == 2
    assert queue.size() == 4
    assert not queue.is_empty()
    assert queue.peek() == "a"
    assert queue.pop_with_priority() == ("a", 1.0)
    assert [queue.pop() for _ in range(3)] == ["b", "c", "d"]
    assert queue.pop(timeout=0.05) is None
    assert queue.counts() == Counts(0, 0, 0, 0)
    queue.push("e", 5)
    assert queue.clear() == 1
    assert queue.shards == 3
