"""The validator hook's two forms: the asyncio guard runs a held submission's validator in
a task of its own (the submission's answer does not wait for it); the blocking guard runs
it in line, after the verdict is made. ``scripts/generate_sync.py`` maps each asyncio name
here to its blocking twin."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

from .verdict import PendingEntry

__all__ = [
    "acall_validator",
    "apost_webhook",
    "call_validator",
    "post_webhook",
    "record_later",
    "record_now",
    "validate_later",
    "validate_now",
    "wait_tasks",
    "wait_tasks_now",
]

_log = logging.getLogger("ranked.guard")

WEBHOOK_TIMEOUT_S = 10.0


def validate_later(tasks: set[Any], work: Callable[[], Awaitable[None]]) -> None:
    """Run ``work()`` in a task of the running loop (kept in ``tasks`` until it ends)."""
    task: asyncio.Task[None] = asyncio.ensure_future(work())
    tasks.add(task)
    task.add_done_callback(tasks.discard)


def validate_now(tasks: set[Any], work: Callable[[], None]) -> None:
    """Run ``work()`` now (the blocking guard)."""
    work()


async def acall_validator(validator: Callable[[PendingEntry], Any], entry: PendingEntry) -> Any:
    """The validator's answer (awaited when it returns an awaitable)."""
    found = validator(entry)
    if inspect.isawaitable(found):
        found = await found
    return found


def call_validator(validator: Callable[[PendingEntry], Any], entry: PendingEntry) -> Any:
    """The validator's answer (a blocking guard's validator returns it directly)."""
    return validator(entry)


def post_webhook(url: str, entry: PendingEntry) -> Any:
    """POST the entry as JSON to ``url``; its JSON answer, or None when it fails (the
    submission then stays pending, and the failure is logged)."""
    body = json.dumps(entry.to_json()).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=WEBHOOK_TIMEOUT_S) as answer:
            return json.loads(answer.read() or b"null")
    except (OSError, ValueError) as error:
        _log.warning("webhook %s for pending %s failed: %s", url, entry.id, error)
        return None


async def apost_webhook(url: str, entry: PendingEntry) -> Any:
    """:func:`post_webhook` in a worker thread (the loop keeps answering)."""
    return await asyncio.to_thread(post_webhook, url, entry)


async def wait_tasks(tasks: set[Any]) -> None:
    """Wait until every task in ``tasks`` (and any they start) has ended."""
    while tasks:
        await asyncio.gather(*list(tasks), return_exceptions=True)


def wait_tasks_now(tasks: set[Any]) -> None:
    """The blocking guard runs its validators in line: nothing to wait for."""


def _settled() -> None:
    """Nothing waits for a verdict's append."""


def record_later(queues: dict[int, tuple[Any, list[Any]]], store: Any, event: Any) -> None:
    """Queue a verdict's event for ``store``; the events queued in one turn of the event
    loop go to the journal's committer together, as one append, at the start of the next
    turn: with the board's own append of the same turn, so that both usually share one
    commit (and one fsync)."""
    key = id(store)
    found = queues.get(key)
    if found is None:
        found = queues[key] = (store, [])
        asyncio.get_running_loop().call_soon(_hand_over, queues, key)
    found[1].append(event)


def _hand_over(queues: dict[int, tuple[Any, list[Any]]], key: int) -> None:
    store, events = queues.pop(key)
    store.enqueue([(events, None)], _settled)


def record_now(queues: dict[int, tuple[Any, list[Any]]], store: Any, event: Any) -> None:
    """The blocking guard hands each verdict's event to the committer at once."""
    store.enqueue([([event], None)], _settled)
