"""The memory backend's direct paths (``MemoryQueue``) give the generic procedure's results.

A differential test replays one random history twice on two memory backends sharing a fake
clock: once through the direct paths, once through the generic ``Queue`` methods (the
Python twins the conformance suite checks against Redis), and compares every answer and
every stored byte. Other tests walk the lane through each state that must send it back to
the generic procedure.
"""

from __future__ import annotations

import asyncio
import random
import threading

import pytest

from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.errors import ResponseError
from ranked.queue import AsyncQueue, InvalidItemError, InvalidPriorityError, Queue
from ranked.queue._lane import MemoryQueue

T0 = 1_700_000_000.0


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def dump(backend: MemoryBackend, name: str) -> dict[bytes, object]:
    """Every key of queue ``name`` as Redis would show it."""
    keyspace = backend.keyspace
    found: dict[bytes, object] = {}
    for part in (b"ready", b"delayed", b"leases", b"dead", b"seq", b"attempts"):
        key = b"q:{" + name.encode() + b"}:" + part
        kind = keyspace.execute("TYPE", key)
        if kind == b"zset":
            found[key] = keyspace.execute("ZRANGE", key, 0, -1, "WITHSCORES")
        elif kind == b"string":
            found[key] = keyspace.execute("GET", key)
        elif kind == b"hash":
            fields = keyspace.execute("HGETALL", key)
            assert isinstance(fields, list)
            found[key] = sorted(fields, key=repr)
    return found


def test_memory_backend_builds_the_direct_queue() -> None:
    memory = MemoryBackend()
    assert type(Queue(memory, "q")) is MemoryQueue
    assert type(Queue(memory, "q", max_age=60)) is Queue  # max_age: the generic path
    with pytest.raises(TypeError):
        MemoryQueue(memory, "q", max_age=60)


def test_direct_paths_match_the_generic_procedure() -> None:
    clock = FakeClock()
    direct_backend, generic_backend = MemoryBackend(clock=clock), MemoryBackend(clock=clock)
    direct = Queue(direct_backend, "d", max_attempts=3, text=True)
    generic = Queue(generic_backend, "d", max_attempts=3, text=True)
    rng = random.Random(4)
    for step in range(3000):
        clock.now += rng.choice((0.0, 0.0, 1e-6, 0.001, 0.4))
        action = rng.randrange(10)
        rare = rng.random() < 0.2  # delays and leases
        count = rng.randrange(3)
        priority = float(rng.randrange(5)) * rng.choice((1, -1))
        item = f"i{step}"
        answers: list[object] = []
        for queue in (direct, generic):
            api = type(queue) if queue is direct else Queue
            if action < 4:
                answers.append(api.push(queue, item, priority))
            elif action == 4:
                answers.append(api.push_many(queue, [(item, priority), (item + "b", 1)]))
            elif action == 5:
                answers.append(api.pop_with_priority(queue))
            elif action == 6:
                answers.append(api.pop_many(queue, count))
            elif action == 7 and rare:
                answers.append(api.push(queue, item, priority, delay=0.5))
            elif action == 8 and rare:
                lease = api.reserve(queue, 0.3)
                answers.append(lease and (lease.item, lease.priority, lease.delivery))
            else:
                answers.append(api.pop(queue))
        assert answers[0] == answers[1], step
    assert dump(direct_backend, "d") == dump(generic_backend, "d")


def test_fifo_across_direct_and_generic_pushes() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "mix")
    queue.push(b"a", 1)
    Queue.push(queue, b"b", 1)  # generic
    queue.push(b"c", 1, now_us=1)  # an explicit instant in the past: generic, last + 1
    queue.push_many([(b"d", 1), (b"e", 1)])
    Queue.push_many(queue, [(b"f", 1)])
    queue.push(b"g", 1)
    assert queue.pop_many(10) == [b"a", b"b", b"c", b"d", b"e", b"f", b"g"]


def test_a_sequence_written_by_someone_else_is_read_back() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "seq")
    queue.push(b"a", 1)
    queue.push(b"b", 1)
    future = 9_000_000_000_000_000
    memory.keyspace.execute("SET", "q:{seq}:seq", future)
    queue.push(b"c", 1)
    assert memory.keyspace.execute("GET", "q:{seq}:seq") == b"%d" % (future + 1)
    ids = memory.keyspace.execute("ZRANGE", "q:{seq}:ready", 0, -1)
    assert isinstance(ids, list)
    assert ids[-1] == (future + 1).to_bytes(8, "big") + b"c"


def test_flushall_and_a_fresh_queue() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "flush")
    queue.push(b"a", 1)
    queue.push(b"b", 1)
    memory.keyspace.execute("FLUSHALL")
    assert queue.pop() is None
    queue.push(b"c", 2)
    queue.push(b"d", 1)
    assert queue.pop_many(5) == [b"d", b"c"]


def test_a_ttl_on_a_queue_key_is_honoured() -> None:
    clock = FakeClock()
    memory = MemoryBackend(clock=clock)
    queue = Queue(memory, "ttl")
    queue.push(b"a", 1)
    queue.push(b"b", 1)
    memory.keyspace.execute("PEXPIRE", "q:{ttl}:ready", 1000)
    clock.now += 2
    assert queue.pop() is None  # the whole ready set expired
    queue.push(b"c", 1)
    assert queue.pop() == b"c"


def test_wrong_type_raises_before_writing() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "bad")
    memory.keyspace.execute("SET", "q:{bad}:ready", "text")
    with pytest.raises(ResponseError):
        queue.push(b"a", 1)
    assert memory.keyspace.execute("GET", "q:{bad}:ready") == b"text"


