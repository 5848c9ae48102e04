"""Rank-change notifications in the service (docs/live.md, "Notifications"): per-board
settings (``GET``/``PUT``/``DELETE /v1/boards/{board}/notifications``, scope admin), one
watcher task per board that has them, and the deliveries: on the member's live channel
(a ``notification`` message) and to the board's webhook (:mod:`.webhooks`), through the
journaled outbox (:mod:`.outbox`): a notification for a webhook is kept in the journal
before it is sent, so it is delivered at least once across crashes and restarts.

The settings are kept in the board's metadata under ``"notifications"`` (journaled with
it, so a restart finds them), not in :class:`~.schemas.BoardSettings`: they hold the
webhook's secret, which ``GET /v1/boards/{board}`` (scope read) must not show; and the
``"service"`` metadata entry is replaced whole by a board's PUT.

The watcher (:class:`~ranked.notify.AsyncRankWatcher`) is told of every submission the
service applies (the hub's observers: O(1) each) and reads the board through its public
API once per diff. Its task sleeps until the policy's next slot (60 s at most, to follow a
primary window that rolls over), so a diff is never on a writer's path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, Final, Literal

import msgspec

from ..errors import NotifyConfigError, WindowError
from ..leaderboard import Submission
from ..notify import AsyncRankWatcher, Notification, NotifyPolicy
from .http import HTTPProblem, Request, Response, Route, json_response
from .keys import Scope
from .live import Hub
from .metrics import Metrics
from .outbox import Outbox
from .registry import Boards
from .routes import Window, _body
from .schemas import RemoveResult
from .webhooks import WebhookLimits, WebhookSender

__all__ = [
    "NotificationSettings",
    "NotificationsOut",
    "Notifier",
    "WebhookSettings",
    "notification_routes",
]

_log = logging.getLogger("ranked.service.notifications")

METADATA_KEY: Final = "notifications"
_JSON: Final = msgspec.json.Encoder()
LONGEST_SLEEP: Final = 60.0

Kind = Literal["first_taken", "first_lost", "entered_top", "rank_up", "rank_down"]
Threshold = Annotated[int, msgspec.Meta(ge=1, le=10_000)]


class WebhookSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Where a board's notifications are POSTed, and the secret that signs them (given,
    or made by the service and shown once, in the answer to the PUT that made it)."""

    url: Annotated[str, msgspec.Meta(pattern=r"^https?://[^\s/?#@]+(/[^\s]*)?$", max_length=2000)]
    secret: (
        Annotated[str, msgspec.Meta(min_length=16, max_length=200, pattern=r"^[\x21-\x7e]+$")]
        | None
    ) = None


class NotificationSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A board's notification policy: a ``preset`` (``final-day``, ``meaningful``,
    ``every-change``; default ``meaningful``) and the fields given, which override it."""

    preset: Literal["final-day", "meaningful", "every-change"] | None = None
    interval_seconds: Annotated[float, msgspec.Meta(ge=0.1, le=604_800)] | None = None
    """The snapshot diff's period."""
    kinds: Annotated[list[Kind], msgspec.Meta(min_length=1, max_length=5)] | None = None
    """The changes told."""
    thresholds: Annotated[list[Threshold], msgspec.Meta(min_length=1, max_length=16)] | None = None
    """The tops whose entry is told (entered_top)."""
    within_hours: Annotated[float, msgspec.Meta(gt=0, le=8784)] | None = None
    """Only in the last this many hours before the window ends."""
    window: Window | None = None
    """The window watched (default: the board's current primary window)."""
    ends_at: datetime | None = None
    """The end ``within_hours`` counts back from, on a window that never ends."""
    top: Threshold | None = None
    """How many of the top each diff reads (default: the largest threshold)."""
    webhook: WebhookSettings | None = None


class PolicyOut(msgspec.Struct):
    """The policy in force (the preset with the fields given)."""

    interval_seconds: float
    kinds: list[str]
    thresholds: list[int]
    within_hours: float | None
    window: str | None
    ends_at: datetime | None
    top: int


class NotificationsOut(msgspec.Struct, omit_defaults=True):
    board: str
    settings: NotificationSettings
    """As given (the webhook's secret left out)."""
    policy: PolicyOut
    secret: str | None = None
    """A webhook secret the service made: shown in this answer only."""


def policy_of(settings: NotificationSettings) -> NotifyPolicy:
    """The :class:`NotifyPolicy` of ``settings``; NotifyConfigError when it cannot work."""
    fields: dict[str, Any] = {}
    if settings.interval_seconds is not None:
        fields["interval"] = timedelta(seconds=settings.interval_seconds)
    if settings.kinds is not None:
        fields["kinds"] = NotifyPolicy.kinds_of(settings.kinds)
    if settings.thresholds is not None:
        fields["thresholds"] = tuple(settings.thresholds)
    if settings.within_hours is not None:
        fields["within"] = timedelta(hours=settings.within_hours)
    for name in ("window", "ends_at", "top"):
        if getattr(settings, name) is not None:
            fields[name] = getattr(settings, name)
    return NotifyPolicy.preset(settings.preset or "meaningful", **fields)


