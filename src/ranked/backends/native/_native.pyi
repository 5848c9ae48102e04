"""The memory backend's native procedures (``ranked.backends.native._native``).

Built from the C files beside this stub; they reach the engine's sorted sets through its
C API (``src/ranked/engine/zset_capi.h``). Each type is built by the factory of its feature
in this package from an :class:`~ranked.backends.procedure.Operation`'s ``native_args``.
"""

import threading
from collections.abc import Callable, Generator
from typing import Any, Literal

from ...engine._zset import SortedSet

class RateDecider:
    """One memory rate-limiter decision per call (``src/ranked/backends/native/rl_fast.c``).

    Built once per limiter by ``ranked.backends.native.ratelimit.factory`` from the
    operation's ``native_args`` (see that module): ``algorithm`` 0-4, ``clock_mode`` 0
    (``time.time_ns``), 1 (the keyspace's clock) or 2 (``clock``, the limiter's),
    ``numbers`` = (limit, window us, window ms, capacity), ``floats`` = (rate, interval,
    tolerance), the keyspace, its lock, the feature's identity -> keys cache and its
    ``keys`` / ``args`` (which raise the typed errors), the algorithm's Python core (it
    decides whatever the C code does not take: values beyond +-2**52, fields of unusual
    types, a clock stepped back under the log), the cell type with its ``__slots__``
    names in the order the C core reads them, the WRONGTYPE error factory, and
    ``check_clock`` with ``clock_max``: a limiter clock's reading that is not a float in
    ``[0, clock_max]`` is passed to ``check_clock``, which raises for one out of range.
    Integers of 2**52 or more in ``numbers``, or an unknown algorithm or clock mode,
    raise ``ValueError``.

    ``decide(identity, cost, consume)`` returns exactly what the procedure's Python
    reference returns, raises the same errors, and leaves the same state.
    """

    def __init__(
        self,
        algorithm: int,
        clock_mode: int,
        numbers: tuple[int, int, int, int],
        floats: tuple[float, float, float],
        policy: object,
        decision_type: type,
        keyspace: object,
        lock: object,
        identities: dict[Any, Any],
        plan_keys: Callable[[Any], Any],
        plan_args: Callable[[Any, Any], Any],
        clock: object,
        core: Callable[..., Any],
        cell_type: type,
        slot_names: tuple[str, ...],
        wrongtype: Callable[[], BaseException],
        check_clock: Callable[[object], object],
        clock_max: float,
        /,
    ) -> None: ...
    def __call__(self, identity: str | bytes, cost: int, consume: int, /) -> Any:
        """The decision (a ``Decision``) of one hit (``consume`` 1) or peek (0)."""

class BoardWriter:
    """One-call submit of a plain all-time board on a memory backend (see
    ``ranked/backends/native/board.py``). It keeps exact ``bytes`` /
    ``str`` copies of ``key`` and ``window`` (a subclass's methods never run)."""

    def __init__(
        self,
        keyspace_vars: dict[str, Any],
        key: bytes,
        window: str,
        reverse: bool,
        style: str,
        operator: str,
        lock: Any,
        housekeeping: Callable[[], object],
        every: int,
        result_type: type[tuple[Any, ...]],
        submission_type: type[tuple[Any, ...]],
        seq_key: bytes | None = None,
    ) -> None: ...
    def __call__(self, *args: Any) -> tuple[Any, ...] | None:
        """``(member, score, operator)``; with ``seq_key``: ``(after, last, member, score,
        operator)``."""

class BoardReader:
    """One-call read of one member's entry on a plain all-time board on a memory
    backend (``board_read.c``; see ``ranked/backends/native/board.py``)."""

    def __init__(
        self,
        keyspace_vars: dict[str, Any],
        key: bytes,
        reverse: bool,
        style: str,
        lock: Any,
        entry_type: type[tuple[Any, ...]],
    ) -> None: ...
    def __call__(self, member: Any, /) -> tuple[Any, ...] | Literal[False] | None:
        """The member's entry, None when absent, False: run the general path."""

class BoardSubmit:
    """A board's ``submit`` as one C call (``board_method.c``): runs ``writer`` for a
    plain call, else (or when the writer answers None) ``fallback``, the bound
    ``Leaderboard.submit``, with the arguments as given."""

    def __init__(self, fallback: Callable[..., Any]) -> None: ...
    writer: BoardWriter | None
    @property
    def __wrapped__(self) -> Callable[..., Any]: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

def board_rank(zset: SortedSet, member: bytes, style: str, reverse: bool, /) -> int | None:
    """The fused write's rank of ``member`` in ``style`` (None if absent): the same
    as ``zset.rank(member, style=style, reverse=reverse)``."""

