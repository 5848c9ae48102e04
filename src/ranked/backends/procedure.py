"""Procedures: a feature's atomic step, written once for Redis (Lua) and once for memory.

The leaderboard's operations are methods of the backend contract. Rate limiters and queues
need steps of their own (a GCRA decision, a lease), and adding each as a method would touch
every backend class; instead a feature hands a :class:`Procedure` to ``backend.run``:

- on ``memory://`` its Python twin runs under the backend's lock, over the keyspace;
- on Redis and Redis Cluster its Lua script runs by EVALSHA (EVAL on NOSCRIPT): atomic and
  one round trip; the cluster backends first check that every key shares one hash slot.

Both twins take the same keys and arguments and return the same reply shape (what a Lua
script returns through RESP2: integers as ``int``, strings as ``bytes``, tables as
``list``, nil as ``None``), so one ``decode`` serves both and the conformance suite proves
they agree. A Lua number becomes an integer reply with its fraction cut off (exact up to
2**53; ``tostring`` would print only 14 digits): return fractions as strings made with
``string.format('%.17g', x)``.

Time: the first script argument (``ARGV[1]``) is the instant in Unix microseconds, or the
empty string for "now": the script then reads the server's ``TIME``, so every client of one
server shares one clock. Scripts read it with ``local now = instant_us(ARGV[1])``: the
loader puts the helpers of ``ranked/backends/lua/_lib.lua`` a script calls in front of
it. The memory twin receives the instant as ``now_us`` (the backend's clock unless the
caller gave one). Callers pass an explicit instant only in tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from ..engine.keyspace import Keyspace
from ._scripts import Arg, Script, feature_script

__all__ = ["Local", "Procedure"]

T = TypeVar("T")

Local = Callable[[Keyspace, int, Sequence[bytes], Sequence[Arg]], Any]
"""The memory twin: ``(keyspace, now_us, keys, args) -> raw reply``."""


class Procedure(Generic[T]):
    """One atomic step: ``<package>/lua/<name>.lua`` plus its Python twin and decoder."""

    __slots__ = ("decode", "local", "name", "script")

    def __init__(self, package: str, name: str, local: Local, decode: Callable[[Any], T]) -> None:
        self.name = name
        self.local = local
        self.decode = decode
        self.script: Script = feature_script(package, name)

    def __repr__(self) -> str:
        return f"Procedure({self.script.name!r})"