def _policy_out(policy: NotifyPolicy) -> PolicyOut:
    return PolicyOut(
        policy.interval.total_seconds(),
        sorted(kind.value for kind in policy.kinds),
        list(policy.thresholds),
        None if policy.within is None else policy.within.total_seconds() / 3600,
        policy.window,
        policy.ends_at,
        policy.read_top,
    )


def _public(settings: NotificationSettings) -> NotificationSettings:
    if settings.webhook is None:
        return settings
    return msgspec.structs.replace(settings, webhook=WebhookSettings(settings.webhook.url))


def message(notification: Notification) -> dict[str, Any]:
    """The JSON object of a notification, on the member channel and to the webhook."""
    return {"type": "notification", **notification.to_json()}


@dataclass
class _Watch:
    settings: NotificationSettings
    watcher: AsyncRankWatcher
    task: asyncio.Task[None] | None = None


class Notifier:
    """Every board's notifications, in one service process (one event loop)."""

    def __init__(
        self, boards: Boards, hub: Hub, metrics: Metrics, limits: WebhookLimits | None = None
    ) -> None:
        self.boards = boards
        self.hub = hub
        self.metrics = metrics
        self.webhooks = WebhookSender(
            limits, on_outcome=metrics.notify.delivered, on_settled=self._settled
        )
        self._watches: dict[str, _Watch] = {}
        self._outbox: Outbox | None = None
        """The journaled outbox (set once the boards are open: it is on their journal)."""
        self._keeping: set[asyncio.Task[None]] = set()
        hub.observers.append(self.observe)

    # -- start and stop ---------------------------------------------------------------

    async def open(self) -> None:
        """Start the watchers of the boards whose metadata holds settings, and send again
        what their webhooks' outbox holds unsettled (a crash or a stop came first)."""
        if self.boards.store is not None:
            self._outbox = Outbox(self.boards.store)
        for name in self.boards.names():
            stored = (await self.boards.get(name).metadata()).get(METADATA_KEY)
            if stored is None:
                continue
            try:
                settings = msgspec.convert(stored, NotificationSettings, strict=False)
                self._start(name, settings)
            except (msgspec.ValidationError, NotifyConfigError, WindowError) as error:
                _log.error("board %r: notification settings not used: %s", name, error)
                continue
            self._resend(name, settings)

    def _resend(self, name: str, settings: NotificationSettings) -> None:
        """Send the board's kept, unsettled notifications to its webhook again."""
        webhook = settings.webhook
        if self._outbox is None or webhook is None or webhook.secret is None:
            return
        pending = self._outbox.pending(name)
        if pending:
            _log.info("board %r: %d webhook notifications sent again", name, len(pending))
        for payload in pending:
            self.webhooks.send(name, webhook.url, webhook.secret, payload)

    async def close(self) -> None:
        """Stop the watchers, and the webhook deliveries (pending ones are lost)."""
        for watch in self._watches.values():
            await _stop(watch)
        self._watches.clear()
        for task in list(self._keeping):  # a notification being kept: let it land
            with contextlib.suppress(Exception):
                await task
        await self.webhooks.close()

    # -- settings ---------------------------------------------------------------------

    def get(self, name: str) -> NotificationsOut:
        self.boards.get(name)
        watch = self._watches.get(name)
        if watch is None:
            raise HTTPProblem(
                404, "no-notifications", f"board {name!r} has no notification settings"
            )
        return NotificationsOut(name, _public(watch.settings), _policy_out(watch.watcher.policy))

    async def put(self, name: str, settings: NotificationSettings) -> NotificationsOut:
        """Check ``settings`` (422 when they cannot work: nothing changes then), store them
        in the board's metadata and (re)start the board's watcher."""
        board = self.boards.get(name)
        made = None
        if settings.webhook is not None and settings.webhook.secret is None:
            old = self._watches.get(name)
            kept = old.settings.webhook if old is not None else None
            secret = kept.secret if kept is not None and kept.url == settings.webhook.url else None
            if secret is None:
                secret = made = secrets.token_urlsafe(32)
            settings = msgspec.structs.replace(
                settings, webhook=WebhookSettings(settings.webhook.url, secret)
            )
        try:
            watcher = AsyncRankWatcher(board, policy_of(settings))
        except (NotifyConfigError, WindowError) as error:
            raise HTTPProblem(422, "invalid-notifications", str(error)) from None
        await board.merge_metadata({METADATA_KEY: msgspec.to_builtins(settings)})
        old = self._watches.pop(name, None)
        if old is not None:
            await _stop(old)
        self._watches[name] = _Watch(settings, watcher)
        self._spawn(name)
        answer = self.get(name)
        answer.secret = made
        return answer

    def has(self, name: str) -> bool:
        """Whether board ``name`` has notification settings."""
        return name in self._watches

    async def delete(self, name: str) -> None:
        board = self.boards.get(name)
        watch = self._watches.pop(name, None)
        if watch is None:
            raise HTTPProblem(
                404, "no-notifications", f"board {name!r} has no notification settings"
            )
        await _stop(watch)
        await board.merge_metadata({METADATA_KEY: None})

    def _start(self, name: str, settings: NotificationSettings) -> None:
        watcher = AsyncRankWatcher(self.boards.get(name), policy_of(settings))
        self._watches[name] = _Watch(settings, watcher)
        self._spawn(name)

    def _spawn(self, name: str) -> None:
        watch = self._watches[name]
        watch.task = asyncio.get_running_loop().create_task(self._run(name, watch))

    # -- the writes and the diffs -------------------------------------------------------

    def observe(self, board: str, results: Sequence[Submission]) -> None:
        """Submissions applied to ``board`` (the hub's observer). O(len(results))."""
        watch = self._watches.get(board)
        if watch is not None:
            for result in results:
                watch.watcher.observe(result)

    async def _run(self, name: str, watch: _Watch) -> None:
        watcher = watch.watcher
        delay = 0.0
        while True:
            await asyncio.sleep(min(LONGEST_SLEEP, max(0.0, delay)))
            try:
                watcher.board = self.boards.get(name)  # a PUT of the board reopens it
                found = await watcher.check()
                due = watcher.next_check()
            except Exception:  # one failed read must not end the board's notifications
                _log.exception("board %r: notification diff failed", name)
                delay = 1.0
                continue
            if found:
                self._deliver(name, watch, found)
            delay = LONGEST_SLEEP if due is None else due / 1_000_000 - time.time() + 0.001

    def _deliver(self, name: str, watch: _Watch, found: list[Notification]) -> None:
        """Tell the member channels and the webhook: O(channels + notifications), no wait."""
        members: dict[str, list[Any]] = {}
        for channel in self.hub.feed(name).channels:
            if channel.member is not None and channel.closed is None:
                members.setdefault(channel.member, []).append(channel)
        webhook = watch.settings.webhook
        for notification in found:
            self.metrics.notify.notified(name, notification.kind.value)
            payload = message(notification)
            channels = members.get(notification.member)
            if channels:
                text = _JSON.encode(payload).decode()
                for channel in channels:
                    channel.put(text)
            if webhook is not None and webhook.secret is not None:
                task = asyncio.get_running_loop().create_task(
                    self._keep_then_send(name, webhook.url, webhook.secret, payload)
                )
                self._keeping.add(task)
                task.add_done_callback(self._keeping.discard)

    async def _keep_then_send(
        self, name: str, url: str, secret: str, payload: dict[str, Any]
    ) -> None:
        """Keep ``payload`` in the outbox (durable), then start its delivery."""
        if self._outbox is not None:
            try:
                await self._outbox.produced(name, payload)
            except Exception:  # the journal refused: send it all the same, at most once
                _log.exception("board %r: notification %s not kept", name, payload["id"])
        self.webhooks.send(name, url, secret, payload)

    async def _settled(self, board: str, delivery: str, outcome: str) -> None:
        if self._outbox is not None:
            await self._outbox.settled(board, delivery, outcome)


