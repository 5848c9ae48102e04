"""The live channels on a port of their own (``live_port``; docs/live.md): the same paths,
parameters, messages, close codes, heartbeats and keys as under the HTTP server
(:class:`~.ws.LiveEndpoint` checks them for both), served by the ``websockets`` library
on the service's event loop.

Why a second transport: under the HTTP server every message to every client is an ASGI
``websocket.send`` awaited by the connection's own sender task (a cross-thread hop into
the server, a task waking per message). Here a flush writes one encoded update to every
connection of a window and limit synchronously (``websockets.broadcast``: a frame
written to each connection's transport, no task and no await per connection), about 3x
less server CPU per message per client (benchmarks/RESULTS-live.md).

The slow-client bound is in bytes: a connection whose transport holds more than
:attr:`~.live.LiveLimits.queue` times the message just written (counted as at least
4 KiB), unsent, is closed with 4008 (never waited for; the close frame follows what is
buffered, the connection is dropped after :attr:`~.live.LiveLimits.close_grace`
seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import socket
from collections.abc import Sequence
from typing import Final

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

from .http import HTTPProblem
from .live import CLOSE, Channel, Feed
from .ws import LiveEndpoint, refusal

__all__ = ["DirectChannel", "FastLive"]

_log = logging.getLogger("ranked.service.live")

_SMALLEST: Final = 4096
"""The message size the bound counts at least (bytes): a small message (a ping, a
member's update) after large ones does not shrink the bound to a few kilobytes."""


class DirectChannel(Channel):
    """A channel whose messages are written to its connection at once, not queued:
    :meth:`put` and :meth:`put_all` never wait, cost O(1) per connection, and close a
    connection past the bound (4008)."""

    __slots__ = ("_closing", "connection", "last_sent")

    def __init__(
        self,
        window: str | None,
        limit: int,
        member: str | None,
        after: int | None,
        bound: int,
        *,
        connection: ServerConnection,
    ) -> None:
        super().__init__(window, limit, member, after, bound)
        self.connection = connection
        self.last_sent = asyncio.get_running_loop().time()
        """When the last message was written (the heartbeat counts from it)."""
        self._closing: asyncio.Task[None] | None = None

    def put(self, message: str) -> None:
        if self.closed is None:
            DirectChannel.put_all((self,), message)

    @classmethod
    def put_all(cls, channels: Sequence[Channel], message: str) -> None:
        """Write ``message`` to every open one of ``channels`` (all DirectChannels): one
        encoding, one frame write each; then close those past the bound."""
        direct = [c for c in channels if isinstance(c, DirectChannel) and c.closed is None]
        broadcast([c.connection for c in direct], message)
        now = asyncio.get_running_loop().time()
        size = max(len(message), _SMALLEST)
        for channel in direct:
            channel.last_sent = now
            transport = channel.connection.transport
            if transport is not None and transport.get_write_buffer_size() > channel.bound * size:
                channel.close(CLOSE["too-slow"], "too slow: the client does not keep up")

    def close(self, code: int, reason: str) -> None:
        if self.closed is None:
            super().close(code, reason)
            # the close frame goes out after what is buffered; websockets drops the
            # connection when the client does not answer within close_timeout
            self._closing = asyncio.get_running_loop().create_task(
                self.connection.close(code, reason)
            )

    def ended(self) -> None:
        """The connection is gone: nothing more is written."""
        Channel.close(self, CLOSE["going-away"], "the connection ended")


class FastLive:
    """The second listener: :meth:`start` it on the service's loop once the boards are
    open, :meth:`stop` it after the channels were closed (1001) and drained."""

    def __init__(self, endpoint: LiveEndpoint) -> None:
        self.endpoint = endpoint
        self.server: Server | None = None
        self.socket: socket.socket | None = None

    def bind(self, host: str, port: int) -> None:
        """Take the port now (before the service starts: a port in use is an error at
        once, :class:`OSError`); :meth:`start` accepts on it."""
        self.socket = socket.create_server((host, port), backlog=1024)

    async def start(self) -> None:
        """Accept connections on the port :meth:`bind` took."""
        assert self.socket is not None, "bind() first"
        limits = self.endpoint.hub.limits
        if not _log.isEnabledFor(logging.DEBUG):  # a line per connection otherwise
            logging.getLogger("websockets.server").setLevel(logging.WARNING)
        self.server = await serve(
            self._connection,
            sock=self.socket,
            compression=None,  # permessage-deflate would compress every copy again
            ping_interval=None,  # the channel's own heartbeat (a ping message)
            close_timeout=limits.close_grace,
            max_size=2**16,  # clients send nothing the service reads
            server_header=None,
        )
        host, port = self.socket.getsockname()[:2]
        _log.info("live channels also at ws://%s:%d", host, port)

    async def stop(self, timeout: float) -> None:
        """Close what is still open (1001) and stop listening, at most ``timeout`` s."""
        if self.server is not None:
            self.server.close(close_connections=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.server.wait_closed(), timeout)

    async def _connection(self, connection: ServerConnection) -> None:
        request = connection.request
        assert request is not None
        path, _, query = request.path.partition("?")
        try:
            feed, channel = self.endpoint.open(
                path,
                query,
                request.headers.raw_items(),
                functools.partial(DirectChannel, connection=connection),
            )
        except HTTPProblem as refused:
            await connection.close(*refusal(refused))
            return
        assert isinstance(channel, DirectChannel)
        feed.add(channel)
        try:
            await self._serve(feed, channel, connection)
        finally:
            channel.ended()
            feed.discard(channel)

    async def _serve(
        self, feed: Feed, channel: DirectChannel, connection: ServerConnection
    ) -> None:
        """Read (and ignore) what the client sends until it leaves, and write a ping
        after each quiet heartbeat: one task per connection, none per message."""
        loop = asyncio.get_running_loop()
        heartbeat = self.endpoint.hub.limits.heartbeat
        reader = loop.create_task(_until_gone(connection))
        try:
            while True:
                wait = channel.last_sent + heartbeat - loop.time()
                if wait <= 0:
                    channel.put(feed.ping())
                    wait = heartbeat
                done, _ = await asyncio.wait((reader,), timeout=wait)
                if done:
                    return
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader


async def _until_gone(connection: ServerConnection) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for _ in connection:
            pass
