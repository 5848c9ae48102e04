"""What a board asks of its steps, and what they answer: the types every form of a step
(the Lua script on Redis, the reference on ``memory://``, the native writer) shares.

Conventions of every step:

- Keys and members are ``bytes``. Scores are float64. ``-0.0`` is stored as ``0.0``.
- ``high_first``: True when a higher score is better (the board is read from the top,
  Redis ``REV``); False when lower is better.
- Ranks are 1-based in the requested :class:`~ranked.core.ranks.RankStyle`:
  unique = position in the board's order (ties by member bytes as Redis orders them, i.e.
  on a ``high_first`` board ties are in descending member order, like ZREVRANK);
  competition = 1 + members with a strictly better score;
  dense = 1 + distinct strictly better scores.
- A :class:`Target` names one sorted set plus the two companion keys the Redis scripts keep
  to answer dense ranks in O(log n): a sorted set of the distinct scores and a hash
  score -> how many members have it. The memory reference ignores the companions (the
  engine answers dense ranks itself).
- Tie values (secondary tie-break): a :class:`Target` may name a ``ties_key``, a hash
  member -> tie-break value (opaque bytes, compared by the board, never by a step).
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
- Errors: a value that is not a finite number raises ``InvalidScoreError``; a composite
  score outside its budget, or a score that is not exact as above, raises
  ``OutOfRangeError``. On error nothing changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

from ..backends.checks import MAX_POSITION
from ..core.ranks import RankStyle
from ..errors import InvalidScoreError, OutOfRangeError

__all__ = [
    "EXACT_LIMIT",
    "MAX_POSITION",
    "Composite",
    "LexOperator",
    "LexOutcome",
    "LexWrite",
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

Row = tuple[bytes, float, int]
"""(member, score, rank) as read from a board, rank in the requested style."""

EXACT_LIMIT: Final = 2**53
"""From this magnitude on, float64 values are 2 or more apart: not every integer exists."""


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


@dataclass(frozen=True, slots=True)
class LexWrite:
    """One member's entry on a member-encoded board (every entry at score 0, ordered by
    its bytes): ``encoded`` replaces the member's previous entry; ``best`` keeps the better
    of the two (the smaller bytes, or the greater when ``high_first``: the board is read
    in descending byte order), ``set`` the new one."""

    member: bytes
    encoded: bytes
    operator: LexOperator
    high_first: bool = False


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