async def _stop(watch: _Watch) -> None:
    if watch.task is not None:
        watch.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watch.task


def notification_routes(notifier: Notifier) -> list[Route]:
    """``GET``/``PUT``/``DELETE /v1/boards/{board}/notifications`` (scope admin)."""

    async def get(request: Request) -> Response:
        return json_response(notifier.get(request.params["board"]))

    async def put(request: Request) -> Response:
        settings: NotificationSettings = await _body(request, NotificationSettings)
        name = request.params["board"]
        had = notifier.has(name)
        return json_response(await notifier.put(name, settings), 200 if had else 201)

    async def delete(request: Request) -> Response:
        await notifier.delete(request.params["board"])
        return json_response(RemoveResult(True))

    path = "/v1/boards/{board}/notifications"
    tag = "notifications"
    return [
        Route(
            "GET",
            path,
            get,
            Scope.ADMIN,
            "A board's notification settings",
            response=NotificationsOut,
            tag=tag,
        ),
        Route(
            "PUT",
            path,
            put,
            Scope.ADMIN,
            "Set a board's rank-change notifications",
            body=NotificationSettings,
            response=NotificationsOut,
            tag=tag,
            answers=((201, "Created: the board had no notifications", NotificationsOut),),
        ),
        Route(
            "DELETE",
            path,
            delete,
            Scope.ADMIN,
            "Stop a board's notifications",
            response=RemoveResult,
            tag=tag,
        ),
    ]
