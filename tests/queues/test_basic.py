"""Seed 001's operations: push, pop, peek, pop_with_priority, size, is_empty, clear.

Every test runs on each backend through each API (``api``: the blocking one and asyncio)."""

from __future__ import annotations

import random

from ranked.queue import Counts

from .conftest import T0, Api


def test_lowest_priority_leaves_first(api: Api) -> None:
    queue = api.Queue("tasks", text=True)
    queue.push("critical-alert", priority=1)
    queue.push("normal-task", priority=5)
    queue.push("low-priority-cleanup", priority=10)
    queue.push("urgent-fix", priority=2)
    assert queue.size() == 4
    assert not queue.is_empty()
    assert queue.peek() == "critical-alert"
    assert queue.pop_with_priority() == ("critical-alert", 1.0)
    assert [queue.pop() for _ in range(3)] == ["urgent-fix", "normal-task", "low-priority-cleanup"]
    assert queue.pop() is None
    assert queue.peek() is None
    assert queue.pop_with_priority() is None
    assert queue.is_empty()


def test_equal_priorities_leave_in_push_order(api: Api) -> None:
    queue = api.Queue("fifo")
    rng = random.Random(7)
    pushed = [(f"job-{index}".encode(), float(rng.randrange(3))) for index in range(300)]
    for item, priority in pushed[:150]:
        queue.push(item, priority)
    queue.push_many(pushed[150:])
    expected = sorted(pushed, key=lambda pair: pair[1])  # stable: push order among equals
    assert queue.pop_many(1000) == [item for item, _ in expected]


def test_fifo_holds_when_the_clock_stands_still(api: Api) -> None:
    queue = api.Queue("frozen")
    for index in range(50):
        queue.push(b"%d" % (49 - index), 0, now_us=T0)
    assert queue.pop_many(50) == [b"%d" % (49 - index) for index in range(50)]


def test_fifo_holds_when_the_clock_goes_back(api: Api) -> None:
    queue = api.Queue("back")
    queue.push(b"first", 1, now_us=T0)
    queue.push(b"second", 1, now_us=T0 - 10**9)
    assert queue.pop_many(2) == [b"first", b"second"]


def test_duplicates_are_separate_items(api: Api) -> None:
    queue = api.Queue("dupes")
    queue.push(b"same", 2)
    queue.push(b"same", 1)
    queue.push(b"same", 2)
    assert queue.size() == 3
    assert queue.peek_many(5) == [(b"same", 1.0), (b"same", 2.0), (b"same", 2.0)]


def test_priorities_are_exact_floats(api: Api) -> None:
    queue = api.Queue("floats")
    values = [0.1, -0.0, -1e300, 1e300, 2**53, -(2**53), 5e-324, 1 / 3]
    queue.push_many([(b"%d" % index, value) for index, value in enumerate(values)])
    priorities = []
    while (pair := queue.pop_with_priority()) is not None:
        priorities.append(pair[1])
    assert priorities == sorted(float(value) for value in values)
    assert "-0.0" not in map(str, priorities)  # -0.0 is stored as 0.0


def test_items_are_binary_safe(api: Api) -> None:
    queue = api.Queue("binary")
    payload = bytes(range(256)) * 3
    queue.push(payload, 1)
    queue.push(b"", 0)
    assert queue.pop() == b""
    assert queue.pop() == payload


def test_text_mode_round_trips_unicode(api: Api) -> None:
    queue = api.Queue("text", text=True)
    queue.push("héllo {wörld}", 0)
    queue.push(b"raw", 1)
    assert queue.pop_many(2) == ["héllo {wörld}", "raw"]


def test_many_at_once(api: Api) -> None:
    queue = api.Queue("many")
    assert queue.push_many({b"c": 3, b"a": 1, b"b": 2}) == 3
    assert queue.push_many([]) == 0
    assert queue.peek_many(2) == [(b"a", 1.0), (b"b", 2.0)]
    assert queue.peek_many(0) == []
    assert queue.pop_many(0) == []
    assert queue.pop_many(2) == [b"a", b"b"]
    assert queue.pop_many(5) == [b"c"]
    assert queue.pop_many(5) == []


def test_clear_removes_everything(api: Api) -> None:
    queue = api.Queue("gone")
    queue.push_many([(b"a", 1), (b"b", 2)])
    queue.push(b"later", 0, delay=60)
    queue.reserve(lease=60)
    assert queue.counts() == Counts(ready=1, delayed=1, leased=1, dead=0)
    assert queue.clear() == 3
    assert queue.counts() == Counts(0, 0, 0, 0)
    assert queue.clear() == 0
    queue.push(b"again", 1)
    assert queue.pop() == b"again"


def test_queues_are_independent(api: Api) -> None:
    first, second = api.Queue("one"), api.Queue("two")
    first.push(b"x", 1)
    assert second.pop() is None
    assert first.pop() == b"x"


def test_two_handles_share_one_queue(api: Api) -> None:
    api.Queue("shared").push(b"x", 1)
    assert api.Queue("shared").pop() == b"x"