class QueueLane:
    """A memory queue's push, pop or pop_with_priority in C
    (``src/ranked/backends/native/queue_lane.c``), built per bound operation by
    ``ranked.backends.native.queue.factory``: the plain cases under the backend's lock,
    straight on the ready set's core; any other call or key state goes to ``reference``
    (the operation's own, with the lane's positional arguments)."""

    def __init__(
        self,
        kind: int,
        keyspace: Any,
        lock: threading.Lock,
        wakeup: Any,
        keys: tuple[bytes, ...],
        text: bool,
        reference: Callable[..., Any],
        max_timeout: float,
    ) -> None:
        """``kind``: 0 push, 1 pop, 2 pop_with_priority, 3 push_many, 4 pop_many;
        ``keyspace``: a ``Keyspace`` (its ``_values`` and ``_deadlines`` tables are read
        on every call); ``wakeup``: the queue's ``Wakeup``; ``keys``: ready, seq,
        delayed, leases, attempts; ``max_timeout``: the longest timeout ``reference``
        accepts (seconds). A lane is initialised once: a second ``__init__`` raises
        ``TypeError``, and so does calling a lane made by ``QueueLane.__new__`` alone."""

    def __call__(self, *args: Any) -> Any:
        """The operation: push(item, priority, delay, at, now_us) -> None;
        pop(timeout, now_us) -> the item / (item, priority) / None;
        push_many(pairs, delay, at, now_us) -> int; pop_many(count, now_us) -> items."""

    @property
    def method(self) -> Callable[..., Any]:
        """The same step taking the queue method's signature (``push``, ``pop`` or
        ``pop_with_priority`` below, whichever the lane runs)."""

    def push(
        self,
        item: bytes | str,
        priority: float = 0.0,
        *,
        delay: float | None = None,
        at: float | None = None,
        now_us: int | None = None,
    ) -> None:
        """``Queue.push``, on a push lane."""

    def pop(self, timeout: float | None = None, *, now_us: int | None = None) -> Any:
        """``Queue.pop``, on a pop lane."""

    def pop_with_priority(self, timeout: float | None = None, *, now_us: int | None = None) -> Any:
        """``Queue.pop_with_priority``, on a pop_with_priority lane."""

class Ready:
    """The finished result of a call made through :class:`AwaitNow`; await it once."""

    def __await__(self) -> Generator[Any, None, Any]: ...
    def __iter__(self) -> Ready: ...
    def __next__(self) -> Any: ...

class AwaitNow:
    """``AwaitNow(func)``: called like ``func``, runs it at once and returns a
    :class:`Ready` of its result (its exception is raised at the await)."""

    func: Callable[..., Any]

    def __init__(self, func: Callable[..., Any], /) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Ready: ...

class Locked:
    """``Locked(func, keyspace, lock, every, expire)``: called with a step's arguments,
    runs ``func(keyspace, *args)`` holding ``lock``; every ``every``-th call (0: never)
    first runs ``expire()``, the backend's active expiry."""

    func: Callable[..., Any]

    def __init__(
        self,
        func: Callable[..., Any],
        keyspace: Any,
        lock: Any,
        every: int,
        expire: Callable[[], Any] | None,
        /,
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

class GuardCheck:
    """The write guard's check step on memory (``src/ranked/backends/native/guard_check.c``).

    Built once per guarded board by ``ranked.backends.native.guard.factory`` from the
    operation's ``native_args`` (see that module): the keyspace, its lock, the active
    expiry's share (``every`` calls, ``expire``), whether the keyspace's clock is
    ``time.time``, the two limiters' deciders (or None), the reader of a member's state
    found in the keyspace, the pending tier's helper, the reply's decoder (None: the raw
    reply) and the decoded reply's type (with it, the C code decodes its own replies).

    ``check(keys, args, now_us=None)`` returns exactly what the procedure's Python
    reference returns and raises the same errors; it keeps the member's history, the
    nonces and a per-member limit of fixed state in the board's native tables
    (:func:`guard_state`). A call of another shape than the guard's raises TypeError.
    """

    def __init__(
        self,
        keyspace: object,
        lock: object,
        every: int,
        expire: Callable[[], object],
        system_clock: bool,
        player: RateDecider | None,
        ip: RateDecider | None,
        restored: Callable[[Any], Any],
        tier: Callable[..., Any],
        decode: Callable[[Any], Any] | None,
        checked: type | None = None,
        /,
    ) -> None: ...
    def __call__(self, keys: Any, args: Any, now_us: int | None = None, /) -> Any:
        """The check's reply (decoded when a decoder was given)."""

def guard_state(
    keyspace: object, /
) -> dict[bytes, tuple[dict[bytes, Any], dict[bytes, int], dict[bytes, Any]]]:
    """The write guard's native tables on ``keyspace``: for each board's held key, its
    records (state key -> ``(has_stats, last, base, bt, n, mean, m2, limiter key or
    None, limit or None)``), its nonces (nonce key -> deadline ms) and its IPs' limits
    (limiter key -> limit or None); a limit is ``(value, value_is_int, aux, deadline
    ms)``. Expired entries are included."""

def guard_promote(
    keyspace: object,
    held_key: bytes,
    state_key: bytes,
    score: float,
    now_us: int,
    restored: Callable[[Any], Any],
    /,
) -> None:
    """A promoted score counted in its member's history in the guard's native tables."""
