"""The memory backend's C lane gives the reference's results, answer for answer, byte for byte.

On the C engine, ``memory://`` binds a queue's push, pop, pop_with_priority, push_many and
pop_many to C lanes (``ranked.backends.native.queue``); the lanes of push, pop and
pop_with_priority become the queue's methods. Everything else, and every case a lane
hands back, is the operation's reference: its encode, then the Python twin under the
lock, which the conformance suite checks against Redis and Redis Cluster. Here one random
history is replayed on two memory backends sharing a fake clock, one with the native
steps and one bound with none (the reference only), and every answer and every stored
byte is compared; other tests walk the lanes through each state they hand back.
"""

from __future__ import annotations

import asyncio
import gc
import math
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ranked.backends import memory as memory_module
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.backends.procedure import Operation
from ranked.engine.zset import IMPLEMENTATION
from ranked.errors import OutOfRangeError, ResponseError
from ranked.queue import AsyncQueue, Queue

needs_c = pytest.mark.skipif(IMPLEMENTATION != "c", reason="the C lane needs the C engine")

T0 = 1_700_000_000.0
T0_US = math.floor(T0 * 1_000_000)
LANE_METHODS = ("push", "pop", "pop_with_priority")
PRIORITIES: tuple[Any, ...] = (0.0, -0.0, 1.5, -2.0, 3, 0, -7, 2**53, 1e300)
ODD_PRIORITIES: tuple[Any, ...] = (float("nan"), float("inf"), True, "1", 2**60, 2.5, -(2**53))
PATHS = ("native", "reference", "twin")


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def dump(backend: MemoryBackend, name: str) -> dict[bytes, object]:
    """Every key of queue ``name`` as Redis would show it."""
    keyspace = backend.keyspace
    found: dict[bytes, object] = {}
    for part in (b"ready", b"delayed", b"leases", b"dead", b"seq", b"attempts", b"born"):
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


def queue_on(path: str, backend: MemoryBackend, name: str, **options: Any) -> Queue[Any]:
    """A queue bound with the memory backend's native steps (``native``), or with none:
    each operation's reference (``reference``: its direct form where it has one), or its
    encode, Python twin and decode (``twin``)."""
    if path == "native":
        return Queue(backend, name, **options)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(memory_module, "native_factory", lambda name: None)
        if path == "twin":
            patch.setattr(Operation, "reference", property(lambda self: self._twin))
        queue = Queue(backend, name, **options)
        for step in ("_push_many", "_pop_many", "_reserve", "_ack", "_ack_one", "_nack"):
            getattr(queue, step)  # bound now, while the patches hold
        return queue


def c_lane(queue: Queue[Any]) -> bool:
    """Whether the queue object's push / pop / pop_with_priority are the C lane's."""
    bound = vars(queue) if hasattr(queue, "__dict__") else {}
    return all(
        type(bound.get(name)).__name__ == "builtin_function_or_method" for name in LANE_METHODS
    )


def outcome(call: Callable[[], Any]) -> Any:
    """The answer of ``call()``, or the type and text of what it raised (a TypeError's
    text is Python's own wording for a bad call, which C words its own way: its type)."""
    try:
        return ("ok", call())
    except TypeError as error:
        return ("raised", type(error))
    except Exception as error:
        return ("raised", type(error), str(error))


@needs_c
def test_a_memory_queue_binds_the_c_lane() -> None:
    memory = MemoryBackend()
    assert c_lane(Queue(memory, "q"))
    assert c_lane(Queue(memory, "q", text=True, max_attempts=2))
    assert not c_lane(Queue(memory, "q", max_age=60))  # born-set bookkeeping: the reference
    assert not c_lane(queue_on("reference", memory, "q"))

    class Custom(Queue[bytes]):
        def push(self, *args: Any, **kwargs: Any) -> None:
            super().push(*args, **kwargs)

    custom = Custom(memory, "c")
    assert "push" not in vars(custom) and "pop" in vars(custom)  # an override stays
    custom.push(b"x", 1)
    assert custom.pop() == b"x"


