"""The Lua scripts of the Redis backends: loaded from package files, run by EVALSHA.

Each script is ``<package>/lua/<name>.lua`` with the helpers it calls put in front of it (a
Redis script cannot import another): first those of the backends' ``lua/_lib.lua``, then
those of the package's own ``lua/_lib.lua`` when it has one. Only the helpers a script needs (and
those they need) go in, in the library's order: Redis runs a script's whole text on every
call, so each unused helper would cost a closure per call. A script runs as ``EVALSHA`` (the SHA1 of
that combined text); a server that does not know it (first use, restart, ``SCRIPT
FLUSH``, a new cluster node) answers ``NOSCRIPT``, and the same call is repeated once as
``EVAL`` with the full text, which also caches it on that server. Both commands carry the
keys, so Redis Cluster clients route them to the node owning the keys' slot.

The same two functions serve every client (``redis.Redis``, ``redis.cluster.RedisCluster``
and their ``redis.asyncio`` twins): they only need the client's ``execute_command``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Sequence
from functools import cache
from importlib import resources
from typing import Final

__all__ = ["Arg", "Script", "feature_script", "run", "run_async", "script"]

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


def _read(package: str, file_name: str) -> bytes | None:
    path = resources.files(package).joinpath(_FOLDER, file_name)
    return path.read_bytes() if path.is_file() else None


_HELPER_MARK: Final = re.compile(rb"^--@ (\w+)\n", re.MULTILINE)


@cache
def _helpers(package: str) -> dict[bytes, bytes]:
    """The helper blocks a script of ``package`` may call, by name, in library order (the
    text after each mark): the backends' library, then the package's own."""
    text = _read(_PACKAGE, _LIBRARY) or b""
    if package != _PACKAGE:
        text += b"\n" + (_read(package, _LIBRARY) or b"")
    parts = _HELPER_MARK.split(text)
    return {parts[i]: parts[i + 1].strip() + b"\n" for i in range(1, len(parts), 2)}


def _calls(text: bytes, name: bytes) -> bool:
    return re.search(rb"\b" + name + rb"\(", text) is not None


def _needed(package: str, body: bytes) -> list[bytes]:
    """The helper blocks ``body`` calls, directly or through other helpers, in file order.
    A helper only calls helpers defined before it, so walking the library backwards
    sees every caller before its callees."""
    helpers = _helpers(package)
    wanted = [body]
    names = list(helpers)
    for name in reversed(names):
        if any(_calls(text, name) for text in wanted):
            wanted.append(helpers[name])
    chosen = set(wanted[1:])
    return [helpers[name] for name in names if helpers[name] in chosen]


@cache
def script(name: str) -> Script:
    """The script ``lua/<name>.lua`` with the helpers it calls in front (loaded once)."""
    body = _read(_PACKAGE, f"{name}.lua")
    assert body is not None, name
    return Script(name, b"".join(_needed(_PACKAGE, body)) + body)


@cache
def feature_script(package: str, name: str) -> Script:
    """A feature's own script ``<package>/lua/<name>.lua``, with the helpers it calls
    (the backends' ``instant_us``, the package's own) put in front."""
    body = _read(package, f"{name}.lua")
    assert body is not None, f"{package}:{name}"
    return Script(f"{package}:{name}", b"".join(_needed(package, body)) + body)


def _no_script() -> type[Exception]:
    """redis-py's NOSCRIPT error, imported when a script call fails (only a Redis backend
    runs scripts: ``memory://`` needs no redis-py)."""
    from redis.exceptions import NoScriptError

    return NoScriptError


Execute = Callable[..., object]
AsyncExecute = Callable[..., Awaitable[object]]


def run(execute: Execute, name: str | Script, keys: Sequence[bytes], args: Sequence[Arg]) -> object:
    """Run a script (by name, or a :class:`Script`) through a client's ``execute_command``:
    EVALSHA, EVAL on NOSCRIPT."""
    code = script(name) if isinstance(name, str) else name
    try:
        return execute("EVALSHA", code.sha, len(keys), *keys, *args)
    except _no_script():
        return execute("EVAL", code.source, len(keys), *keys, *args)


async def run_async(
    execute: AsyncExecute, name: str | Script, keys: Sequence[bytes], args: Sequence[Arg]
) -> object:
    """:func:`run` for an asyncio client."""
    code = script(name) if isinstance(name, str) else name
    try:
        return await execute("EVALSHA", code.sha, len(keys), *keys, *args)
    except _no_script():
        return await execute("EVAL", code.source, len(keys), *keys, *args)
