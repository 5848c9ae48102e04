"""The C lane (``QueueLane``) gives the Python direct paths' and the generic procedure's results.

On the C engine a memory queue's ``push``, ``pop`` and ``pop_with_priority`` are the C
lane's methods, bound on the queue object; the class's Python methods (the Python direct
paths) and ``Queue``'s (the generic procedure, checked against Redis by the conformance
suite) stay reachable through the class. A differential test replays one random history
on three memory backends sharing a fake clock, one per path, and compares every answer
and every stored byte; other tests walk the lane through each state it hands back.
"""

from __future__ import annotations

import gc
import math
import os
import random
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ranked.backends.memory import MemoryBackend
from ranked.engine.zset import IMPLEMENTATION
from ranked.errors import ResponseError
from ranked.queue import Queue, QueueArgumentError
from ranked.queue._lane import MemoryQueue

from .test_memory_lane import FakeClock, dump, wait_until_waiting

needs_c = pytest.mark.skipif(IMPLEMENTATION != "c", reason="the C lane needs the C engine")

LANE_METHODS = ("push", "pop", "pop_with_priority")
PRIORITIES: tuple[Any, ...] = (0.0, -0.0, 1.5, -2.0, 3, 0, -7, 2**53, 1e300)


def c_lane(queue: Queue[Any]) -> bool:
    """Whether the queue object's push / pop / pop_with_priority are the C lane's."""
    bound = vars(queue) if hasattr(queue, "__dict__") else {}
    return all(
        type(bound.get(name)).__name__ == "builtin_function_or_method" for name in LANE_METHODS
    )


@needs_c
def test_a_memory_queue_binds_the_c_lane() -> None:
    memory = MemoryBackend()
    assert c_lane(Queue(memory, "q"))
    assert c_lane(Queue(memory, "q", text=True, max_attempts=2))
    assert not c_lane(Queue(memory, "q", max_age=60))  # the generic Queue

    class Custom(MemoryQueue[bytes]):
        pass

    assert not c_lane(Custom(memory, "q"))  # a subclass keeps its own methods
    assert memory.keyspace.raw_values is memory.keyspace._values  # what the lane reads
    assert memory.keyspace.raw_deadlines is memory.keyspace._deadlines


def run(api: str, queue: Queue[Any], method: str, *args: Any, **kwargs: Any) -> Any:
    """Call ``method`` through the C lane ("c": the object), the Python direct path
    ("python": MemoryQueue's function) or the generic procedure ("generic": Queue's)."""
    if api == "c":
        return getattr(queue, method)(*args, **kwargs)
    owner = MemoryQueue if api == "python" else Queue
    return getattr(owner, method)(queue, *args, **kwargs)


def outcome(call: Any) -> Any:
    """The answer of ``call()``, or the type and text of what it raised (a TypeError's
    text names the function, which differs between the paths: its type only)."""
    try:
        return ("ok", call())
    except TypeError as error:
        return ("raised", type(error))
    except Exception as error:
        return ("raised", type(error), str(error))


T0_US = math.floor(1_700_000_000.0 * 1_000_000)
ODD_PRIORITIES: tuple[Any, ...] = (float("nan"), float("inf"), True, "1", 2**60, 2.5, -(2**53))


def act(api: str, backend: MemoryBackend, queue: Queue[Any], step: int, rng: random.Random) -> Any:
    """One random step of a history; ``rng`` must be in the same state for every path."""
    action = rng.randrange(14)
    rare = rng.random() < 0.15
    priority = rng.choice(PRIORITIES) * rng.choice((1, -1))
    item: Any = rng.choice((f"i{step}", f"é{step}".encode(), b"\xff%d" % step, b"", "same"))
    count = rng.randrange(4)
    if action < 4:
        return run(api, queue, "push", item, priority)
    if action == 4:
        return run(api, queue, "push", item, priority=priority)
    if action == 5:
        return run(api, queue, "pop_with_priority")
    if action == 6:
        return run(api, queue, "pop_many", count)
    if action == 7:
        return run(api, queue, "push_many", [(item, priority), (b"x", 1)])
    if action == 8 and rare:
        return run(api, queue, "push", item, priority, delay=0.5)
    if action == 9 and rare:
        lease = queue.reserve(0.4)
        return lease and (lease.item, lease.delivery)
    if action == 10 and rare:
        # Another writer moves the sequence back: the next ids may repeat a member.
        return backend.keyspace.execute("SET", "q:{d}:seq", b"%d" % (T0_US + step))
    if action == 11 and rare:
        return run(api, queue, "push", item, ODD_PRIORITIES[step % len(ODD_PRIORITIES)])
    if action == 12 and rare:
        return run(api, queue, "pop", None, now_us=None)
    return run(api, queue, "pop")