def test_the_pure_python_engine_runs_the_reference() -> None:
    script = (
        "from ranked.backends.memory import MemoryBackend\n"
        "from ranked.engine.zset import IMPLEMENTATION\n"
        "from ranked.queue import Queue\n"
        "q = Queue(MemoryBackend(), 'p')\n"
        "q.push(b'b', 2); q.push(b'a', 1); q.push(b'c', 1)\n"
        "assert 'push' not in vars(q), vars(q)\n"
        "print(IMPLEMENTATION, q.pop(), q.pop_with_priority(), q.pop(), q.pop())\n"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "RANKED_PUREPYTHON": "1", "PYTHONPATH": src}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["python", "b'a'", "(b'c',", "1.0)", "b'b'", "None"]


def act(backend: MemoryBackend, queue: Queue[Any], name: str, step: int, rng: random.Random) -> Any:
    """One random step of a history; ``rng`` must be in the same state for every path."""
    action = rng.randrange(17)
    rare = rng.random() < 0.15
    priority = rng.choice(PRIORITIES) * rng.choice((1, -1))
    item: Any = rng.choice((f"i{step}", f"é{step}".encode(), b"\xff%d" % step, b"", "same"))
    count = rng.randrange(4)
    if action < 4:
        return queue.push(item, priority)
    if action == 4:
        return queue.push(item, priority=priority)
    if action == 5:
        return queue.pop_with_priority()
    if action == 6:
        return queue.pop_many(count)
    if action == 7:
        return queue.push_many([(item, priority), (b"x", 1)])
    if action == 8 and rare:
        return queue.push(item, priority, delay=0.5)
    if action == 9 and rare:
        lease = queue.reserve(0.4)
        return lease and (lease.item, lease.delivery)
    if action == 10 and rare:
        # Another writer moves the sequence back: the next ids may repeat a member.
        return backend.keyspace.execute("SET", f"q:{{{name}}}:seq", b"%d" % (T0_US + step))
    if action == 11 and rare:
        return queue.push(item, ODD_PRIORITIES[step % len(ODD_PRIORITIES)])
    if action == 12 and rare:
        return queue.pop(None, now_us=None)
    if action == 13:
        mapping: dict[Any, float] = {f"m{step}": priority, b"n": 2}
        return queue.push_many(mapping)
    if action == 14:
        return queue.pop_many(count + 20)
    if action == 15 and rare:
        return queue.pop(timeout=0)
    return queue.pop()


