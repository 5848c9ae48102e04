"""The in-process twins of the limiter scripts in ``lua/``: the same decisions, native state.

Each ``<algorithm>(params)`` builds the decision core of one ``lua/<algorithm>.lua`` for one
policy: ``core(keyspace, now_us, now_ms, keys, cost, consume) -> Decision``, run under the
memory backend's lock. :func:`direct` wraps it as the operation's step in call form (what
``memory://`` runs without the C engine), :func:`twin` as the procedure's script-shaped
Python twin (the same reply as the Lua script; memory runs it for raw script calls).
The C decider (``ranked/backends/native/rl_cores.c``) is the same cores in C; it is built
from :func:`native_args`, and for its rare cases (numbers beyond +-2**52, a clock stepped
back under the log) it calls these cores themselves. PEP 399: the Python code is the
reference, ``tests/ratelimit/test_native_twin.py`` holds the C code to it.

The arithmetic mirrors the Lua line by line: integers stay integers where both sides are
exact, and every fractional quantity is a float computed in the same order as Lua's
doubles, so both give bit-identical replies (the conformance suite checks this at explicit
instants). Only the state's form differs: Redis keeps strings it must parse and format on
every decision; memory keeps the numbers themselves in a :class:`Cell` (a hash to every
Redis command, so TYPE, DEL, TTL and expiry treat it as any key). Each key's deadline is
the one the script sets with ``PX`` (counted from the backend's clock), written only when
it moves. The sliding log keeps its entries in time order in one cell at its first key
(the second, Redis' running total, is not needed: the cell holds the total).
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections import deque
from collections.abc import Callable, Sequence
from math import ceil, floor
from time import time_ns
from typing import Any, ClassVar, Final

from ..engine.commands.common import WRONGTYPE
from ..engine.keyspace import Keyspace
from ..errors import ResponseError
from .policy import ALGORITHMS, Algorithm, Policy
from .result import Decision

__all__ = ["CELLS", "CORES", "Cell", "Core", "Direct", "direct", "native_args", "twin"]

# The reference's share of the keyspace's active expiry, as the C decider's
# (rl_fast.h: EXPIRY_EVERY_MASK, EXPIRY_DELETES).
_EXPIRY_EVERY_MASK: Final = 7
_EXPIRY_DELETES: Final = 16

Core = Callable[[Keyspace, int, int, Sequence[bytes], int, int], Decision]
"""``(keyspace, now_us, now_ms, keys, cost, consume) -> reply``; ``now_ms`` is the
backend's clock (deadlines count from it), ``now_us`` the decision's instant."""


class Cell(dict[bytes, bytes]):
    """A limiter's state on memory: numbers in slots; as a hash, one field naming it."""

    __slots__ = ()
    KIND: ClassVar[bytes] = b""

    def __init__(self) -> None:
        super().__init__({b"ranked": self.KIND})  # never empty: the keyspace drops empties


class WindowCell(Cell):
    __slots__ = ("count", "start")
    KIND = b"fixed_window state"
    start: int
    count: int


class LogCell(Cell):
    __slots__ = ("entries", "total")
    KIND = b"sliding_log state"
    entries: deque[tuple[int, int]]
    """(instant us, cost) of every admitted hit still kept, oldest first."""
    total: int


class CounterCell(Cell):
    __slots__ = ("cur", "index", "prev")
    KIND = b"sliding_counter state"
    index: int
    cur: int
    prev: int


class BucketCell(Cell):
    __slots__ = ("last", "tokens")
    KIND = b"token_bucket state"
    tokens: float
    last: int


class TatCell(Cell):
    __slots__ = ("tat",)
    KIND = b"gcra state"
    tat: float


def _wrongtype() -> ResponseError:
    return ResponseError(WRONGTYPE)


def _ms(us: float) -> int:
    """Whole milliseconds, rounded up: the scripts' ``ceil(us / 1000)``."""
    return ceil(us / 1000)


def fixed_window(policy: Policy) -> Core:
    limit, window, new = policy.limit, policy.window_us, tuple.__new__
    window_ms = _ms(window)

    def core(
        ks: Keyspace, now: int, now_ms: int, keys: Sequence[bytes], cost: int, consume: int
    ) -> Decision:
        key = keys[0]
        start, count = now, 0
        cell = ks.get_at(key, now_ms)
        if cell is not None:
            if type(cell) is not WindowCell:
                raise _wrongtype()
            if now < cell.start + window:
                start, count = cell.start, cell.count
        expires = start + window
        if count + cost > limit:
            retry = (expires - now) / 1e6
            return new(Decision, (False, limit, limit - count, retry, retry, policy))
        count += cost
        if consume and cost > 0:
            if cell is None:
                cell = WindowCell()
                ks.store(key, cell)
            cell.count = count
            if start == now:  # a new window: its end is the key's deadline
                cell.start = start
                ks.keep_deadline(key, now_ms + window_ms)
        reset = (expires - now) / 1e6 if count > 0 else 0.0
        return new(Decision, (True, limit, limit - count, reset, None, policy))

    return core