@pytest.mark.parametrize("text", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_c_lane_matches_the_python_lane_and_the_generic_procedure(text: bool, seed: int) -> None:
    clock = FakeClock()
    apis = ("c", "python", "generic")
    backends = [MemoryBackend(clock=clock) for _ in apis]
    options: dict[str, Any] = {"max_attempts": 3, "text": text}
    queues = [Queue(backend, "d", **options) for backend in backends]
    rng = random.Random(seed)
    for step in range(2500):
        clock.now += rng.choice((0.0, 0.0, 0.0, 1e-6, 0.001, 0.3))
        state = rng.getstate()
        answers = []
        for api, backend, queue in zip(apis, backends, queues, strict=True):
            rng.setstate(state)
            answers.append(outcome(partial(act, api, backend, queue, step, rng)))
        assert answers[0] == answers[1] == answers[2], (step, answers)
        if step % 50 == 0:
            assert dump(backends[0], "d") == dump(backends[1], "d") == dump(backends[2], "d"), step
    assert dump(backends[0], "d") == dump(backends[1], "d") == dump(backends[2], "d")


def compare_paths(setup: Any, *calls: tuple[str, tuple[Any, ...], dict[str, Any]]) -> None:
    """Run ``setup(backend, queue)`` then ``calls`` on each path: same answers, same bytes."""
    clock = FakeClock()
    results = []
    for api in ("c", "python", "generic"):
        backend = MemoryBackend(clock=clock)
        queue = Queue(backend, "f")
        setup(backend, queue)
        answers = [outcome(partial(run, api, queue, m, *a, **k)) for m, a, k in calls]
        results.append((answers, dump(backend, "f")))
    assert results[0] == results[1] == results[2]


PUSH_POP: tuple[tuple[str, tuple[Any, ...], dict[str, Any]], ...] = (
    ("push", (b"n", 1), {}),
    ("pop", (), {}),
    ("pop_with_priority", (), {}),
    ("push", ("t", 0), {}),
    ("pop", (), {}),
    ("pop", (), {}),
)


def execute(*command: Any) -> Any:
    return lambda backend, queue: (queue.push(b"a", 2), backend.keyspace.execute(*command))


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param(lambda backend, queue: None, id="fresh"),
        pytest.param(lambda backend, queue: queue.push(b"a", 2, delay=0), id="delayed-now"),
        pytest.param(lambda backend, queue: queue.push(b"a", 2, delay=5), id="delayed"),
        pytest.param(lambda backend, queue: (queue.push(b"a", 2), queue.reserve(5)), id="lease"),
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
def test_the_sequence_text_carries_like_the_generic_procedure(seq: str) -> None:
    pushes: list[tuple[str, tuple[Any, ...], dict[str, Any]]]
    pushes = [("push", (b"p%d" % index, 1), {}) for index in range(4)]
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


def test_bad_arguments_raise_the_same_errors_before_writing() -> None:
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
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
        ("push", (b"x",), {"nope": 1}),
        ("pop", (None, None), {}),
        ("pop_with_priority", (), {"nope": None}),
        ("pop", (), {}),
    ]
    compare_paths(lambda backend, queue: queue.push(b"seed", 1), *calls)


def test_bad_timeouts_fail_on_every_path() -> None:
    # A bad timeout fails before anything is popped, on the C lane, the Python direct
    # path and the generic procedure alike (the C lane hands timeouts over unread).
    for api in ("c", "python", "generic"):
        queue = Queue(MemoryBackend(), "t")
        queue.push(b"a", 1)
        for args, kwargs in (((-1,), {}), ((), {"timeout": "1"})):
            found = outcome(partial(run, api, queue, "pop", *args, **kwargs))
            assert found[:2] == ("raised", QueueArgumentError), (api, found)
        assert run(api, queue, "pop", 0) == b"a"


def test_items_priorities_and_keywords_as_stored() -> None:
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("push", ("é", 0), {}),
        ("push", (bytearray(b"raw"), -0.0), {}),
        ("push", (memoryview(b"view"), 2**53), {}),
        ("push", (b"kw",), {"priority": -(2**53), "delay": None, "at": None, "now_us": None}),
        ("push", (b"neg-zero", -0.0), {}),
        ("push", (b"int", -3), {}),
        ("push", (b"", 1e-300), {}),
        ("pop_with_priority", (None,), {"now_us": None}),
        ("pop_with_priority", (), {"timeout": None}),
        ("pop_many", (10,), {}),
    ]
    compare_paths(lambda backend, queue: None, *calls)