@pytest.mark.parametrize("text", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_the_c_lane_matches_the_reference(text: bool, seed: int) -> None:
    clock = FakeClock()
    backends = [MemoryBackend(clock=clock) for _ in PATHS]
    options: dict[str, Any] = {"max_attempts": 3, "text": text}
    queues = [
        queue_on(path, backend, "d", **options)
        for path, backend in zip(PATHS, backends, strict=True)
    ]
    rng = random.Random(seed)
    for step in range(2500):
        clock.now += rng.choice((0.0, 0.0, 0.0, 1e-6, 0.001, 0.3))
        state = rng.getstate()
        answers = []
        for backend, queue in zip(backends, queues, strict=True):
            rng.setstate(state)
            answers.append(outcome(partial(act, backend, queue, "d", step, rng)))
        assert answers[1:] == answers[:-1], (step, answers)
        if step % 50 == 0:
            dumps = [dump(backend, "d") for backend in backends]
            assert dumps[1:] == dumps[:-1], step
    dumps = [dump(backend, "d") for backend in backends]
    assert dumps[1:] == dumps[:-1]


Call = tuple[str, tuple[Any, ...], dict[str, Any]]


def compare_paths(setup: Callable[[MemoryBackend, Queue[Any]], object], *calls: Call) -> None:
    """Run ``setup(backend, queue)`` then ``calls`` on each path: same answers, same bytes."""
    clock = FakeClock()
    results = []
    for path in PATHS:
        backend = MemoryBackend(clock=clock)
        queue = queue_on(path, backend, "f")
        setup(backend, queue)
        answers = [
            outcome(partial(getattr(queue, method), *args, **kwargs))
            for method, args, kwargs in calls
        ]
        results.append((answers, dump(backend, "f")))
    assert results[1:] == results[:-1]


PUSH_POP: tuple[Call, ...] = (
    ("push", (b"n", 1), {}),
    ("pop", (), {}),
    ("pop_with_priority", (), {}),
    ("push", ("t", 0), {}),
    ("push_many", ([(b"m", 2), ("m2", 1)],), {}),
    ("pop_many", (1,), {}),
    ("pop", (), {}),
    ("pop", (), {}),
    ("pop_many", (5,), {}),
)


def execute(*command: Any) -> Callable[[MemoryBackend, Queue[Any]], object]:
    """A setup: one item pushed, then a raw command on the keyspace."""

    def setup(backend: MemoryBackend, queue: Queue[Any]) -> object:
        queue.push(b"a", 2)
        return backend.keyspace.execute(*command)

    return setup


def acked(backend: MemoryBackend, queue: Queue[Any]) -> None:
    """A lease taken and acked: the leases set is empty (the lane reads it as absent)."""
    queue.push(b"a", 2)
    lease = queue.reserve(5)
    assert lease is not None and queue.ack(lease)


def retried(backend: MemoryBackend, queue: Queue[Any]) -> None:
    """A delivery nacked, then the item popped: the attempts hash is left empty."""
    queue.push(b"a", 2)
    lease = queue.reserve(5)
    assert lease is not None and queue.nack(lease) == "requeued"
    assert queue.pop() == b"a"


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param(lambda backend, queue: None, id="fresh"),
        pytest.param(lambda backend, queue: queue.push(b"a", 2, delay=0), id="delayed-now"),
        pytest.param(lambda backend, queue: queue.push(b"a", 2, delay=5), id="delayed"),
        pytest.param(lambda backend, queue: (queue.push(b"a", 2), queue.reserve(5)), id="lease"),
        pytest.param(acked, id="lease-acked"),
        pytest.param(retried, id="retried-and-popped"),
        pytest.param(lambda backend, queue: queue.push(b"a", 2, now_us=T0_US), id="pushed-at"),
        pytest.param(execute("PEXPIRE", "q:{f}:ready", 100_000), id="ttl-ready"),
        pytest.param(execute("PEXPIRE", "q:{f}:seq", 100_000), id="ttl-seq"),
        pytest.param(execute("SET", "q:{f}:seq", " 12"), id="seq-spaces"),
        pytest.param(execute("SET", "q:{f}:seq", "-5"), id="seq-negative"),
        pytest.param(execute("SET", "q:{f}:seq", "1" * 19), id="seq-long"),
        pytest.param(execute("SET", "q:{f}:seq", "007"), id="seq-zeros"),
        pytest.param(execute("DEL", "q:{f}:seq"), id="no-seq"),
        pytest.param(execute("FLUSHALL"), id="flushall"),
        pytest.param(execute("HSET", "q:{f}:attempts", "x", 1), id="attempts"),
    ],
)
def test_each_state_the_lane_hands_back_gives_the_same_results(setup: Any) -> None:
    compare_paths(setup, *PUSH_POP)


@pytest.mark.parametrize("seq", ["99999999999999997", "999999999999999997", "8", "0"])
def test_the_sequence_text_carries_like_the_reference(seq: str) -> None:
    pushes: list[Call] = [("push", (b"p%d" % index, 1), {}) for index in range(4)]
    pushes.append(("push_many", ([(b"q%d" % index, 1) for index in range(3)],), {}))
    compare_paths(execute("SET", "q:{f}:seq", seq), *pushes, ("pop_many", (10,), {}))


