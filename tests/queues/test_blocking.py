"""Blocking pop: waits for a push up to a timeout (polling, never spinning; memory: woken by
the push)."""

from __future__ import annotations

import threading
import time

from ranked.queue import POLL_CAP

from .conftest import Api


def push_later(api: Api, name: str, delay: float) -> threading.Thread:
    """Push one item on another connection after ``delay`` seconds (a thread)."""

    def push() -> None:
        time.sleep(delay)
        other = api.connect()
        try:
            other.Queue(name).push(b"late", 1)
        finally:
            other.close()

    thread = threading.Thread(target=push)
    thread.start()
    return thread


def test_blocking_pop_wakes_on_push(api: Api) -> None:
    queue = api.Queue("wait")
    thread = push_later(api, "wait", 0.2)
    started = time.monotonic()
    try:
        assert queue.pop(timeout=5) == b"late"
    finally:
        thread.join()
    waited = time.monotonic() - started
    assert 0.15 < waited < 0.2 + POLL_CAP + 1.0


def test_blocking_pop_with_priority_wakes_on_push(api: Api) -> None:
    queue = api.Queue("wait-pair")
    thread = push_later(api, "wait-pair", 0.1)
    try:
        assert queue.pop_with_priority(timeout=5) == (b"late", 1.0)
    finally:
        thread.join()


def test_blocking_pop_times_out(api: Api) -> None:
    queue = api.Queue("never")
    started = time.monotonic()
    assert queue.pop(timeout=0.3) is None
    assert queue.pop_with_priority(timeout=0.05) is None
    assert queue.reserve(lease=1, timeout=0.05) is None
    assert queue.pop(timeout=0) is None
    assert 0.3 <= time.monotonic() - started < 3


def test_blocking_reserve_wakes_on_push(api: Api) -> None:
    queue = api.Queue("rwait")
    thread = push_later(api, "rwait", 0.1)
    try:
        lease = queue.reserve(lease=5, timeout=5)
    finally:
        thread.join()
    assert lease is not None and lease.item == b"late"
    assert queue.ack(lease)


def test_a_ready_item_is_taken_without_waiting(api: Api) -> None:
    queue = api.Queue("ready", text=True)
    queue.push_many([("a", 1), ("b", 2), ("", 3)])
    started = time.monotonic()
    assert queue.pop(timeout=5) == "a"
    assert queue.pop_with_priority(timeout=5) == ("b", 2.0)
    assert queue.pop(timeout=5) == ""  # an empty item is an item: no more waiting
    assert time.monotonic() - started < 1