def sliding_log(policy: Policy) -> Core:
    limit, window, new = policy.limit, policy.window_us, tuple.__new__

    def core(
        ks: Keyspace, now: int, now_ms: int, keys: Sequence[bytes], cost: int, consume: int
    ) -> Decision:
        key = keys[0]
        cutoff = now - window
        cell = ks.get_at(key, now_ms)
        entries: deque[tuple[int, int]] | None = None
        total = stale = 0
        if cell is not None:
            if type(cell) is not LogCell:
                raise _wrongtype()
            entries, total = cell.entries, cell.total
            if entries[0][0] <= cutoff:  # the oldest tells if any is stale
                for instant, units in entries:
                    if instant > cutoff:
                        break
                    stale += units
                total -= stale

        allowed = total + cost <= limit
        if allowed:
            total += cost
        newest = now if allowed and cost > 0 else None
        if entries and (newest is None or entries[-1][0] > newest):
            newest = entries[-1][0]
        reset = newest + window - now if total > 0 and newest is not None else 0

        if consume and ((allowed and cost > 0) or stale > 0):
            if stale > 0:
                assert entries is not None
                while entries and entries[0][0] <= cutoff:
                    entries.popleft()
            if allowed and cost > 0:
                if entries is None:
                    entries = deque()
                    cell = LogCell()
                    cell.entries = entries
                    ks.store(key, cell)
                if entries and now < entries[-1][0]:  # the clock stepped back: keep order
                    bisect.insort(entries, (now, cost))
                else:
                    entries.append((now, cost))
            if total > 0:
                assert isinstance(cell, LogCell)
                cell.total = total
                ks.keep_deadline(key, now_ms + _ms(reset))
            else:
                ks.delete(key)
        if allowed:
            return new(Decision, (True, limit, limit - total, reset / 1e6, None, policy))

        # Denied: the oldest live entries must expire until `cost` fits.
        need = total + cost - limit
        for instant, units in entries or ():
            if instant > cutoff:
                need -= units
                if need <= 0:
                    retry = (instant + window - now) / 1e6
                    return new(Decision, (False, limit, limit - total, reset / 1e6, retry, policy))
        # inconsistent state: a whole window
        return new(Decision, (False, limit, limit - total, reset / 1e6, window / 1e6, policy))

    return core


def sliding_counter(policy: Policy) -> Core:
    limit, window, new = policy.limit, policy.window_us, tuple.__new__

    def core(
        ks: Keyspace, now: int, now_ms: int, keys: Sequence[bytes], cost: int, consume: int
    ) -> Decision:
        # Instants as offsets from the window's start: small ints, the same values the
        # script computes from absolute ones (every intermediate is exact below 2**53).
        key = keys[0]
        index, offset = divmod(now, window)
        cur = prev = 0
        cell = ks.get_at(key, now_ms)
        if cell is not None:
            if type(cell) is not CounterCell:
                raise _wrongtype()
            if cell.index >= index:
                cur, prev = cell.cur, cell.prev
            elif cell.index == index - 1:
                prev = cell.cur
        # `* 1.0` (float()): Lua multiplies doubles, and so must the twin
        now_estimate = prev * 1.0 * (window - offset) / window + cur
        if now_estimate + cost > limit:
            reset = 2 * window - offset if cur > 0 else (window - offset if prev > 0 else 0)
            room = limit - cost - cur
            if room >= 0:
                at = ceil(window - room * 1.0 * window / prev)
            else:
                at = window + ceil(window - (limit - cost) * 1.0 * window / cur)
            while (  # float rounding may land a microsecond early: step until it fits
                prev * 1.0 * (window - at) / window + cur + cost
                if at < window
                else cur * 1.0 * (window - (at - window)) / window + cost
            ) > limit:
                at += 1
            remaining = floor(limit - now_estimate)
            retry = (at - offset if at - offset > 1 else 1) / 1e6
            return new(
                Decision,
                (False, limit, remaining if remaining > 0 else 0, reset / 1e6, retry, policy),
            )
        cur += cost
        reset = 2 * window - offset if cur > 0 else (window - offset if prev > 0 else 0)
        if consume and cost > 0:
            if cell is None:
                cell = CounterCell()
                ks.store(key, cell)
                cell.index = index - 2  # no window yet
            if cell.index != index:  # a new window: its counts and deadline (else kept)
                cell.index, cell.prev = index, prev
                ks.keep_deadline(key, now_ms + ceil((2 * window - offset) / 1000))
            cell.cur = cur
        remaining = floor(limit - (now_estimate + cost))
        return new(
            Decision, (True, limit, remaining if remaining > 0 else 0, reset / 1e6, None, policy)
        )

    return core