@pytest.mark.parametrize("key", ["q:{f}:ready", "q:{f}:seq", "q:{f}:delayed", "q:{f}:leases"])
def test_a_wrong_type_key_raises_the_same_error_on_every_path(key: str) -> None:
    def setup(backend: MemoryBackend, queue: Queue[Any]) -> None:
        queue.push(b"a", 2)
        backend.keyspace.execute("DEL", key)
        backend.keyspace.execute("SADD", key, "x")

    compare_paths(setup, *PUSH_POP)
    memory = MemoryBackend()
    queue = Queue(memory, "f")
    queue.push(b"a", 1)
    memory.keyspace.execute("DEL", key)
    memory.keyspace.execute("SADD", key, "x")
    if key == "q:{f}:ready":
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            queue.push(b"b", 1)
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            queue.push_many([(b"b", 1)])


def test_bad_arguments_raise_the_same_errors_before_writing() -> None:
    calls: list[Call] = [
        ("push", (b"x", float("nan")), {}),
        ("push", (b"x", -float("inf")), {}),
        ("push", (b"x", True), {}),
        ("push", (b"x", 2**53 + 1), {}),
        ("push", (b"x", "1"), {}),
        ("push", (b"x",), {"priority": None}),
        ("push", (3, 1), {}),
        ("push", ("\ud800", 1), {}),
        ("push", (None,), {}),
        ("push", (), {}),
        ("push", (b"x", 1, 2), {}),
        ("push", (b"x", 1), {"priority": 2}),
        ("push", (b"x",), {"delay": -1}),
        ("push", (b"x",), {"delay": 1e13}),
        ("push", (b"x",), {"nope": 1}),
        ("push", (), {"item": b"kw"}),
        ("push", (b"x",), {"now_us": -1}),
        ("push_many", ([(b"x", float("nan"))],), {}),
        ("push_many", ([(3, 1)],), {}),
        ("push_many", ([(b"x", 1)],), {"delay": 1e13}),
        ("pop", (None, None), {}),
        ("pop", (), {"timeout": -1}),
        ("pop", (True,), {}),
        ("pop", (2**70,), {}),
        ("pop", (3_155_760_001,), {}),
        ("pop", (3_155_760_000.5,), {}),
        ("pop", (float("nan"),), {}),
        ("pop", (), {"now_us": 2**70}),
        ("pop_with_priority", (), {"nope": None}),
        ("pop_with_priority", (), {"timeout": None, "now_us": None}),
        ("pop_many", (-1,), {}),
        ("pop_many", (2**70,), {}),
        ("pop", (), {}),
    ]
    compare_paths(lambda backend, queue: queue.push(b"seed", 1), *calls)


def test_bad_timeouts_fail_on_every_path() -> None:
    # A bad timeout fails before anything is popped, on the C lane and on the reference
    # alike (the lane hands timeouts over unread).
    for path in PATHS:
        queue = queue_on(path, MemoryBackend(), "t")
        queue.push(b"a", 1)
        cases: list[tuple[tuple[Any, ...], dict[str, Any]]]
        cases = [((-1,), {}), ((), {"timeout": "1"}), ((math.inf,), {})]
        for args, kwargs in cases:
            with pytest.raises(OutOfRangeError, match="timeout"):
                queue.pop(*args, **kwargs)
        assert queue.pop(0) == b"a"


