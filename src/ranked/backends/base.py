"""The backend contract: a small set of high-level operations features are written against.

A backend stores sorted sets (and a few sets and hashes) and runs each operation below as
one step. Features (leaderboards, later rate limiters and queues) never talk to Redis or to
the engine directly: they build requests, call these operations, and shape the answers.

Implementations (every one gives identical answers; one conformance suite runs on all):

- ``memory://`` (:mod:`ranked.backends.memory`): the in-process engine. Each operation runs
  under one lock, so every operation is atomic.
- ``redis://``, ``rediss://``, ``unix://`` (:mod:`ranked.backends.redis`): each write
  operation, and each read that needs more than one command, is ONE Lua script (a ``.lua``
  package file, run by EVALSHA, reloaded on NOSCRIPT): atomic and one round trip.
- ``redis+cluster://`` (:mod:`ranked.backends.cluster`): as Redis. Every key of one request
  lies in one hash slot (a board's keys share a ``{hash tag}``, see
  :class:`ranked.core.keys.BoardKeys`), so every operation stays atomic and one round trip.

Conventions shared by every operation:

- Keys and members are ``bytes``. Scores are float64. ``-0.0`` is stored as ``0.0``.
- ``high_first``: True when a higher score is better (the board is read from the top,
  Redis ``REV``); False when lower is better.
- Ranks are 1-based in the requested :class:`~ranked.core.ranks.RankStyle`:
  unique = position in the board's order (ties by member bytes as Redis orders them, i.e.
  on a ``high_first`` board ties are in descending member order, like ZREVRANK);
  competition = 1 + members with a strictly better score;
  dense = 1 + distinct strictly better scores.
- A :class:`Target` names one sorted set plus the two companion keys the Redis backends keep
  to answer dense ranks in O(log n): a sorted set of the distinct scores and a hash
  score -> how many members have it. The memory backend ignores the companions (its engine
  answers dense ranks itself).
- Time: ``now_ms()`` is the backend's clock in Unix milliseconds: the local clock for memory
  (injectable for tests), the Redis server's clock (``TIME``, offset measured on connect and
  refreshed) for Redis. Features pass it to requests so one submission uses one instant.
- Tie values (secondary tie-break): a :class:`Target` may name a ``ties_key``, a hash
  member -> tie-break value (opaque bytes, compared by the feature, never by the backend).
  A submission carrying ``tie`` writes it there (HSET) in every target whose score it
  changed, in the same atomic step; members that leave a target (``remove``, or trimmed
  by ``keep``) lose their field (HDEL) in the same step. The ties hash gets the target's
  TTL like the companions.
- Exact scores (:func:`exact_score`, :func:`incremented`): an ``int`` value is stored only
  when a float64 holds it exactly (every int up to 2**53 in magnitude; beyond, only some);
  otherwise ``OutOfRangeError``. A float is taken as the float it is. An ``incr``/``decr``
  result of magnitude 2**53 or more must be the exact sum of the stored score and the
  value, else ``OutOfRangeError``: from there on neighbouring floats are 1 or more apart,
  so a rounded sum would drop whole units (at 2**53, ``+ 1`` would change nothing).
  Below 2**53 the float64 sum stands as IEEE arithmetic rounds it (only fractions round,
  as in ``0.1 + 0.2``; whole numbers there are always exact).
- Errors: a value that is not a finite number raises ``InvalidScoreError``; a composite score
  outside its budget, or a score that is not exact as above, raises
  ``ranked.errors.OutOfRangeError``; a server that cannot be reached raises
  :class:`BackendUnavailableError`. On error nothing changes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol, TypeVar

from ..core.ranks import RankStyle
from ..errors import InvalidScoreError, OutOfRangeError
from ._scripts import Arg
from .procedure import AsyncBound, Bound, Operation, Procedure

__all__ = [
    "EXACT_LIMIT",
    "MAX_POSITION",
    "AsyncBackend",
    "Backend",
    "Composite",
    "LexOperator",
    "LexOutcome",
    "Operator",
    "Row",
    "SubmitOutcome",
    "SubmitRequest",
    "Target",
    "exact_score",
    "incremented",
]

Operator = Literal["best", "set", "incr", "decr"]
LexOperator = Literal["set", "best"]

T = TypeVar("T")

Row = tuple[bytes, float, int]
"""(member, score, rank) as read from a board, rank in the requested style."""

EXACT_LIMIT: Final = 2**53
"""From this magnitude on, float64 values are 2 or more apart: not every integer exists."""

MAX_POSITION: Final = 2**53 - 1
"""The largest 0-based board position an operation reads: positions travel through Lua
numbers (exact up to 2**53) and no board holds that many members, so a read starting
beyond it is empty on every backend, with no round trip."""


def exact_score(value: int) -> float:
    """An ``int`` score as the float64 that holds it exactly, else ``OutOfRangeError``
    (2**53 + 1 would be stored as 2**53; 10**400 fits no float64 at all). O(1)."""
    try:
        stored = float(value)
    except OverflowError:
        digits = len(str(abs(value)))
        raise OutOfRangeError(
            f"an integer score of {digits} digits is beyond the float64 range"
        ) from None
    if stored != value:  # int == float compares exactly in Python
        raise OutOfRangeError(
            f"score {value} is not exact in a float64 (it would be stored as {int(stored)}); "
            f"integer scores are exact up to 2**53 = {EXACT_LIMIT}"
        )
    return stored


def incremented(stored: float, delta: float) -> float:
    """``stored + delta`` as an ``incr`` (``decr``: a negated ``delta``) leaves it: finite
    (else ``InvalidScoreError``) and, from magnitude 2**53 on, exact (else
    ``OutOfRangeError``); ``-0.0`` comes back as ``0.0``. The exactness test is Knuth's
    two-sum: the rounding error of ``a + b`` in float64 arithmetic is exactly
    ``(a - (s - b')) + (b - b')`` with ``s = a + b`` and ``b' = s - a``, and zero only
    when ``s`` is the exact sum. The Lua ``submit`` script and the C board writer apply
    the same test. O(1)."""
    total = stored + delta
    if not math.isfinite(total):
        raise InvalidScoreError(f"{stored!r} + {delta!r} gives {total!r}, not a finite number")
    if -EXACT_LIMIT < total < EXACT_LIMIT:
        return total + 0.0
    back = total - stored
    if (stored - (total - back)) + (delta - back) != 0:
        raise OutOfRangeError(
            f"{stored!r} + {delta!r} is not exact in a float64 (it would give {total!r}); "
            f"increments must stay exact from 2**53 = {EXACT_LIMIT} on"
        )
    return total + 0.0


@dataclass(frozen=True, slots=True)
class Target:
    """One sorted set to write or read, with its dense-rank companions (Redis only)."""

    key: bytes
    dense_key: bytes
    counts_key: bytes
    ttl_ms: int | None = None
    """On writes: the TTL (ms) to set on the key and its companions; None leaves them
    without expiry (all-time boards)."""
    ties_key: bytes | None = None
    """The hash member -> tie-break value kept in step with this set (same hash slot):
    written by submissions that carry ``tie`` and change the score, cleared for members
    removed or trimmed. None: no tie values (nothing is written or cleared)."""


@dataclass(frozen=True, slots=True)
class Composite:
    """Pack (integer score, achieved-at instant) into one exact float64 inside the script.

    Same arithmetic as :class:`ranked.core.scores.TimeTiebreak`, in integers of milliseconds:
    ``offset = (now_ms - epoch_ms) // unit_ms``; ``field = offset`` if ``lower_is_better``
    else ``2**time_bits - 1 - offset``; ``packed = score * 2**time_bits + field``. A score
    outside ``[-2**score_bits if signed else 0, 2**score_bits - 1]`` or an offset outside
    ``[0, 2**time_bits)`` raises ``OutOfRangeError``. ``incr``/``decr`` unpack the stored
    score (``packed // 2**time_bits``), add, and re-stamp with ``now_ms``; an ``incr`` or
    ``decr`` of 0 leaves a stored value as it is (no new time: the member keeps its place
    among equal scores, ``changed`` is False). A member without a value gets score 0 at
    ``now_ms``, as any first ``incr``.
    """

    score_bits: int
    time_bits: int
    epoch_ms: int
    unit_ms: int
    signed: bool = False
    lower_is_better: bool = False


@dataclass(slots=True)
class SubmitRequest:
    """One member's submission to every target (window) of one board, applied atomically.

    operator: best (keep the better of stored and submitted, by ``high_first``), set,
    incr (stored + value; a missing member counts from 0), decr (stored - value).
    composite: when set, ``value`` is an integer score packed with ``now_ms``.
    keep: when set, after the write each target keeps only its ``keep`` best members; the
    worst are removed (with their companions and their ``ties_key`` fields). A member
    removed this way reports ``rank=None``.
    tie: the member's tie-break value (opaque bytes): in every target that has a
    ``ties_key`` and whose stored score this submission changes (``changed=True``),
    ``HSET ties_key member tie`` in the same atomic step (with the target's TTL). A target
    whose score did not change keeps the value it had (the earlier achiever keeps its
    place). None writes no value.

    Not frozen: it is built on every submission, and frozen dataclasses construct slowly.
    """

    member: bytes
    value: float
    operator: Operator
    high_first: bool
    targets: tuple[Target, ...]
    style: RankStyle
    now_ms: int
    composite: Composite | None = None
    keep: int | None = None
    tie: bytes | None = None


@dataclass(slots=True)
class SubmitOutcome:
    """What a submission did to one target. Scores are the stored (packed) floats."""

    score: float
    previous_score: float | None
    rank: int | None
    previous_rank: int | None
    changed: bool


@dataclass(slots=True)
class LexOutcome:
    """What :meth:`Backend.lex_replace` did: the member's encodings and unique ranks."""

    previous: bytes | None
    """The encoding stored before (from the index), None when the member had none."""
    stored: bytes
    """The encoding stored now (the submitted one, or the kept previous one)."""
    previous_rank: int | None
    """1-based position of ``previous`` in board order before the write (None if absent)."""
    rank: int
    """1-based position of ``stored`` in board order after the write."""
    changed: bool
    """Whether the stored encoding changed."""


class Backend(Protocol):
    """Synchronous backend. Each method's docstring says its Redis equivalent; all are atomic
    on every backend unless the name ends in ``_nonatomic``."""

    url: str
    cross_slot: bool
    """True when one command may touch keys of different hash slots (memory, single Redis);
    False on Redis Cluster."""

    def now_ms(self) -> int:
        """The backend's clock, Unix ms (Redis: TIME, offset cached; no round trip)."""
        ...

    def submit(self, request: SubmitRequest) -> tuple[SubmitOutcome, ...]:
        """Apply one submission to all its targets; one outcome per target, in order.
        Redis: one script (ZSCORE, ZADD, companions, PEXPIRE, ranks)."""
        ...

    def submit_batch(self, requests: Sequence[SubmitRequest]) -> list[tuple[SubmitOutcome, ...]]:
        """Many submissions whose targets all share one hash slot, in order, atomically as a
        whole. Redis: one script call for the whole batch."""
        ...

    def ranks(
        self, target: Target, members: Sequence[bytes], high_first: bool, style: RankStyle
    ) -> list[tuple[float, int] | None]:
        """(score, rank) per member, None for members not on the board. O(k log n).
        Redis: one script (ZSCORE + ZCOUNT/ZREVRANK/dense lookups per member)."""
        ...

    def page(
        self, target: Target, start: int, stop: int, high_first: bool, style: RankStyle
    ) -> list[Row]:
        """Rows at 0-based positions start..stop inclusive in board order (no negative
        indexes; clamped to the board). Redis: one script (ZREVRANGE + first rank)."""
        ...

    def page_after(
        self,
        target: Target,
        score: float,
        member: bytes,
        count: int,
        high_first: bool,
        style: RankStyle,
    ) -> list[Row]:
        """Up to ``count`` rows strictly after the point (score, member) in board order; the
        point need not be on the board (cursor paging that survives concurrent writes).
        Redis: one script."""
        ...

    def around(
        self,
        target: Target,
        member: bytes,
        before: int,
        after: int,
        high_first: bool,
        style: RankStyle,
    ) -> tuple[int, list[Row]] | None:
        """The window of up to before+after+1 rows containing ``member`` (shifted, not shrunk,
        at the edges), and the member's index inside it; None if absent.
        Redis: one script (ZREVRANK + ZREVRANGE)."""
        ...

    def by_score(
        self,
        target: Target,
        low: float,
        high: float,
        offset: int,
        count: int,
        high_first: bool,
        style: RankStyle,
    ) -> list[Row]:
        """Rows with low <= score <= high in board order, after skipping ``offset``, at most
        ``count``. Redis: one script (ZRANGE BYSCORE [REV] LIMIT + first rank)."""
        ...

    def count(self, target: Target, low: float = ..., high: float = ...) -> int:
        """Members with low <= score <= high (default: all). Redis: ZCARD / ZCOUNT."""
        ...

    def percentile(
        self, target: Target, member: bytes, high_first: bool
    ) -> tuple[float, int, int] | None:
        """(the member's score, members on the board, members with a strictly worse
        score), read in one atomic step; None when the member is absent. O(log n).
        Redis: one script (ZSCORE, ZCARD, ZCOUNT with an exclusive bound)."""
        ...

    def remove(self, targets: Sequence[Target], members: Sequence[bytes]) -> int:
        """Remove members from every target (and companions, and their fields of each
        target's ``ties_key``); returns removals summed. Redis: one script."""
        ...

    def delete(self, keys: Sequence[bytes]) -> int:
        """Delete keys of any type; returns how many existed. Redis: DEL (keys of one slot)."""
        ...

    def expire_at(self, keys: Sequence[bytes], deadline_ms: int) -> None:
        """Set an absolute expiry on existing keys. Redis: one script of PEXPIREAT."""
        ...

    def hash_set(self, key: bytes, fields: Mapping[bytes, bytes], ttl_ms: int | None) -> None:
        """HSET fields (and PEXPIRE when ttl_ms is set). Redis: one script."""
        ...

    def hash_get(self, key: bytes, fields: Sequence[bytes]) -> list[bytes | None]:
        """HMGET. Redis: HMGET."""
        ...

    def hash_delete(self, key: bytes, fields: Sequence[bytes]) -> int:
        """HDEL. Redis: HDEL."""
        ...

    def set_add(self, key: bytes, members: Sequence[bytes]) -> int:
        """SADD. Redis: SADD."""
        ...

    def set_remove(self, key: bytes, members: Sequence[bytes]) -> int:
        """SREM. Redis: SREM."""
        ...

    def set_members(self, key: bytes) -> set[bytes]:
        """SMEMBERS. Redis: SMEMBERS."""
        ...

    def scores(self, target: Target, members: Sequence[bytes]) -> list[float | None]:
        """ZMSCORE. Redis: ZMSCORE."""
        ...

    def intersect_store(self, dest: bytes, board: bytes, members_set: bytes, ttl_ms: int) -> int:
        """Store board ∩ set (board scores) in ``dest`` with a TTL; returns its size. Only
        when ``cross_slot``. Redis: one script (ZINTERSTORE dest 2 board set WEIGHTS 1 0,
        PEXPIRE)."""
        ...

    def range_all(self, key: bytes, high_first: bool, limit: int) -> list[tuple[bytes, float]]:
        """Up to ``limit`` (member, score) pairs of a plain sorted set (no companions) in
        board order. Redis: ZRANGE key 0 limit-1 [REV] WITHSCORES."""
        ...

    def lex_replace(
        self,
        target: Target,
        index_key: bytes,
        member: bytes,
        encoded: bytes,
        operator: LexOperator,
        high_first: bool,
    ) -> LexOutcome:
        """Member-encoded boards (every entry at score 0, ordered by bytes): replace the
        entry of ``member`` by ``encoded`` in one step. ``index_key`` is a hash member ->
        its stored encoding. Reads the previous encoding (HGET); ``set`` stores
        ``encoded``; ``best`` keeps the better of the two: the smaller bytes, or the greater
        when ``high_first`` (the board is read in descending byte order). When the
        encoding changes: ZREM the old entry (companions kept right), ZADD 0 the new one,
        HSET the index. The key, its companions and the index get the target's TTL on
        every call. Redis: one script (HGET, ZRANK, ZREM, ZADD, HSET, PEXPIRE)."""
        ...

    def lex_count(
        self,
        target: Target,
        low: bytes | None,
        high: bytes | None,
        low_exclusive: bool = False,
        high_exclusive: bool = False,
    ) -> int:
        """Members whose bytes lie between ``low`` and ``high`` (None: unbounded), bounds
        inclusive unless exclusive. Meaningful when every score is equal. O(log n).
        Redis: ZLEXCOUNT key [low|(low|- [high|(high|+."""
        ...

    def lex_range(
        self,
        target: Target,
        low: bytes | None,
        high: bytes | None,
        low_exclusive: bool,
        high_exclusive: bool,
        offset: int,
        count: int,
        reverse: bool,
    ) -> list[bytes]:
        """Up to ``count`` members between ``low`` and ``high`` (as :meth:`lex_count`), in
        ascending byte order (descending with ``reverse``), after skipping ``offset``.
        O(log n + offset + count). Redis: ZRANGE key low high BYLEX [REV] LIMIT offset count
        (with REV the bounds are sent high first)."""
        ...

    def run(
        self,
        procedure: Procedure[T],
        keys: Sequence[bytes],
        args: Sequence[Arg],
        now_us: int | None = None,
    ) -> T:
        """A feature's own atomic step (:mod:`ranked.backends.procedure`): its Python twin
        under the lock on memory, its Lua script (one round trip) on Redis. ``now_us``: the
        instant in Unix microseconds, None for the backend's clock (Redis: server TIME)."""
        ...

    def bind(self, operation: Operation[T]) -> Bound[T]:
        """The seam: the callable that runs a feature's ``operation`` (see
        :class:`~ranked.backends.procedure.Operation`), bound once per board, limiter or
        queue: the native implementation or the Python reference under the lock on memory,
        the Lua script on Redis and Redis Cluster."""
        ...

    def close(self) -> None:
        """Release connections. Idempotent."""
        ...


class AsyncBackend(Protocol):
    """The asynchronous twin of :class:`Backend`: the same operations, awaited."""

    url: str
    cross_slot: bool

    def now_ms(self) -> int: ...

    async def submit(self, request: SubmitRequest) -> tuple[SubmitOutcome, ...]: ...

    async def submit_batch(
        self, requests: Sequence[SubmitRequest]
    ) -> list[tuple[SubmitOutcome, ...]]: ...

    async def ranks(
        self, target: Target, members: Sequence[bytes], high_first: bool, style: RankStyle
    ) -> list[tuple[float, int] | None]: ...

    async def page(
        self, target: Target, start: int, stop: int, high_first: bool, style: RankStyle
    ) -> list[Row]: ...

    async def page_after(
        self,
        target: Target,
        score: float,
        member: bytes,
        count: int,
        high_first: bool,
        style: RankStyle,
    ) -> list[Row]: ...

    async def around(
        self,
        target: Target,
        member: bytes,
        before: int,
        after: int,
        high_first: bool,
        style: RankStyle,
    ) -> tuple[int, list[Row]] | None: ...

    async def by_score(
        self,
        target: Target,
        low: float,
        high: float,
        offset: int,
        count: int,
        high_first: bool,
        style: RankStyle,
    ) -> list[Row]: ...

    async def count(self, target: Target, low: float = ..., high: float = ...) -> int: ...

    async def percentile(
        self, target: Target, member: bytes, high_first: bool
    ) -> tuple[float, int, int] | None: ...

    async def remove(self, targets: Sequence[Target], members: Sequence[bytes]) -> int: ...

    async def delete(self, keys: Sequence[bytes]) -> int: ...

    async def expire_at(self, keys: Sequence[bytes], deadline_ms: int) -> None: ...

    async def hash_set(
        self, key: bytes, fields: Mapping[bytes, bytes], ttl_ms: int | None
    ) -> None: ...

    async def hash_get(self, key: bytes, fields: Sequence[bytes]) -> list[bytes | None]: ...

    async def hash_delete(self, key: bytes, fields: Sequence[bytes]) -> int: ...

    async def set_add(self, key: bytes, members: Sequence[bytes]) -> int: ...

    async def set_remove(self, key: bytes, members: Sequence[bytes]) -> int: ...

    async def set_members(self, key: bytes) -> set[bytes]: ...

    async def scores(self, target: Target, members: Sequence[bytes]) -> list[float | None]: ...

    async def intersect_store(
        self, dest: bytes, board: bytes, members_set: bytes, ttl_ms: int
    ) -> int: ...

    async def range_all(
        self, key: bytes, high_first: bool, limit: int
    ) -> list[tuple[bytes, float]]: ...

    async def lex_replace(
        self,
        target: Target,
        index_key: bytes,
        member: bytes,
        encoded: bytes,
        operator: LexOperator,
        high_first: bool,
    ) -> LexOutcome: ...

    async def lex_count(
        self,
        target: Target,
        low: bytes | None,
        high: bytes | None,
        low_exclusive: bool = False,
        high_exclusive: bool = False,
    ) -> int: ...

    async def lex_range(
        self,
        target: Target,
        low: bytes | None,
        high: bytes | None,
        low_exclusive: bool,
        high_exclusive: bool,
        offset: int,
        count: int,
        reverse: bool,
    ) -> list[bytes]: ...

    async def run(
        self,
        procedure: Procedure[T],
        keys: Sequence[bytes],
        args: Sequence[Arg],
        now_us: int | None = None,
    ) -> T: ...

    def bind(self, operation: Operation[T]) -> AsyncBound[T]: ...

    async def close(self) -> None: ...