def token_bucket(policy: Policy) -> Core:
    limit, window, burst, new = policy.limit, policy.window_us, policy.capacity, tuple.__new__
    rate = limit / window

    def core(
        ks: Keyspace, now: int, now_ms: int, keys: Sequence[bytes], cost: int, consume: int
    ) -> Decision:
        key = keys[0]
        tokens: float = burst
        cell = ks.get_at(key, now_ms)
        if cell is not None:
            if type(cell) is not BucketCell:
                raise _wrongtype()
            tokens = cell.tokens
            elapsed = now - cell.last
            if elapsed > 0:
                tokens = min(tokens + elapsed * rate, burst)
        if tokens < cost:
            reset = ceil((burst - tokens) / rate) / 1e6
            retry = ceil((cost - tokens) / rate) / 1e6
            return new(Decision, (False, limit, floor(tokens), reset, retry, policy))
        tokens -= cost
        reset = ceil((burst - tokens) / rate)
        if consume and cost > 0:
            if cell is None:
                cell = BucketCell()
                ks.store(key, cell)
            cell.tokens, cell.last = tokens, now
            ks.keep_deadline(key, now_ms + _ms(reset))
        return new(Decision, (True, limit, floor(tokens), reset / 1e6, None, policy))

    return core


def gcra(policy: Policy) -> Core:
    limit, window, burst, new = policy.limit, policy.window_us, policy.capacity, tuple.__new__
    interval = window / limit
    tolerance = interval * burst

    def core(
        ks: Keyspace, now: int, now_ms: int, keys: Sequence[bytes], cost: int, consume: int
    ) -> Decision:
        key = keys[0]
        tat: float = now
        cell = ks.get_at(key, now_ms)
        if cell is not None:
            if type(cell) is not TatCell:
                raise _wrongtype()
            if cell.tat > now:
                tat = cell.tat
        new_tat = tat + cost * interval
        early = new_tat - tolerance - now
        if early > 0:
            ttl = tat - now
            remaining = max(0, floor((tolerance - ttl) / interval))
            reset, retry = ceil(ttl) / 1e6, ceil(early) / 1e6
            return new(Decision, (False, limit, remaining, reset, retry, policy))
        ttl = new_tat - now
        if consume and cost > 0:
            if cell is None:
                cell = TatCell()
                ks.store(key, cell)
            cell.tat = new_tat
            ks.keep_deadline(key, now_ms + _ms(ttl))
        remaining = max(0, floor((tolerance - ttl) / interval))
        return new(Decision, (True, limit, remaining, ceil(ttl) / 1e6, None, policy))

    return core


CORES: dict[Algorithm, Callable[[Policy], Core]] = {
    "fixed_window": fixed_window,
    "sliding_log": sliding_log,
    "sliding_counter": sliding_counter,
    "token_bucket": token_bucket,
    "gcra": gcra,
}
"""The core of each algorithm, made for one policy."""


CELLS: dict[Algorithm, tuple[type[Cell], tuple[str, ...]]] = {
    "fixed_window": (WindowCell, ("start", "count")),
    "sliding_log": (LogCell, ("entries", "total")),
    "sliding_counter": (CounterCell, ("index", "cur", "prev")),
    "token_bucket": (BucketCell, ("tokens", "last")),
    "gcra": (TatCell, ("tat",)),
}
"""The cell of each algorithm and its fields, in the order the C cores read them."""