def test_items_priorities_and_keywords_as_stored() -> None:
    calls: list[Call] = [
        ("push", ("é", 0), {}),
        ("push", (bytearray(b"raw"), -0.0), {}),
        ("push", (memoryview(b"view"), 2**53), {}),
        ("push", (b"kw",), {"priority": -(2**53), "delay": None, "at": None, "now_us": None}),
        ("push", (), {"item": b"item-kw", "priority": 4}),
        ("push", (b"neg-zero", -0.0), {}),
        ("push", (b"int", -3), {}),
        ("push", (b"", 1e-300), {}),
        ("push", (b"big" * 200, 7), {}),  # a member longer than the lane's stack buffer
        ("push_many", ([(b"big" * 300, 6), ("é", -0.0), (b"", 5)],), {}),
        ("pop_with_priority", (None,), {"now_us": None}),
        ("pop_with_priority", (), {"timeout": None}),
        ("pop", (5,), {}),  # an item is ready: no waiting
        ("pop_with_priority", (), {"timeout": 2.5}),
        ("pop", (3_155_760_000,), {}),
        ("pop", (-0.0,), {}),
        ("pop_many", (10,), {}),
        ("pop", (0,), {}),  # empty, nothing to wait for
        ("pop_with_priority", (0.0,), {}),
    ]
    compare_paths(lambda backend, queue: None, *calls)


@needs_c
def test_a_stored_zero_keeps_its_sign_rules() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "zero")
    queue.push(b"a", -0.0)
    queue.push(b"b", 0)
    queue.push_many([(b"c", -0.0)])
    pairs = [queue.pop_with_priority() for _ in range(3)]
    assert pairs == [(b"a", 0.0), (b"b", 0.0), (b"c", 0.0)]
    assert all(math.copysign(1.0, pair[1]) == 1.0 for pair in pairs if pair)


def test_the_system_clock_gives_increasing_ids_from_now() -> None:
    memory = MemoryBackend()  # time.time: the lane reads the clock itself
    queue = Queue(memory, "clock")
    before = math.floor(time.time() * 1_000_000)
    for index in range(200):
        queue.push(b"%03d" % index, 1)
    queue.push_many([(b"%03d" % index, 1) for index in range(200, 300)])
    after = math.floor(time.time() * 1_000_000)
    ids = memory.keyspace.execute("ZRANGE", "q:{clock}:ready", 0, -1)
    assert isinstance(ids, list)
    sequence = [int.from_bytes(bytes(item_id)[:8], "big") for item_id in ids]  # type: ignore[arg-type]
    assert sequence == sorted(set(sequence))  # strictly increasing: FIFO among equals
    assert before <= sequence[0] and sequence[-1] <= after + 299
    assert memory.keyspace.execute("GET", "q:{clock}:seq") == b"%d" % sequence[-1]
    assert queue.pop_many(300) == [b"%03d" % index for index in range(300)]


def test_a_push_waits_for_the_lock_another_thread_holds() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "held")
    queue.push(b"first", 1)
    done: list[object] = []

    def push() -> None:
        queue.push(b"second", 1)
        done.append("pushed")

    calls = [
        push,
        lambda: done.append(queue.pop()),
        lambda: done.append(queue.push_many([(b"third", 1)])),
        lambda: done.append(queue.pop_many(1)),
    ]
    with memory.lock:
        threads = [threading.Thread(target=call) for call in calls]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=0.2)
        assert all(thread.is_alive() for thread in threads) and not done
        assert memory.keyspace.execute("ZCARD", "q:{held}:ready") == 1
    for thread in threads:
        thread.join(timeout=10)
        assert not thread.is_alive()
    assert len(done) == 4


@needs_c
def test_the_lane_pops_again_once_reliable_mode_is_done() -> None:
    """Emptied leases and attempts keys do not send every later pop to the reference
    (which reads the clock; the lane's pop does not)."""
    reads: list[float] = []

    def clock() -> float:
        reads.append(T0)
        return T0

    memory = MemoryBackend(clock=clock)
    queue = Queue(memory, "again")
    for setup in (acked, retried):
        setup(memory, queue)
    queue.push_many([(b"x", 1), (b"y", 2), (b"z", 3)])
    before = len(reads)
    assert queue.pop() == b"x" and queue.pop_with_priority() == (b"y", 2.0)
    assert queue.pop_many(5) == [b"z"]
    assert len(reads) == before


