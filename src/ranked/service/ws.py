"""The live channels' WebSocket endpoint (the ASGI ``websocket`` scope; docs/live.md).

``/v1/boards/{board}/live`` (the top of a window) and
``/v1/boards/{board}/members/{member}/live`` (a member's standing). The connection is
accepted first, so that every refusal is a close code the client can read: 4000 a bad
parameter, 4001 no good key, 4003 too small a scope, 4004 no such board or channel.
Keys are the HTTP API's (``Authorization: Bearer``, or ``?key=`` where a browser cannot
set headers), scope ``read``; none on a ``public_reads`` board.

:meth:`LiveEndpoint.open` checks a connection's path, query string and headers for both
transports: this endpoint under the HTTP server, and :mod:`.fastlive` on the service's
``live_port``.

Here, per connection two tasks: one sends the channel's queue (a ping after a quiet
heartbeat), one listens for the client leaving. A channel closed by the hub (too slow,
the service stopping) sends its close code once what is in flight is written, or is
dropped after :attr:`~.live.LiveLimits.close_grace` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Annotated, Any, Final
from urllib.parse import parse_qsl

import msgspec

from ..errors import RankedError
from .convert import member as checked_member
from .convert import query as checked_query
from .http import HTTPProblem, Route, Router
from .keys import KeyStore, Scope
from .live import CLOSE, Channel, Feed, Hub
from .registry import Boards
from .routes import Window

__all__ = ["LiveEndpoint", "LiveQuery", "refusal"]

_log = logging.getLogger("ranked.service.live")

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]

_BEARER: Final = "bearer "


class LiveQuery(msgspec.Struct, forbid_unknown_fields=True):
    limit: Annotated[int, msgspec.Meta(ge=1, le=100)] = 10
    """Board channel: how many of the top to send (at most 100)."""
    window: Window | None = None
    """A window id (default: the current primary window)."""
    after: Annotated[int, msgspec.Meta(ge=0)] | None = None
    """Resume after this event id (the last one received)."""
    epoch: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    """The epoch of the ids received: ``after`` with another epoch, or with none, gets a
    fresh snapshot (the ids may be another process's)."""
    key: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    """An API key, for clients that cannot set the Authorization header."""


_CODES: Final = {
    401: CLOSE["unauthorized"],
    403: CLOSE["forbidden"],
    404: CLOSE["unknown-board"],
    405: CLOSE["unknown-board"],
}
"""The close code of a refusal, by the HTTP status the API would answer; others 4000."""


def refusal(refused: HTTPProblem) -> tuple[int, str]:
    """The close code and reason of a refused channel."""
    # a close frame's reason is at most 123 bytes
    return _CODES.get(refused.status, CLOSE["bad-request"]), refused.detail[:120]


async def _nothing(*_: Any) -> Any:  # the router's routes need a handler; never called
    raise NotImplementedError


_ROUTER: Final = Router(
    [
        Route("GET", "/v1/boards/{board}/live", _nothing, Scope.READ, "board channel"),
        Route("GET", "/v1/boards/{board}/members/{member}/live", _nothing, Scope.READ, "member"),
    ]
)


class LiveEndpoint:
    """Serves the live channels of one service's boards."""

    def __init__(self, hub: Hub, boards: Boards, keys: KeyStore) -> None:
        self.hub = hub
        self.boards = boards
        self.keys = keys

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        path = scope.get("raw_path") or scope["path"].encode()
        try:
            feed, channel = self.open(
                path.decode("latin-1"),
                scope.get("query_string", b"").decode("latin-1"),
                ((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]),
            )
        except HTTPProblem as refused:
            code, reason = refusal(refused)
            await send({"type": "websocket.close", "code": code, "reason": reason})
            return
        feed.add(channel)
        try:
            await self._pump(feed, channel, receive, send)
        finally:
            feed.discard(channel)

    def open(
        self,
        path: str,
        query: str,
        headers: Iterable[tuple[str, str]],
        make: Callable[..., Channel] = Channel,
    ) -> tuple[Feed, Channel]:
        """The channel a connection asks for, once its parameters and key are checked:
        ``path`` as sent (percent-encoded), ``query`` the query string, ``headers`` the
        request's (name, value) pairs. Both transports call it (this endpoint under the
        HTTP server, :mod:`.fastlive` on its own port); ``make`` builds the channel from
        ``(window, limit, member, after, bound)``. :class:`HTTPProblem` refuses it
        (:func:`refusal` gives the close code)."""
        try:
            _, params = _ROUTER.match("GET", path.encode("latin-1"))
            args = checked_query(dict(parse_qsl(query, keep_blank_values=True)), LiveQuery)
            board = self.boards.get(params["board"])
            member = checked_member(params["member"]) if "member" in params else None
            board.window_id(args.window)  # an unknown window is refused here
        except RankedError as error:
            raise HTTPProblem(422, "unknown-window", str(error)) from None
        self._authorize(headers, board.name, args.key)
        after = args.after
        if after is not None and args.epoch != self.hub.epoch:  # none: maybe another's
            after = -1  # another process's numbering: a fresh snapshot
        channel = make(args.window, args.limit, member, after, self.hub.limits.queue)
        return self.hub.feed(board.name), channel

    def _authorize(self, headers: Iterable[tuple[str, str]], board: str, key: str | None) -> None:
        presented = key
        for name, value in headers:
            if name.lower() == "authorization":
                if value[:7].lower() != _BEARER:
                    raise HTTPProblem(
                        401, "unauthorized", "the Authorization header is not 'Bearer <key>'"
                    )
                presented = value[7:].strip()
                break
        if presented is None:
            if self.boards.settings(board).public_reads:
                return
            raise HTTPProblem(
                401, "unauthorized", "this channel needs a key (Bearer header or ?key=)"
            )
        found = self.keys.authenticate(presented)
        if found is None:
            raise HTTPProblem(401, "unauthorized", "the key is unknown or revoked")
        if not found.scope.allows(Scope.READ):
            raise HTTPProblem(403, "forbidden", "this channel needs a key of scope read")

    async def _pump(self, feed: Feed, channel: Channel, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        sender = loop.create_task(self._send_all(feed, channel, send))
        listener = loop.create_task(_until_gone(receive))
        closed = loop.create_task(channel.done.wait())
        tasks = {sender, listener, closed}
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            if closed in done and sender not in done and listener not in done:
                await asyncio.wait({sender, listener}, timeout=self.hub.limits.close_grace)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _send_all(self, feed: Feed, channel: Channel, send: Send) -> None:
        heartbeat = self.hub.limits.heartbeat
        try:
            while True:
                text = await channel.next(heartbeat)
                if text is None:
                    break
                await send({"type": "websocket.send", "text": text or feed.ping()})
            assert channel.closed is not None
            code, reason = channel.closed
            await send({"type": "websocket.close", "code": code, "reason": reason})
        except (OSError, RuntimeError) as error:  # the client went away mid-send
            _log.debug("live channel of %r: %s", feed.name, error)


async def _until_gone(receive: Receive) -> None:
    """Read (and ignore) what the client sends, until it leaves."""
    while (await receive())["type"] != "websocket.disconnect":
        pass
