"""Blocking pop: waits for a push up to a timeout (polling, never spinning)."""

from __future__ import annotations

import asyncio
import threading
import time

from ranked.backends.base import AsyncBackend, Backend
from ranked.queue import POLL_CAP, AsyncQueue, Queue

from .conftest import Env


def push_later(backend: Backend, name: str, delay: float) -> threading.Thread:
    def push() -> None:
        time.sleep(delay)
        Queue(backend, name).push(b"late", 1)

    thread = threading.Thread(target=push)
    thread.start()
    return thread


def test_blocking_pop_wakes_on_push(env: Env) -> None:
    queue = Queue(env.backend, "wait")
    other = env.open_sync()
    thread = push_later(other, "wait", 0.2)
    started = time.monotonic()
    try:
        assert queue.pop(timeout=5) == b"late"
    finally:
        thread.join()
        if other is not env.backend:
            other.close()
    waited = time.monotonic() - started
    assert 0.15 < waited < 0.2 + POLL_CAP + 1.0


def test_blocking_pop_times_out(backend: Backend) -> None:
    queue = Queue(backend, "never")
    started = time.monotonic()
    assert queue.pop(timeout=0.3) is None
    assert queue.pop_with_priority(timeout=0.05) is None
    assert queue.reserve(lease=1, timeout=0.05) is None
    assert 0.3 <= time.monotonic() - started < 3


def test_blocking_reserve_wakes_on_push(env: Env) -> None:
    queue = Queue(env.backend, "rwait")
    other = env.open_sync()
    thread = push_later(other, "rwait", 0.1)
    try:
        lease = queue.reserve(lease=5, timeout=5)
    finally:
        thread.join()
        if other is not env.backend:
            other.close()
    assert lease is not None and lease.item == b"late"
    assert queue.ack(lease)


def test_async_blocking_pop_wakes_on_push_and_times_out(env: Env) -> None:
    async def scenario(backend: AsyncBackend) -> None:
        queue = AsyncQueue(backend, "await")

        async def push_soon() -> None:
            await asyncio.sleep(0.1)
            await AsyncQueue(backend, "await").push(b"late", 1)

        task = asyncio.create_task(push_soon())
        assert await queue.pop(timeout=5) == b"late"
        await task
        started = time.monotonic()
        assert await queue.pop(timeout=0.2) is None
        assert time.monotonic() - started >= 0.2

    env.run_async(scenario)