def test_invalid_input_raises_typed_errors_on_the_direct_path() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "check")
    queue.push(b"seed", 1)
    for priority in (float("nan"), float("inf"), True, "1", 2**60):
        with pytest.raises(InvalidPriorityError):
            queue.push(b"x", priority)  # type: ignore[arg-type]
    with pytest.raises(InvalidItemError):
        queue.push(3, 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidItemError):
        queue.push_many([(b"ok", 1), (None, 1)])  # type: ignore[list-item]
    assert queue.pop_many(10) == [b"seed"]


def test_items_and_priorities_as_stored() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "kinds", text=True)
    queue.push("é", 0)
    queue.push(bytearray(b"raw"), -0.0)
    queue.push(memoryview(b"view"), 2**53)
    assert queue.pop_with_priority() == ("é", 0.0)
    pair = queue.pop_with_priority()
    assert pair == ("raw", 0.0) and str(pair[1]) == "0.0"
    assert queue.pop_with_priority() == ("view", float(2**53))


def test_delayed_items_and_expired_leases_take_the_generic_path() -> None:
    clock = FakeClock()
    memory = MemoryBackend(clock=clock)
    queue = Queue(memory, "later")
    queue.push(b"soon", 1, delay=1)
    queue.push(b"now", 5)
    assert queue.pop() == b"now"
    assert queue.pop() is None
    clock.now += 1
    assert queue.pop() == b"soon"
    queue.push(b"job", 1)
    assert queue.reserve(0.5) is not None
    clock.now += 1
    assert queue.pop_with_priority() == (b"job", 1.0)  # the expired lease came back
    assert queue.pop() is None


def test_threads_deliver_each_item_once() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "threads")
    taken: list[bytes] = []
    per_producer = 2000

    def produce(index: int) -> None:
        for number in range(per_producer):
            queue.push(b"%d:%d" % (index, number), number % 7)

    def consume() -> None:
        while len(taken) < 4 * per_producer:
            item = queue.pop(timeout=0.01)
            if item is not None:
                taken.append(item)

    threads = [threading.Thread(target=produce, args=(index,)) for index in range(4)]
    threads += [threading.Thread(target=consume) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken) == sorted(b"%d:%d" % (i, n) for i in range(4) for n in range(per_producer))


def test_async_queue_on_memory_uses_the_same_paths() -> None:
    memory = MemoryBackend()

    async def scenario() -> list[object]:
        queue = AsyncQueue(AsyncMemoryBackend(sync=memory), "aio", text=True)
        await queue.push("b", 2)
        await queue.push_many([("a", 1), ("c", 3)])
        first = await queue.pop_with_priority()
        rest = await queue.pop_many(5)
        waiter = asyncio.ensure_future(queue.pop(timeout=5))
        await asyncio.sleep(0.01)  # the waiter found nothing and waits
        await queue.push("d", 0)
        return [first, rest, await waiter, await queue.pop()]

    assert asyncio.run(scenario()) == [("a", 1.0), ["b", "c"], "d", None]


@pytest.fixture
def no_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Waiters re-check only after a minute: only a wake-up can end a wait sooner."""
    monkeypatch.setattr("ranked.queue._lane.POLL_CAP", 60.0)


def wait_until_waiting(queue: MemoryQueue[bytes], count: int = 1) -> None:
    for _ in range(5000):
        with queue._lock:
            if queue._wakeup.waiting >= count:
                return
        threading.Event().wait(0.001)
    raise AssertionError("nobody started waiting")


@pytest.mark.usefixtures("no_polling")
def test_a_push_wakes_a_blocked_pop_at_once() -> None:
    memory = MemoryBackend()
    consumer = Queue(memory, "wake")
    assert isinstance(consumer, MemoryQueue)
    got: list[object] = []
    waiters = [
        threading.Thread(target=lambda: got.append(consumer.pop(timeout=30))),
        threading.Thread(target=lambda: got.append(consumer.pop_with_priority(timeout=30))),
    ]
    for thread in waiters:
        thread.start()
    wait_until_waiting(consumer, 2)
    producer = Queue(memory, "wake")  # another object on the same queue
    producer.push(b"first", 1)  # the direct path
    producer.push_many([(b"second", 2)], delay=0)  # the generic path
    for thread in waiters:
        thread.join(timeout=10)
        assert not thread.is_alive()
    items = [answer[0] if isinstance(answer, tuple) else answer for answer in got]
    assert sorted(items) == [b"first", b"second"]  # type: ignore[type-var]


@pytest.mark.usefixtures("no_polling")
def test_a_nack_wakes_a_blocked_reserve() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "nack")
    assert isinstance(queue, MemoryQueue)
    queue.push(b"job", 1)
    lease = queue.reserve(30)
    assert lease is not None
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(queue.reserve(30, timeout=30)))
    waiter.start()
    wait_until_waiting(queue)
    assert queue.nack(lease) == "requeued"
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    assert [(taken.item, taken.delivery) for taken in got] == [(b"job", 2)]  # type: ignore[attr-defined]


@pytest.mark.usefixtures("no_polling")
def test_a_push_from_a_thread_wakes_an_async_pop() -> None:
    memory = MemoryBackend()
    producer = Queue(memory, "aio-wake")

    async def scenario() -> object:
        queue = AsyncQueue(AsyncMemoryBackend(sync=memory), "aio-wake")
        waiter = asyncio.ensure_future(queue.pop(timeout=30))
        await asyncio.sleep(0)
        assert isinstance(producer, MemoryQueue)

        def push() -> None:
            wait_until_waiting(producer)
            producer.push(b"x", 1)

        pusher = threading.Thread(target=push)
        pusher.start()
        try:
            return await asyncio.wait_for(waiter, 10)
        finally:
            pusher.join()

    assert asyncio.run(scenario()) == b"x"
