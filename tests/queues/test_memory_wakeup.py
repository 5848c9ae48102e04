"""On memory a blocked pop is woken by the write that makes an item ready, not by polling.

The wait is the memory backend's (``ranked.backends.native.queue``): its blocking steps
sleep on a condition of the backend's lock, and its writing steps (push, push_many, nack,
retry_dead, a sharded push) wake them. Here the queue's poll cap is raised to a minute
before the queues are built, so only a wake-up can end a wait sooner.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.engine.zset import IMPLEMENTATION
from ranked.queue import AsyncQueue, Queue, ShardedQueue

pytestmark = [
    pytest.mark.skipif(IMPLEMENTATION != "c", reason="the memory backend's wait is native code"),
    pytest.mark.usefixtures("no_polling"),
]


@pytest.fixture
def no_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Waiters look again only after a minute: only a wake-up can end a wait sooner."""
    monkeypatch.setattr("ranked.queue._plan.POLL_CAP", 60.0)


def waiting(memory: MemoryBackend, name: str) -> int:
    """How many pops wait on queue ``name`` (threads and tasks)."""
    from ranked.backends.native._queue_wakeup import wakeup_of

    wakeup = wakeup_of(memory.keyspace, memory.lock, b"q:{" + name.encode() + b"}:ready")
    with memory.lock:
        return wakeup.waiting


def wait_until_waiting(memory: MemoryBackend, name: str, count: int = 1) -> None:
    for _ in range(5000):
        if waiting(memory, name) >= count:
            return
        threading.Event().wait(0.001)
    raise AssertionError("nobody started waiting")


def blocked(calls: list[Callable[[], Any]]) -> tuple[list[threading.Thread], list[Any]]:
    """Start one thread per call; their answers land in the returned list."""
    got: list[Any] = []
    threads = [threading.Thread(target=lambda call=call: got.append(call())) for call in calls]
    for thread in threads:
        thread.start()
    return threads, got


def joined(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(timeout=10)
        assert not thread.is_alive()


def test_a_push_wakes_blocked_pops_at_once() -> None:
    memory = MemoryBackend()
    consumer = Queue(memory, "wake")
    threads, got = blocked(
        [lambda: consumer.pop(timeout=30), lambda: consumer.pop_with_priority(timeout=30)]
    )
    wait_until_waiting(memory, "wake", 2)
    producer = Queue(memory, "wake")  # another object on the same queue
    producer.push(b"first", 1)  # the queue has no keys yet: the reference
    producer.push(b"second", 2)  # the C lane
    joined(threads)
    items = sorted(answer[0] if isinstance(answer, tuple) else answer for answer in got)
    assert items == [b"first", b"second"]


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(lambda queue: queue.push_many([(b"job", 1)]), id="push_many"),
        pytest.param(lambda queue: queue.push_many([(b"job", 1)], delay=0), id="push_many-delay-0"),
        pytest.param(lambda queue: queue.push(b"job", 1, now_us=None), id="push"),
        pytest.param(lambda queue: queue.push(b"job", 1, delay=0), id="push-delay-0"),
    ],
)
def test_every_push_wakes_a_blocked_reserve(write: Callable[[Queue[bytes]], object]) -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "w")
    queue.push(b"seed", 0)  # the queue's keys exist: pushes may take the C lane
    assert queue.pop() == b"seed"
    threads, got = blocked([lambda: queue.reserve(30, timeout=30)])
    wait_until_waiting(memory, "w")
    write(queue)
    joined(threads)
    assert [lease.item for lease in got] == [b"job"]


def test_a_nack_wakes_a_blocked_reserve() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "nack")
    queue.push(b"job", 1)
    lease = queue.reserve(30)
    assert lease is not None
    threads, got = blocked([lambda: queue.reserve(30, timeout=30)])
    wait_until_waiting(memory, "nack")
    assert queue.nack(lease) == "requeued"
    joined(threads)
    assert [(taken.item, taken.delivery) for taken in got] == [(b"job", 2)]


