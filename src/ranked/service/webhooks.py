"""Webhook deliveries of notifications: a signed JSON POST per notification, retried with
exponential backoff and jitter, never on a writer's or a request's path (docs/live.md,
"Notifications").

:meth:`WebhookSender.send` is O(1) and never waits: it starts one task per delivery,
unless :attr:`WebhookLimits.pending` deliveries are already waiting (sending, or waiting
to retry), in which case the notification is dropped for that webhook and counted
(``dropped``). A delivery POSTs the same body with the same ``X-Ranked-Delivery`` (the
notification's id) on every attempt, with a fresh ``X-Ranked-Timestamp`` and signature;
a 2xx answer ends it (``ok``); another status, a redirect or a connection error is retried
(``retried``) after a delay drawn uniformly in ``[d/2, d]``, ``d = min(backoff_max,
backoff * 2**(attempt - 1))``, until :attr:`WebhookLimits.attempts` attempts have failed
(``failed``). ``on_settled(board, delivery, outcome)`` is awaited when a delivery ends
(``ok`` or ``failed``): the service marks it in its journaled outbox (:mod:`.outbox`),
which sends again, after a restart, what was pending when the process ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ..core.backoff import backoff_bound as jittered_bound
from ..core.backoff import backoff_sleep
from ..core.webhook_signature import HEADERS, sign

__all__ = ["HEADERS", "WebhookLimits", "WebhookSender", "backoff_bound"]

_log = logging.getLogger("ranked.service.webhooks")


@dataclass(frozen=True)
class WebhookLimits:
    """The deliveries' bounds (environment: ``RANKED_WEBHOOK_<NAME>``)."""

    attempts: int = 8
    """Attempts per notification, the first included."""
    backoff: float = 0.5
    """The delay before the first retry at most (seconds); it doubles with each retry."""
    backoff_max: float = 60.0
    """The longest delay between two attempts (seconds)."""
    timeout: float = 10.0
    """Seconds one attempt may take (connect, send, answer)."""
    pending: int = 10_000
    """Deliveries waiting at once (sending or waiting to retry); past it, dropped."""
    concurrency: int = 16
    """POSTs in flight at once."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> WebhookLimits:
        environ = os.environ if environ is None else environ
        found = cls()

        def get(name: str, default: float) -> float:
            raw = environ.get(f"RANKED_WEBHOOK_{name.upper()}")
            return default if raw is None else float(raw)

        return cls(
            attempts=max(1, int(get("attempts", found.attempts))),
            backoff=get("backoff", found.backoff),
            backoff_max=get("backoff_max", found.backoff_max),
            timeout=get("timeout", found.timeout),
            pending=max(1, int(get("pending", found.pending))),
            concurrency=max(1, int(get("concurrency", found.concurrency))),
        )


def backoff_bound(limits: WebhookLimits, retry: int) -> float:
    """The longest delay before retry number ``retry`` (1: the first); the delay drawn is
    in ``[bound/2, bound]`` (:mod:`ranked.core.backoff`)."""
    return jittered_bound(limits.backoff, retry, limits.backoff_max)


Outcome = Callable[[str, str], None]
"""Told ``(board, outcome)``: ``ok``, ``retried``, ``failed`` or ``dropped``."""


Settled = Callable[[str, str, str], Awaitable[None]]
"""Awaited with ``(board, delivery id, outcome)`` when a delivery ends: ``ok`` or ``failed``."""


def _nothing(board: str, outcome: str) -> None:
    pass


async def _forget(board: str, delivery: str, outcome: str) -> None:
    pass


class WebhookSender:
    """Delivers notifications to webhooks, in the background of one event loop."""

    def __init__(
        self,
        limits: WebhookLimits | None = None,
        *,
        on_outcome: Outcome = _nothing,
        on_settled: Settled = _forget,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.limits = limits or WebhookLimits.from_environ()
        self._on_outcome = on_outcome
        self.on_settled = on_settled
        self._clock = clock
        self._tasks: set[asyncio.Task[None]] = set()
        self._client: httpx.AsyncClient | None = None
        self._slots: asyncio.Semaphore | None = None

    @property
    def pending(self) -> int:
        """Deliveries not finished (sending, or waiting to retry)."""
        return len(self._tasks)

    def send(self, board: str, url: str, secret: str, payload: Mapping[str, Any]) -> bool:
        """Start delivering ``payload`` (a notification: its ``id`` is the delivery id) to
        ``url``; False (and ``dropped``) when too many are pending. O(1), never waits."""
        if len(self._tasks) >= self.limits.pending:
            self._on_outcome(board, "dropped")
            return False
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        task = asyncio.get_running_loop().create_task(
            self._deliver(board, url, secret, str(payload["id"]), body)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _deliver(self, board: str, url: str, secret: str, delivery: str, body: bytes) -> None:
        limits = self.limits
        for attempt in range(1, limits.attempts + 1):
            if await self._post(url, secret, delivery, body, attempt):
                self._on_outcome(board, "ok")
                await self._settle(board, delivery, "ok")
                return
            if attempt == limits.attempts:
                self._on_outcome(board, "failed")
                _log.warning(
                    "webhook of board %r: delivery %s failed %d times; given up",
                    board,
                    delivery,
                    attempt,
                )
                await self._settle(board, delivery, "failed")
                return
            self._on_outcome(board, "retried")
            await backoff_sleep(limits.backoff, attempt, limits.backoff_max)

    async def _settle(self, board: str, delivery: str, outcome: str) -> None:
        try:
            await self.on_settled(board, delivery, outcome)
        except Exception:  # the journal refused: the delivery is sent again after a restart
            _log.exception("webhook of board %r: delivery %s not marked settled", board, delivery)

    async def _post(self, url: str, secret: str, delivery: str, body: bytes, attempt: int) -> bool:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.limits.timeout, follow_redirects=False)
            self._slots = asyncio.Semaphore(self.limits.concurrency)
        assert self._slots is not None
        timestamp = int(self._clock())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "ranked-webhook",
            HEADERS["delivery"]: delivery,
            HEADERS["timestamp"]: str(timestamp),
            HEADERS["signature"]: sign(secret, timestamp, body),
            HEADERS["attempt"]: str(attempt),
        }
        async with self._slots:
            try:
                answer = await self._client.post(url, content=body, headers=headers)
            except httpx.HTTPError as error:
                _log.info("webhook %s attempt %d: %s", delivery, attempt, error)
                return False
        return 200 <= answer.status_code < 300

    async def close(self) -> None:
        """Stop: pending deliveries are abandoned here (the outbox sends them again at the
        next start)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        if self._client is not None:
            await self._client.aclose()
            self._client = None
