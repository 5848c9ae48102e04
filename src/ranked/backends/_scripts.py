"""The Lua scripts of the Redis backends: loaded from package files, run by EVALSHA.

Each script is ``lua/<name>.lua`` with ``lua/_lib.lua`` (shared helpers) put in front of
it, since a Redis script cannot import another. A script runs as ``EVALSHA`` (the SHA1 of
that combined text); a server that does not know it (first use, restart, ``SCRIPT
FLUSH``, a new cluster node) answers ``NOSCRIPT``, and the same call is repeated once as
``EVAL`` with the full text, which also caches it on that server. Both commands carry the
keys, so Redis Cluster clients route them to the node owning the keys' slot.

The same two functions serve every client (``redis.Redis``, ``redis.cluster.RedisCluster``
and their ``redis.asyncio`` twins): they only need the client's ``execute_command``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from functools import cache
from importlib import resources
from typing import Final

from redis.exceptions import NoScriptError

__all__ = ["Arg", "Script", "run", "run_async", "script"]

Arg = bytes | str | int | float
"""One argument as redis-py encodes it (floats by ``repr``: exact)."""

_PACKAGE: Final = "ranked.backends"
_FOLDER: Final = "lua"
_LIBRARY: Final = "_lib.lua"


class Script:
    """One script's full source (library included) and its SHA1, as EVALSHA wants it."""

    __slots__ = ("name", "sha", "source")

    def __init__(self, name: str, source: bytes) -> None:
        self.name = name
        self.source = source
        self.sha = hashlib.sha1(source, usedforsecurity=False).hexdigest()

    def __repr__(self) -> str:
        return f"Script({self.name!r}, sha={self.sha})"


def _read(file_name: str) -> bytes:
    return resources.files(_PACKAGE).joinpath(_FOLDER, file_name).read_bytes()


@cache
def script(name: str) -> Script:
    """The script ``lua/<name>.lua`` with the shared library in front (loaded once)."""
    body = _read(f"{name}.lua")
    return Script(name, _read(_LIBRARY) + b"\n" + body)


Execute = Callable[..., object]
AsyncExecute = Callable[..., Awaitable[object]]


def run(execute: Execute, name: str, keys: Sequence[bytes], args: Sequence[Arg]) -> object:
    """Run script ``name`` through a client's ``execute_command``: EVALSHA, EVAL on NOSCRIPT."""
    code = script(name)
    try:
        return execute("EVALSHA", code.sha, len(keys), *keys, *args)
    except NoScriptError:
        return execute("EVAL", code.source, len(keys), *keys, *args)


async def run_async(
    execute: AsyncExecute, name: str, keys: Sequence[bytes], args: Sequence[Arg]
) -> object:
    """:func:`run` for an asyncio client."""
    code = script(name)
    try:
        return await execute("EVALSHA", code.sha, len(keys), *keys, *args)
    except NoScriptError:
        return await execute("EVAL", code.source, len(keys), *keys, *args)
