"""Redis backends (``redis://``, ``rediss://``, ``unix://``): redis-py with hiredis.

Every step is one round trip: a feature's step is ONE Lua script (``<feature>/lua/<name>.lua``,
run by EVALSHA, see :mod:`._scripts`) or one command. What a step sends and how its reply
reads back is the step's own (its :class:`~.procedure.Call`, see :mod:`.procedure`); the
classes here only send and map errors, so the sync and asyncio classes (and the cluster
ones in :mod:`.cluster`) share every line of logic.

Failure behaviour:

- A server that cannot be reached (refused, reset, timed out, cluster down) raises
  :class:`~ranked.errors.BackendUnavailableError` with redis-py's error chained. The same
  backend object works again once the server is back: redis-py reconnects, and scripts
  the restarted server has forgotten are reloaded on NOSCRIPT.
- redis-py's own retries are off by default (``retry=Retry(NoBackoff(), 0)``): a script
  sent just before a connection broke may have run, and running an ``incr`` twice would
  count twice. Callers decide whether to retry.
- Other error replies raise :class:`~ranked.errors.ResponseError` (for example
  WRONGTYPE when a key holds another type).

Time: :meth:`now_ms` is the server's ``TIME`` as an offset to the local clock, measured
on first use, every 30 s, and after a connection error or a new connection (the server
may have restarted or failed over); no operation pays a round trip for it. The asyncio
class measures it before its first operation (:meth:`AsyncRedisBackend.connect` does so
up front); until then it is the local clock.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, Self, TypeVar

import redis
import redis.asyncio
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError as RedisResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from ..errors import BackendUnavailableError
from ._redis_ops import ServerClock, translate_error
from ._scripts import run, run_async
from ._wire import async_script_executor, script_executor
from .procedure import AsyncBound, Bindable, Bound, Call

__all__ = [
    "AsyncRedisBackend",
    "RedisBackend",
    "async_connect_hook",
    "client_options",
    "connect_hook",
]

T = TypeVar("T")

CLOCK_RETRY_S = 1.0
"""After a failed TIME, how long now_ms() keeps the old offset before asking again."""


def client_options(options: Mapping[str, Any], *, asynchronous: bool = False) -> dict[str, Any]:
    """redis-py keyword arguments: bytes replies, RESP2, no silent retries; caller wins."""
    retry = AsyncRetry(NoBackoff(), 0) if asynchronous else Retry(NoBackoff(), 0)
    merged: dict[str, Any] = {"decode_responses": False, "protocol": 2, "retry": retry}
    merged.update(options)
    return merged


def connect_hook(clock: ServerClock, *, handshake: bool) -> Callable[[Any], None]:
    """redis-py ``redis_connect_func``: a new connection (first, or after the server came
    back) may reach a restarted or failed-over server, so measure its clock again.
    ``handshake``: also run redis-py's own connection setup (HELLO, AUTH, SELECT), which a
    connect function replaces; the sync cluster client runs it itself."""

    def connected(connection: Any) -> None:
        if handshake:
            connection.on_connect()
        clock.invalidate()

    return connected


def async_connect_hook(clock: ServerClock) -> Callable[[Any], Awaitable[None]]:
    """:func:`connect_hook` for asyncio connections (always with the handshake)."""

    async def connected(connection: Any) -> None:
        await connection.on_connect()
        clock.invalidate()

    return connected


class _Shell:
    """State and error mapping shared by the sync and asyncio shells."""

    unavailable: ClassVar[tuple[type[BaseException], ...]] = (
        RedisConnectionError,
        RedisTimeoutError,
    )
    cross_slot: bool = True

    def __init__(
        self, client: Any, url: str = "redis://", *, server_clock: ServerClock | None = None
    ) -> None:
        self.url = url
        self._clock = ServerClock() if server_clock is None else server_clock
        self.client = client
        self._execute: Callable[..., Any] = client.execute_command
        self._script: Callable[..., Any] = self._script_executor(client)

    @staticmethod
    def _script_executor(client: Any) -> Callable[..., Any]:
        """The function that sends a script on one of ``client``'s connections."""
        raise NotImplementedError

    def _check(self, call: Call[Any]) -> None:
        """Refuse a call before sending it (the cluster shells check hash slots)."""

    def _unavailable(self, error: BaseException) -> BackendUnavailableError:
        self._clock.invalidate()
        return BackendUnavailableError(f"{self.url}: {type(error).__name__}: {error}")

    def _failures(self) -> tuple[type[BaseException], ...]:
        """What a failed call raises: the server unreachable, or an error reply."""
        return (*self.unavailable, RedisResponseError)

    def _translated(self, error: BaseException) -> Exception:
        """The typed error for a failed call: the server unreachable, or its error reply."""
        if isinstance(error, self.unavailable):
            return self._unavailable(error)
        return translate_error(str(error))