def test_a_retried_dead_letter_wakes_a_blocked_pop() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "dead", max_attempts=1)
    queue.push(b"job", 1)
    lease = queue.reserve(30)
    assert lease is not None and queue.nack(lease) == "dead"
    threads, got = blocked([lambda: queue.pop(timeout=30)])
    wait_until_waiting(memory, "dead")
    assert queue.retry_dead() == 1
    joined(threads)
    assert got == [b"job"]


def test_a_sharded_push_wakes_a_pop_blocked_on_its_shard() -> None:
    memory = MemoryBackend()
    shard = Queue(memory, "spread.0")
    threads, got = blocked([lambda: shard.pop(timeout=30)])
    wait_until_waiting(memory, "spread.0")
    ShardedQueue(memory, "spread", 1).push(b"job", 1)
    joined(threads)
    assert got == [b"job"]


def test_a_push_from_a_thread_wakes_an_async_pop() -> None:
    memory = MemoryBackend()
    producer = Queue(memory, "aio-wake")

    async def scenario() -> object:
        queue = AsyncQueue(AsyncMemoryBackend(sync=memory), "aio-wake")
        waiter = asyncio.ensure_future(queue.pop(timeout=30))
        await asyncio.sleep(0)

        def push() -> None:
            wait_until_waiting(memory, "aio-wake")
            producer.push(b"x", 1)

        pusher = threading.Thread(target=push)
        pusher.start()
        try:
            return await asyncio.wait_for(waiter, 10)
        finally:
            pusher.join()

    assert asyncio.run(scenario()) == b"x"


def test_an_async_push_wakes_an_async_reserve_in_the_same_loop() -> None:
    memory = MemoryBackend()

    async def scenario() -> object:
        backend = AsyncMemoryBackend(sync=memory)
        queue = AsyncQueue(backend, "aio", text=True)
        waiter = asyncio.ensure_future(queue.reserve(30, timeout=30))
        while waiting(memory, "aio") == 0:
            await asyncio.sleep(0.001)
        await AsyncQueue(backend, "aio", text=True).push("y", 1)
        lease = await asyncio.wait_for(waiter, 10)
        return lease and lease.item

    assert asyncio.run(scenario()) == "y"


def test_an_async_blocking_step_makes_a_coroutine_only_to_wait() -> None:
    """The asyncio backend's blocking steps answer at once in a ready awaitable when an
    item is there (or there is no timeout), and hand back a coroutine that waits for the
    wake-up otherwise."""
    from ranked.queue._plan import WAIT_IN_TASK, plan_of
    from ranked.queue._procedures import Taken

    backend = AsyncMemoryBackend()
    plan = plan_of("steps", max_attempts=None, max_age=None, text=False, waits=WAIT_IN_TASK)
    reserve, pop = backend.bind(plan.reserve), backend.bind(plan.pop)

    async def scenario() -> list[Any]:
        queue = AsyncQueue(backend, "steps")
        waits = reserve(30.0, 1, 1_000_000, None)
        assert asyncio.iscoroutine(waits)
        task = asyncio.ensure_future(waits)
        while waiting(backend.sync, "steps") == 0:
            await asyncio.sleep(0.001)
        await queue.push_many([(b"a", 1), (b"b", 2), (b"c", 3)])
        got: list[Any] = [await asyncio.wait_for(task, 10)]
        for step in (
            reserve(30.0, 1, 1_000_000, None),  # ready now: no wait
            pop(30.0, None),
            pop(None, None),  # empty, no timeout
            reserve(0, 1, 1_000_000, None),
        ):
            assert not asyncio.iscoroutine(step)
            got.append(await step)
        return [answer.rows[0][0][8:] if isinstance(answer, Taken) else answer for answer in got]

    assert asyncio.run(scenario()) == [b"a", b"b", b"c", None, None]


def test_a_wait_ends_at_its_timeout() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "idle")
    threads, got = blocked([lambda: queue.pop(timeout=0.2)])
    joined(threads)
    assert got == [None]
    assert waiting(memory, "idle") == 0
