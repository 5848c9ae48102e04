"""Delayed items: invisible until their instant, then in place by priority and push order."""

from __future__ import annotations

from ranked.queue import Counts

from .conftest import SECOND, T0, Api


def test_delay_makes_an_item_visible_at_an_exact_instant(api: Api) -> None:
    queue = api.Queue("later")
    queue.push(b"x", 1, delay=2.5, now_us=T0)
    due = T0 + 2_500_000
    assert queue.pop(now_us=due - 1) is None
    assert queue.peek(now_us=due - 1) is None
    assert queue.counts(now_us=due - 1) == Counts(ready=0, delayed=1, leased=0, dead=0)
    assert queue.size(now_us=due) == 1
    assert queue.pop(now_us=due) == b"x"


def test_at_is_an_absolute_unix_time(api: Api) -> None:
    queue = api.Queue("at")
    when = (T0 + 10 * SECOND) / 1e6
    queue.push(b"x", 1, at=when, now_us=T0)
    assert queue.pop(now_us=T0 + 10 * SECOND - 1) is None
    assert queue.pop(now_us=T0 + 10 * SECOND) == b"x"


def test_a_past_instant_is_visible_at_once(api: Api) -> None:
    queue = api.Queue("past")
    queue.push(b"x", 1, at=1.0, now_us=T0)
    queue.push(b"y", 1, delay=0, now_us=T0)
    assert queue.counts(now_us=T0).ready == 2


def test_due_items_take_their_place_by_priority_then_push_order(api: Api) -> None:
    queue = api.Queue("mixed")
    queue.push(b"delayed-early", 5, delay=1, now_us=T0)  # pushed first
    queue.push(b"ready-low", 9, now_us=T0 + 1)
    queue.push(b"ready-same", 5, now_us=T0 + 2)
    queue.push(b"delayed-urgent", 0, delay=1, now_us=T0 + 3)
    assert queue.peek_many(5, now_us=T0 + 4) == [(b"ready-same", 5.0), (b"ready-low", 9.0)]
    later = T0 + 2 * SECOND
    assert queue.pop_many(5, now_us=later) == [
        b"delayed-urgent",
        b"delayed-early",
        b"ready-same",
        b"ready-low",
    ]


def test_many_delayed_items_become_due_together(api: Api) -> None:
    queue = api.Queue("batch")
    queue.push_many([(b"%03d" % index, index % 3) for index in range(120)], delay=1, now_us=T0)
    assert queue.size(now_us=T0) == 0
    popped = queue.pop_many(200, now_us=T0 + SECOND)
    expected = sorted(range(120), key=lambda index: index % 3)
    assert popped == [b"%03d" % index for index in expected]


def test_delay_with_the_server_clock(api: Api) -> None:
    queue = api.Queue("clock")
    queue.push(b"soon", 1, delay=30)
    queue.push(b"now", 2)
    assert queue.pop() == b"now"
    assert queue.pop() is None
    assert queue.counts().delayed == 1