class RedisBackend(_Shell):
    """The :class:`~ranked.backends.base.Backend` on one Redis server (sync).

    ``client`` is the redis-py client (tests use it to inspect or flush the server).
    ``server_clock`` turns the local clock into the server's; :meth:`from_url` builds one
    from its ``clock`` option (a ``time.time``-like function, injectable for tests) and
    hooks it to new connections, so a reconnect measures the offset again.
    """

    @staticmethod
    def _script_executor(client: Any) -> Callable[..., Any]:
        return script_executor(client)

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Self:
        """A backend for ``redis://``, ``rediss://`` or ``unix://`` (redis-py's URL syntax).

        ``options`` go to ``redis.Redis.from_url`` (except ``clock``); nothing connects
        until the first operation.
        """
        clock = ServerClock(options.pop("clock", time.time))
        options.setdefault("redis_connect_func", connect_hook(clock, handshake=True))
        client = redis.Redis.from_url(url, **client_options(options))
        return cls(client, url, server_clock=clock)

    def _call(self, call: Call[T]) -> T:
        if not call.needs_io:
            return call.decode(None)
        self._check(call)
        script = call.script
        try:
            if script is None:
                reply = self._execute(*call.args)
            else:
                reply = run(self._script, script, call.keys, call.args)
        except self._failures() as error:
            raise self._translated(error) from error
        return call.decode(reply)

    def now_ms(self) -> int:
        """The server's clock in Unix ms (TIME offset, refreshed every 30 s; see module)."""
        clock = self._clock
        if clock.due:
            sent = clock.local_ms()
            try:
                reply = self._execute("TIME")
            except self.unavailable:
                clock.postpone(CLOCK_RETRY_S)
            else:
                clock.update(reply, sent, clock.local_ms())
        return clock.now_ms()

    def accelerate(self, operation: Bindable[T]) -> Bound[T] | None:
        """None: Redis runs every step as its script or command (see :meth:`bind`)."""
        return None

    def accelerate_now(self, operation: Bindable[T]) -> Bound[T] | None:
        """None: nothing on Redis answers without a round trip."""
        return None

    def bind(self, operation: Bindable[T]) -> Bound[T]:
        """The callable running ``operation``: its call built from the arguments, then
        sent (one round trip, atomic; on a cluster every key in one slot). O(1)."""
        build, send = operation.call, self._call

        def step(*args: Any) -> T:
            return send(build(*args))

        return step

    def close(self) -> None:
        """Release the connections (idempotent)."""
        self.client.close()


class AsyncRedisBackend(_Shell):
    """The :class:`~ranked.backends.base.AsyncBackend` on one Redis server (asyncio)."""

    @staticmethod
    def _script_executor(client: Any) -> Callable[..., Any]:
        return async_script_executor(client)

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Self:
        """As :meth:`RedisBackend.from_url`, with ``redis.asyncio.Redis`` on a blocking pool
        of ``max_connections`` (default 64); nothing connects until the first operation
        (or :meth:`connect`)."""
        clock = ServerClock(options.pop("clock", time.time))
        options.setdefault("redis_connect_func", async_connect_hook(clock))
        # A blocking pool: many concurrent tasks wait for a free connection instead of
        # failing with "Too many connections" (the default asyncio pool's behaviour).
        options.setdefault("max_connections", 64)
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            url, **client_options(options, asynchronous=True)
        )
        return cls(redis.asyncio.Redis.from_pool(pool), url, server_clock=clock)

    async def connect(self) -> None:
        """Reach the server now and measure its clock (raises when it is unreachable)."""
        await self._refresh_clock(strict=True)

    async def _refresh_clock(self, strict: bool = False) -> None:
        clock = self._clock
        sent = clock.local_ms()
        try:
            reply = await self._execute("TIME")
        except self.unavailable as error:
            clock.postpone(CLOCK_RETRY_S)
            if strict:
                raise self._unavailable(error) from error
            return
        clock.update(reply, sent, clock.local_ms())

    async def _call(self, call: Call[T]) -> T:
        if not call.needs_io:
            return call.decode(None)
        self._check(call)
        if self._clock.due:
            await self._refresh_clock()
        sent = (
            self._execute(*call.args)
            if call.script is None
            else run_async(self._script, call.script, call.keys, call.args)
        )
        try:
            reply = await sent
        except self._failures() as error:
            raise self._translated(error) from error
        return call.decode(reply)

    def now_ms(self) -> int:
        """The server's clock in Unix ms, from the offset measured before operations."""
        return self._clock.now_ms()

    def accelerate(self, operation: Bindable[T]) -> AsyncBound[T] | None:
        """None: Redis runs every step as its script or command."""
        return None

    def accelerate_now(self, operation: Bindable[T]) -> Bound[T] | None:
        """None: nothing on Redis answers without a round trip."""
        return None

    def bind(self, operation: Bindable[T]) -> AsyncBound[T]:
        """:meth:`RedisBackend.bind`, awaitable."""
        build, send = operation.call, self._call

        async def step(*args: Any) -> T:
            return await send(build(*args))

        return step

    async def close(self) -> None:
        """Release the connections (idempotent)."""
        await self.client.aclose()
