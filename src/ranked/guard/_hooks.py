"""The validator hook's two forms: the asyncio guard runs a held submission's validator in
a task of its own (the submission's answer does not wait for it); the blocking guard runs
it in line, after the verdict is made. ``scripts/generate_sync.py`` maps each asyncio name
here to its blocking twin."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

from ..core.backoff import backoff_sleep
from ..core.webhook_signature import HEADERS, sign
from .verdict import PendingEntry

__all__ = [
    "acall_validator",
    "apost_webhook",
    "call_validator",
    "post_webhook",
    "record_now",
    "validate_later",
    "validate_now",
    "wait_tasks",
    "wait_tasks_now",
]

_log = logging.getLogger("ranked.guard")

WEBHOOK_TIMEOUT_S = 10.0
WEBHOOK_ATTEMPTS = 4
"""How many times the asyncio guard asks a failing webhook about one held submission."""
WEBHOOK_BACKOFF_S = 0.5
"""The delay before its first retry at most; it doubles with each retry (drawn in
[d/2, d])."""


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


def _attempt(url: str, entry: PendingEntry, secret: str | None, attempt: int) -> tuple[bool, Any]:
    """One POST of the entry as JSON to ``url`` (signed with ``secret`` when given, with
    the headers of :data:`ranked.core.webhook_signature.HEADERS`): (True, its JSON answer),
    or (False, None) when it failed and may succeed later (no answer, a 5xx, a 429, a body
    that is not JSON). A 4xx otherwise is the webhook's answer: (True, None), pending."""
    body = json.dumps(entry.to_json()).encode()
    headers = {"Content-Type": "application/json", HEADERS["delivery"]: entry.id}
    headers[HEADERS["attempt"]] = str(attempt)
    if secret is not None:
        timestamp = int(time.time())
        headers[HEADERS["timestamp"]] = str(timestamp)
        headers[HEADERS["signature"]] = sign(secret, timestamp, body)
    request = urllib.request.Request(url, body, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=WEBHOOK_TIMEOUT_S) as answer:
            return True, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        retry = error.code >= 500 or error.code == 429
        _log.warning("webhook %s for pending %s answered %d", url, entry.id, error.code)
        return not retry, None
    except (OSError, ValueError) as error:
        _log.warning("webhook %s for pending %s failed: %s", url, entry.id, error)
        return False, None


def post_webhook(url: str, entry: PendingEntry, secret: str | None) -> Any:
    """The webhook's JSON answer about ``entry``, or None when it fails (the submission
    then stays pending, and the failure is logged). The blocking guard asks once: it runs
    in line, and a retry would hold its caller."""
    return _attempt(url, entry, secret, 1)[1]


async def apost_webhook(url: str, entry: PendingEntry, secret: str | None) -> Any:
    """The webhook's JSON answer about ``entry``, asked in a worker thread (the loop keeps
    answering) up to :data:`WEBHOOK_ATTEMPTS` times while it fails and may succeed later,
    with exponential backoff and jitter between attempts; None when every attempt failed
    (the submission stays pending)."""
    for attempt in range(1, WEBHOOK_ATTEMPTS + 1):
        done, answer = await asyncio.to_thread(_attempt, url, entry, secret, attempt)
        if done:
            return answer
        if attempt < WEBHOOK_ATTEMPTS:
            await backoff_sleep(WEBHOOK_BACKOFF_S, attempt)
    return None


async def wait_tasks(tasks: set[Any]) -> None:
    """Wait until every task in ``tasks`` (and any they start) has ended."""
    while tasks:
        await asyncio.gather(*list(tasks), return_exceptions=True)


def wait_tasks_now(tasks: set[Any]) -> None:
    """The blocking guard runs its validators in line: nothing to wait for."""


def _settled() -> None:
    """Nothing waits for a verdict's append."""


def record_now(store: Any, event: Any) -> None:
    """Hand a verdict's event to the journal's committer at once, without waiting (both
    guards): queued before the caller's next write, so that the journal keeps the order of
    one caller's calls (a board's plain submission then waits for the committer's queue,
    see :mod:`ranked.leaderboard._journal_lane`)."""
    store.enqueue([([event], None)], _settled, detached=True)
