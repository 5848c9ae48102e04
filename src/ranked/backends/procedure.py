"""The seam: a feature's atomic step, written once for Redis and once for memory, and
bound by the backend (``backend.bind(step)``) into the callable the feature calls.

A step is a :class:`Step` (a :class:`Call` builder for Redis and a typed reference on a
:class:`~ranked.engine.keyspace.Keyspace`) or an :class:`Operation` (a :class:`Procedure`:
a Lua script and its Python twin, plus the encoding of the call arguments). What ``bind``
hands back:

- on ``memory://`` the native implementation registered for the step (C engine), else its
  reference run under the backend's lock, over the keyspace;
- on Redis and Redis Cluster the call: its Lua script run by EVALSHA (EVAL on NOSCRIPT),
  or one command; atomic and one round trip; the cluster backends first check that every
  key shares one hash slot.

A procedure's twins take the same keys and arguments and return the same reply shape (what a Lua
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

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ..engine.keyspace import Keyspace
from ._scripts import Arg, Script, feature_script

__all__ = [
    "AsyncBound",
    "Bindable",
    "Bound",
    "Call",
    "Encode",
    "Local",
    "Operation",
    "Procedure",
    "Step",
    "answer",
]

T = TypeVar("T")

Local = Callable[[Keyspace, int, Sequence[bytes], Sequence[Arg]], Any]
"""The memory twin: ``(keyspace, now_us, keys, args) -> raw reply``."""


class Call(Generic[T]):
    """One round trip to Redis: a script (``script`` set) or a plain command (``args[0]``
    is its name), the keys it touches (the cluster backends check their slots) and the
    decoder of its reply. A call with neither a script nor arguments needs no round trip:
    ``decode(None)`` is the answer (see :func:`answer`)."""

    __slots__ = ("args", "decode", "keys", "script")

    def __init__(
        self,
        script: Script | None,
        keys: Sequence[bytes],
        args: Sequence[Arg],
        decode: Callable[[Any], T],
    ) -> None:
        self.script = script
        self.keys = keys
        self.args = args
        self.decode = decode

    @property
    def needs_io(self) -> bool:
        return self.script is not None or bool(self.args)


def answer(value: T) -> Call[T]:
    """The call that sends nothing and answers ``value`` (an empty read, a no-op)."""
    return Call(None, (), (), lambda _reply: value)


class Procedure(Generic[T]):
    """One atomic step: ``<package>/lua/<name>.lua`` plus its Python twin and decoder.

    ``native``: the name under which the memory backend may hold a native implementation
    of the same step (see :class:`Operation`); None when there is none.
    """

    __slots__ = ("decode", "local", "name", "native", "package")

    def __init__(
        self,
        package: str,
        name: str,
        local: Local,
        decode: Callable[[Any], T],
        *,
        native: str | None = None,
    ) -> None:
        self.package = package
        self.name = name
        self.local = local
        self.decode = decode
        self.native = native

    @property
    def script(self) -> Script:
        """The Lua script, read on first use (``memory://`` never needs it)."""
        return feature_script(self.package, self.name)

    def __repr__(self) -> str:
        return f"Procedure({self.script.name!r})"

    def call(self, keys: Sequence[bytes], args: Sequence[Arg], now_us: int | None) -> Call[T]:
        """The script call: ``ARGV[1]`` the instant (empty: the server's clock), then
        ``args``."""
        instant: Arg = b"" if now_us is None else now_us
        return Call(self.script, keys, (instant, *args), self.decode)


Encode = Callable[..., tuple[Sequence[bytes], Sequence[Arg], int | None]]
"""An operation's arguments -> ``(keys, script arguments after the instant, now_us)``."""

Bound = Callable[..., T]
"""What a backend hands back for an :class:`Operation`: called with the operation's own
arguments, it runs the step atomically and returns the decoded result."""

AsyncBound = Callable[..., Awaitable[T]]
"""The asyncio backends' :data:`Bound`."""


def _as_given(
    keys: Sequence[bytes], args: Sequence[Arg], now_us: int | None = None
) -> tuple[Sequence[bytes], Sequence[Arg], int | None]:
    return keys, args, now_us


@dataclass(frozen=True, slots=True, eq=False)
class Operation(Generic[T]):
    """A procedure with its static arguments, bound once per board / limiter / queue.

    A feature describes the step once: ``procedure`` (Lua script, Python reference,
    decoder) and ``encode``, which turns the operation's call arguments into the script's
    keys and arguments. ``backend.bind(operation)`` hands back a callable taking those
    call arguments:

    - Redis and Redis Cluster: ``encode``, then the script (one round trip, atomic);
    - memory: the native implementation registered under ``procedure.native`` when the C
      engine has one (it takes the call arguments as they are, and ``native_args``, the
      feature's static data and result constructors, so no lower layer imports a
      feature), else the reference under the backend's lock: ``direct`` when the feature
      gives it, or ``encode``, the procedure's twin and its decoder.

    Both give the same results; each feature's conformance suite runs on every backend and
    on both engines.
    """

    procedure: Procedure[T]
    encode: Encode
    native_args: Mapping[str, Any] = field(default_factory=dict)
    """What the native implementation needs beyond the keyspace and the lock."""
    native_ok: bool = True
    """False: the reference runs even where native code exists (:meth:`raw`)."""
    direct: Callable[..., T] | None = None
    """The same step in call form, ``(keyspace, *call arguments) -> result``, when the
    feature has one (its in-process core, which the twin also calls): memory runs it
    instead of encoding, running the twin and decoding its reply."""

    writes: ClassVar[bool] = True

    @classmethod
    def raw(cls, procedure: Procedure[T]) -> Operation[T]:
        """The operation whose call arguments are the script's own: ``(keys, args,
        now_us=None)``; ``now_us`` None is the backend's clock (Redis: the server's). It
        takes no native shortcut: native code takes the operation's arguments, not the
        script's."""
        return cls(procedure, _as_given, native_ok=False)

    @property
    def native(self) -> str | None:
        """The name of the procedure's native implementation, if it has one."""
        return self.procedure.native if self.native_ok else None

    def call(self, *args: Any) -> Call[T]:
        """The script call for these call arguments (``ARGV[1]`` the instant)."""
        keys, arguments, now_us = self.encode(*args)
        return self.procedure.call(keys, arguments, now_us)

    @property
    def reference(self) -> Callable[..., T]:
        """The Python reference, ``(keyspace, *call arguments) -> result`` (the caller
        holds the lock): :attr:`direct`, else the twin through ``encode`` and ``decode``."""
        return self._twin if self.direct is None else self.direct

    def _twin(self, keyspace: Keyspace, *args: Any) -> T:
        keys, arguments, now_us = self.encode(*args)
        now = keyspace.now_us() if now_us is None else now_us
        procedure = self.procedure
        return procedure.decode(procedure.local(keyspace, now, keys, arguments))


@dataclass(frozen=True, slots=True, eq=False)
class Step(Generic[T]):
    """An operation given by its two forms directly, for steps whose arguments and
    results are typed values rather than script arguments and replies:

    - ``call``: call arguments -> the :class:`Call` Redis runs (its script, keys,
      arguments and reply decoder; :func:`answer` when nothing needs sending);
    - ``reference``: ``(keyspace, *call arguments) -> result``, the same step on the
      memory backend's keyspace, run under its lock. It reads and writes the engine's
      values directly, so a read pays for no reply encoding.

    ``writes``: False for a step that only reads (memory skips its write housekeeping).
    ``native`` and ``native_args``: as for :class:`Operation`. The conformance suites run
    both forms (and the native one) on every backend.
    """

    call: Callable[..., Call[T]]
    reference: Callable[..., T]
    writes: bool = True
    native: str | None = None
    native_args: Mapping[str, Any] = field(default_factory=dict)


class Bindable(Protocol[T]):
    """What ``backend.bind`` takes: an :class:`Operation` or a :class:`Step`."""

    @property
    def writes(self) -> bool: ...

    @property
    def native(self) -> str | None: ...

    @property
    def native_args(self) -> Mapping[str, Any]: ...

    def call(self, *args: Any) -> Call[T]: ...

    @property
    def reference(self) -> Callable[..., T]:
        """``(keyspace, *call arguments) -> result``, run under the backend's lock."""
        ...