@needs_c
def test_a_stored_zero_keeps_its_sign_rules() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "zero")
    queue.push(b"a", -0.0)
    queue.push(b"b", 0)
    pairs = [queue.pop_with_priority(), queue.pop_with_priority()]
    assert pairs == [(b"a", 0.0), (b"b", 0.0)]
    assert all(math.copysign(1.0, pair[1]) == 1.0 for pair in pairs if pair)


def test_the_system_clock_gives_increasing_ids_from_now() -> None:
    memory = MemoryBackend()  # time.time: the lane reads the clock itself
    queue = Queue(memory, "clock")
    before = math.floor(time.time() * 1_000_000)
    for index in range(200):
        queue.push(b"%03d" % index, 1)
    after = math.floor(time.time() * 1_000_000)
    ids = memory.keyspace.execute("ZRANGE", "q:{clock}:ready", 0, -1)
    assert isinstance(ids, list)
    sequence = [int.from_bytes(bytes(item_id)[:8], "big") for item_id in ids]  # type: ignore[arg-type]
    assert sequence == sorted(set(sequence))  # strictly increasing: FIFO among equals
    assert before <= sequence[0] and sequence[-1] <= after + 199
    assert memory.keyspace.execute("GET", "q:{clock}:seq") == b"%d" % sequence[-1]
    assert queue.pop_many(300) == [b"%03d" % index for index in range(200)]


def test_a_push_waits_for_the_lock_another_thread_holds() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "held")
    queue.push(b"first", 1)
    done: list[object] = []

    def push() -> None:
        queue.push(b"second", 1)
        done.append("pushed")

    with memory.lock:
        pusher = threading.Thread(target=push)
        popper = threading.Thread(target=lambda: done.append(queue.pop()))
        pusher.start()
        popper.start()
        pusher.join(timeout=0.2)
        popper.join(timeout=0.2)
        assert pusher.is_alive() and popper.is_alive() and not done
        assert memory.keyspace.execute("ZCARD", "q:{held}:ready") == 1
    pusher.join(timeout=10)
    popper.join(timeout=10)
    assert not pusher.is_alive() and not popper.is_alive()
    assert len(done) == 2


@pytest.fixture
def no_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Waiters re-check only after a minute: only a wake-up can end a wait sooner."""
    monkeypatch.setattr("ranked.queue._lane.POLL_CAP", 60.0)


@pytest.mark.usefixtures("no_polling")
@pytest.mark.parametrize("clock", [None, FakeClock()], ids=["system-clock", "fake-clock"])
def test_a_push_through_the_c_lane_wakes_a_blocked_pop(clock: FakeClock | None) -> None:
    memory = MemoryBackend() if clock is None else MemoryBackend(clock=clock)
    consumer = Queue(memory, "wake")
    assert isinstance(consumer, MemoryQueue)
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(consumer.pop(timeout=30)))
    waiter.start()
    wait_until_waiting(consumer)
    consumer.push(b"hello", 1)  # the queue exists (the waiter polled it), so the lane runs
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    assert got == [b"hello"]


def test_threads_through_the_lane_deliver_each_item_once() -> None:
    memory = MemoryBackend()
    queue = Queue(memory, "many")
    queue.push(b"seed", 0)
    assert queue.pop() == b"seed"
    taken: list[bytes] = []
    per_producer = 3000

    def produce(index: int) -> None:
        for number in range(per_producer):
            queue.push(b"%d:%d" % (index, number), number % 5)

    def consume() -> None:
        while len(taken) < 3 * per_producer:
            answer = queue.pop_with_priority(timeout=0.01)
            if answer is not None:
                taken.append(answer[0])

    threads = [threading.Thread(target=produce, args=(index,)) for index in range(3)]
    threads += [threading.Thread(target=consume) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = sorted(b"%d:%d" % (i, n) for i in range(3) for n in range(per_producer))
    assert sorted(taken) == expected


def test_the_pure_python_engine_runs_the_python_lane() -> None:
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


@needs_c
def test_a_dropped_queue_and_its_lane_are_collected() -> None:
    def lanes() -> int:
        gc.collect()
        return sum(type(thing).__name__ == "QueueLane" for thing in gc.get_objects())

    memory = MemoryBackend()
    before = lanes()
    for index in range(50):
        queue = Queue(memory, "gc")
        queue.push(b"%d" % index, 1)
    assert lanes() == before + 1  # only the last queue object is still referenced
    del queue
    assert lanes() == before
    assert Queue(memory, "gc").pop_many(100) == [b"%d" % index for index in range(50)]