def native_args(policy: Policy) -> dict[str, Any]:
    """What the C decider needs to make ``policy``'s decisions as its core here does:

    - ``algorithm``: the index in :data:`ALGORITHMS` (the C cores' numbering);
    - ``numbers``: ``(limit, window_us, window_ms, capacity)``, ``window_ms`` rounded up
      as the cores' deadlines are (:func:`_ms`);
    - ``floats``: ``(rate, interval, tolerance)`` by the expressions of
      :func:`token_bucket` and :func:`gcra`, so the C code starts from the same doubles;
    - ``policy`` and ``decision``: the last field of every result, and its type;
    - ``core``: this policy's Python core, for what the C code hands back (rare cases);
    - ``cell`` and ``fields``: the algorithm's :class:`Cell` type and its fields
      (:data:`CELLS`); ``wrongtype``: the WRONGTYPE error's factory.
    """
    window = policy.window_us
    interval = window / policy.limit
    cell, fields = CELLS[policy.algorithm]
    return {
        "algorithm": ALGORITHMS.index(policy.algorithm),
        "numbers": (policy.limit, window, _ms(window), policy.capacity),
        "floats": (policy.limit / window, interval, interval * policy.capacity),
        "policy": policy,
        "decision": Decision,
        "core": CORES[policy.algorithm](policy),
        "cell": cell,
        "fields": fields,
        "wrongtype": _wrongtype,
    }


Direct = Callable[[Keyspace, Any, Any, int], Decision]
"""``(keyspace, identity, cost, consume) -> Decision``: the operation's step in call form."""


def direct(
    core: Core,
    capacity: int,
    identities: dict[str | bytes, tuple[bytes, ...]],
    keys: Callable[[Any], tuple[bytes, ...]],
    args: Callable[[Any, int], object],
    now_us: Callable[[], int | None] | None,
) -> Direct:
    """The limiter's decision in call form (``Operation.direct``): what memory runs under
    its lock without the C engine, in place of encoding, the twin and its reply. The
    steps and the state are the C decider's (``rl_fast.c``), which is its twin:
    ``identities`` (the plan's identity -> keys cache, read directly) else ``keys`` for
    the keys, ``args`` for a cost that is not an int in ``[0, capacity]`` (it raises the
    typed error), the same share of the keyspace's active expiry, one clock reading
    (``now_us``: the limiter's clock, checked, with the keyspace's for deadlines; None:
    the keyspace's, read as integer nanoseconds when it is the system clock), then
    ``core``. A cost of 0 only reports. O(1) plus the core."""
    # every 8th decision takes the share (small ints from a cycle: no counter to grow)
    share = itertools.cycle((False,) * _EXPIRY_EVERY_MASK + (True,))
    clocked: Keyspace | None = None  # the keyspace whose clock `read` is
    read: Callable[[], float] = time.time
    system = True

    def decide(ks: Keyspace, identity: Any, cost: Any, consume: int) -> Decision:
        nonlocal clocked, read, system
        try:
            found = identities[identity]
        except (KeyError, TypeError):  # a new identity, or not even hashable
            found = keys(identity)
        if cost.__class__ is not int or cost < 0 or cost > capacity:
            args(cost, consume)  # raises the typed error
        if next(share):
            ks.expire_pending(_EXPIRY_DELETES)
        if now_us is not None:
            now = now_us()
            assert now is not None
            return core(ks, now, ks.now_ms(), found, cost, consume if cost else 0)
        if ks is not clocked:
            clocked, read = ks, ks.clock
            system = read is time.time
        if system:  # integer nanoseconds: no float products to floor
            ns = time_ns()
            return core(ks, ns // 1000, ns // 1_000_000, found, cost, consume if cost else 0)
        reading = read()
        return core(
            ks, floor(reading * 1e6), floor(reading * 1e3), found, cost, consume if cost else 0
        )

    return decide


def twin(policy: Policy) -> Callable[[Keyspace, int, Sequence[bytes], Sequence[Any]], list[int]]:
    """The Python reference of ``policy``'s script (the procedure's ``local``): arguments
    ``(cost, consume, *policy_args(policy))``, the reply as the script's list. The core's
    decision is turned back into that reply exactly (every duration is a whole number of
    us), which the procedure's decoder turns into the same Decision again.

    Like the C decider, it takes its share of the keyspace's active expiry: every 8
    decisions up to 16 expired keys, two per decision, so the keys of identities never
    seen again go even when every decision makes a new key."""
    core = CORES[policy.algorithm](policy)
    decisions = 0

    def local(ks: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> list[int]:
        nonlocal decisions
        decisions += 1
        if not decisions & _EXPIRY_EVERY_MASK:
            ks.expire_pending(_EXPIRY_DELETES)
        decision = core(ks, now, ks.now_ms(), keys, args[0], args[1])
        retry = decision.retry_after
        return [
            decision.remaining,
            round(decision.reset_after * 1e6),
            -1 if retry is None else round(retry * 1e6),
        ]

    return local