@needs_c
def test_an_async_queue_pops_through_the_c_lane() -> None:
    """An asyncio queue's pop and pop_with_priority take a ready head in the C lane (no
    clock read, as the reference's take would); an empty queue with a timeout still
    waits, in a coroutine, and a push wakes it."""
    reads: list[float] = []

    def clock() -> float:
        reads.append(T0)
        return T0

    memory = MemoryBackend(clock=clock)

    async def scenario() -> list[Any]:
        queue = AsyncQueue(AsyncMemoryBackend(sync=memory), "aio-lane")
        await queue.push_many([(b"x", 1), (b"y", 2)])
        before = len(reads)
        got: list[Any] = [await queue.pop(), await queue.pop_with_priority(timeout=5)]
        assert len(reads) == before
        got.append(await queue.pop(timeout=0))
        waiter = asyncio.ensure_future(queue.pop_with_priority(timeout=30))
        await asyncio.sleep(0.01)
        assert not waiter.done()
        await queue.push(b"z", 3)
        got.append(await asyncio.wait_for(waiter, 10))
        got.append(await queue.pop(timeout=0.01))
        return got

    assert asyncio.run(scenario()) == [b"x", (b"y", 2.0), None, (b"z", 3.0), None]


def test_threads_through_the_lane_deliver_each_item_once() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "many")
    queue.push(b"seed", 0)
    assert queue.pop() == b"seed"
    taken: list[bytes] = []
    per_producer = 3000

    def produce(index: int) -> None:
        for number in range(0, per_producer, 3):
            queue.push(b"%d:%d" % (index, number), number % 5)
            queue.push_many([(b"%d:%d" % (index, number + k), k) for k in (1, 2)])

    def consume() -> None:
        while len(taken) < 3 * per_producer:
            answer = queue.pop_with_priority(timeout=0.01)
            if answer is not None:
                taken.append(answer[0])
            taken.extend(queue.pop_many(2))

    threads = [threading.Thread(target=produce, args=(index,)) for index in range(3)]
    threads += [threading.Thread(target=consume) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = sorted(b"%d:%d" % (i, n) for i in range(3) for n in range(per_producer))
    assert sorted(taken) == expected


def lanes() -> int:
    gc.collect()
    return sum(type(thing).__name__ == "QueueLane" for thing in gc.get_objects())


@needs_c
def test_a_dropped_queue_and_its_lanes_are_collected() -> None:
    memory = MemoryBackend()
    before = lanes()
    for index in range(50):
        queue = Queue(memory, "gc")
        queue.push(b"%d" % index, 1)
    assert lanes() == before + 3  # only the last queue object's lanes are still referenced
    queue.push_many([(b"x", 1)])  # push_many and pop_many are bound on first use
    assert queue.pop_many(1) == [b"0"]
    assert lanes() == before + 5
    del queue
    assert lanes() == before
    expected = [b"%d" % index for index in range(1, 50)] + [b"x"]
    assert Queue(memory, "gc").pop_many(100) == expected


@pytest.fixture
def lane_kinds() -> Iterator[list[int]]:
    """The lanes' kinds, as bound for one queue (push, pop, pop_with_priority, push_many,
    pop_many)."""
    from ranked.backends.native.queue import LANES

    yield sorted(LANES.values())


@needs_c
def test_a_lane_called_as_another_kind_refuses(lane_kinds: list[int]) -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "kinds")
    push, pop = vars(queue)["push"].__self__, vars(queue)["pop"].__self__
    with pytest.raises(TypeError, match="runs push"):
        push.pop()
    with pytest.raises(TypeError, match="runs pop"):
        pop.push(b"x")
    assert push.method == queue.push and pop.method == queue.pop
    assert lane_kinds == [0, 1, 2, 3, 4]
