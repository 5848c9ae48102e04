"""A lean send path for scripts on one Redis server: a connection, one request, one reply.

redis-py's ``execute_command`` wraps every request in retry bookkeeping, timing and
observability hooks and response callbacks; scripts need none of them (ranked turns
redis-py's retries off, and a script reply has no callback), and on a loopback server that
wrapping is a visible share of each round trip. Only EVALSHA / EVAL go this way; plain
commands, whose replies redis-py's callbacks shape, keep ``execute_command``.

Error handling follows redis-py's: an error reply (``ResponseError``, ``NoScriptError``)
leaves the connection as it is; anything else (a broken or timed-out connection, an
interrupted read) disconnects it first, so the next request reconnects, and the error
goes to the caller unchanged.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import redis
import redis.asyncio
from redis.exceptions import ResponseError

__all__ = ["async_script_executor", "script_executor"]

_hiredis_pack: Callable[[tuple[Any, ...]], bytes] | None
try:
    from hiredis import pack_command as _hiredis_pack
except ImportError:  # pragma: no cover - hiredis is a dependency
    _hiredis_pack = None


def script_executor(client: Any) -> Callable[..., Any]:
    """``execute(*args) -> reply`` for a plain ``redis.Redis`` on a connection pool; the
    client's own ``execute_command`` for anything else (cluster, single connection).

    Connections come from the client's pool once and then stay on a free list of their
    own: taking and returning a pooled connection costs about 5 us in redis-py 8 (locks,
    bookkeeping, metrics), a list pop and append well under one. The pool still knows them
    as in use, so ``client.close()`` closes them; after a fork the list starts afresh, as
    the pool does."""
    if type(client) is not redis.Redis or client.connection is not None:
        return client.execute_command  # type: ignore[no-any-return]
    pool: Any = client.connection_pool  # redis-py leaves these unannotated
    # Script arguments are bytes, str, int or float: hiredis packs them as redis-py would.
    pack = _hiredis_pack if client.get_encoder().encoding == "utf-8" else None
    idle: deque[Any] = deque()
    owner = os.getpid()

    def execute(*args: Any) -> Any:
        nonlocal idle, owner
        if os.getpid() != owner:  # a forked child: never share the parent's sockets
            idle, owner = deque(), os.getpid()
        try:
            connection = idle.pop()
        except IndexError:
            connection = pool.get_connection()
        try:
            if pack is None:
                connection.send_command(*args)
            else:  # what send_command does with hiredis, minus its per-argument pass
                connection.send_packed_command((pack(args),))
            return connection.read_response()
        except ResponseError:
            raise
        except BaseException:
            connection.disconnect()  # the next request on it reconnects
            raise
        finally:
            idle.append(connection)

    return execute


def async_script_executor(client: Any) -> Callable[..., Awaitable[Any]]:
    """:func:`script_executor` for ``redis.asyncio.Redis``."""
    if type(client) is not redis.asyncio.Redis or client.single_connection_client:
        return client.execute_command  # type: ignore[no-any-return]
    pool: Any = client.connection_pool

    async def execute(*args: Any) -> Any:
        connection: Any = await pool.get_connection()
        try:
            await connection.send_command(*args)
            return await connection.read_response()
        except ResponseError:
            raise
        except BaseException:
            await connection.disconnect()
            raise
        finally:
            await pool.release(connection)

    return execute
