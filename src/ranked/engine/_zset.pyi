"""Type stub and behavioural contract of ``ranked.engine._zset.SortedSet``.

The C class and its pure-Python twin (``ranked.engine.skiplist.SortedSet``) both
follow this contract exactly; one test suite runs on both.

Members: ``str`` or ``bytes`` on input. A ``str`` is stored as its UTF-8 bytes
(``errors="surrogateescape"``, so any bytes round-trip). Outputs are ``str``
(decoded with surrogateescape) unless the set was made with ``raw=True``, in
which case they are ``bytes``. Any other member type raises ``TypeError``.

Scores (and increments, score bounds, cursor points, weights): converted as
Python's ``float(x)`` converts them. An exact ``float`` or ``int`` is taken by value;
anything else whose type has ``__float__`` or ``__index__`` (``float`` and ``int``
subclasses included) goes through ``float(x)``, so a subclass's own ``__float__`` is
honoured, as ``float()`` honours it. Text is refused with ``TypeError`` even where
``float()`` would parse it: ``str``, ``bytes``, ``bytearray``, ``memoryview`` and other
buffers. NaN raises ``ranked.errors.InvalidScoreError``; +-inf are allowed. Order is
(score, member bytes compared like ``bytes`` / memcmp). ``-0.0 == 0.0`` in every
comparison; a stored ``-0.0`` keeps its sign (Redis skiplist encoding).

Every method validates all of its arguments before it changes anything: an
error leaves the set exactly as it was. Arguments convert in argument order, and
their Python code (``__float__``, ``__index__``, ``__bool__``, a weights sequence's
``__len__`` / ``__iter__``) runs before any set is read: a set that code changes is
read as changed, and a set whose other references it drops stays alive for the call
(the call holds its inputs). A garbage collection during a range read that changes
the set (a finaliser) makes the read raise ``RuntimeError``; cursors (``items()``,
``iter()``) survive any change.

Copies: ``copy.copy(s)`` and ``copy.deepcopy(s)`` are ``s.copy()``; pickling (every
protocol) stores ``(snapshot, raw)`` and rebuilds an equal set of the same class. A
copy is equal to the original (same pairs, same score bits, same ``raw``) and
independent of it.

Ranges follow Redis: ``range_by_index`` takes inclusive ``start``/``stop`` with
negative indexes counted from the end (ZRANGE). Score and lex ranges always take
``min`` then ``max`` (never swapped, also with ``reverse=True``); an empty or
inverted range yields nothing. ``offset < 0`` yields nothing; ``count < 0``
means no limit. With ``reverse=True`` results run from high to low and
``offset`` counts from the high end.

Lex ranges (``*_by_lex``) compare members only; like Redis they are meaningful
when all members share one score. ``None`` as a lex bound means unbounded
(Redis ``-`` / ``+``).
"""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Literal

Member = str | bytes
Pairs = Mapping[str, float] | Mapping[bytes, float] | Iterable[tuple[Member, float]]
RankStyle = Literal["unique", "competition", "dense"]
Aggregate = Literal["sum", "min", "max"]

class SortedSet:
    def __init__(self, pairs: Pairs | None = None, *, raw: bool = False) -> None:
        """Make a set, optionally filled from ``pairs`` (as :meth:`load`)."""

    @property
    def raw(self) -> bool:
        """True when members are returned as ``bytes``."""

    # -- size -----------------------------------------------------------------
    def __len__(self) -> int:
        """Number of members. O(1). Redis: ZCARD."""

    def __contains__(self, member: object) -> bool:
        """O(1). Non-``str``/``bytes`` objects are simply not members."""

    def __iter__(self) -> Iterator[str | bytes]:
        """Members in ascending order, as :meth:`items` (safe while the set changes)."""

    def clear(self) -> None:
        """Remove every member. O(n)."""

    # -- writes ---------------------------------------------------------------
    def add(
        self,
        member: Member,
        score: float,
        *,
        nx: bool = False,
        xx: bool = False,
        gt: bool = False,
        lt: bool = False,
        ch: bool = False,
    ) -> int:
        """Add or update one member. O(log n). Redis: ZADD key [NX|XX] [GT|LT] [CH] score member.

        Returns 1 if the member was added (with ``ch``: added or its score changed), else 0.
        nx: only add new members. xx: only update existing ones. gt/lt: update an existing
        member only if the new score is greater/less (new members are still added).
        An update happens only when the new score ``!=`` the current one (so 0.0 does not
        replace a stored -0.0). Conflicting flags (nx+xx, gt+lt, nx with gt or lt) raise
        ``ValueError`` before anything changes.
        """

    def add_many(
        self,
        pairs: Pairs,
        *,
        nx: bool = False,
        xx: bool = False,
        gt: bool = False,
        lt: bool = False,
        ch: bool = False,
    ) -> int:
        """ZADD with many (member, score) pairs: O(k log n). Every score is validated first.

        Pairs are applied in order (a member given twice ends with its last score, and is
        counted as Redis counts it). Returns the count as :meth:`add` does, summed.
        """

    def incr(
        self,
        member: Member,
        amount: float = 1.0,
        *,
        nx: bool = False,
        xx: bool = False,
        gt: bool = False,
        lt: bool = False,
    ) -> float | None:
        """Add ``amount`` to the member's score; a missing member is added with ``amount``
        itself as its score (so -0.0 keeps its sign, as ZINCRBY does). O(log n).

        Redis: ZINCRBY, or ZADD ... INCR with flags. Returns the new score, or ``None`` when
        a flag stopped the update (nx on an existing member, xx on a missing one, gt/lt not
        satisfied). A NaN result (inf + -inf) raises ``InvalidScoreError`` and changes
        nothing. When the new score ``==`` the stored one (e.g. -0.0 + 0.0) nothing is
        stored but the computed new score is returned, as Redis does.
        """

    def remove(self, *members: Member) -> int:
        """Remove the members; returns how many existed. O(k log n). Redis: ZREM."""

    def load(self, pairs: Pairs) -> int:
        """Bulk add without flags; returns how many members were new. Redis: ZADD.

        O(n) when the set is empty and the pairs arrive strictly ascending by
        (score, member bytes) with no repeated member; otherwise O(n log n), same result
        (into an empty set the pairs are sorted first, then appended in O(n)).
        """

    # -- point reads ----------------------------------------------------------
    def score(self, member: Member) -> float | None:
        """The member's score, or ``None``. O(1). Redis: ZSCORE."""

    def scores(self, members: Iterable[Member]) -> list[float | None]:
        """Scores of many members, ``None`` for missing ones. O(k). Redis: ZMSCORE."""

    def index(self, member: Member, *, reverse: bool = False) -> int | None:
        """0-based position in ascending order (descending with ``reverse``), or ``None``.

        O(log n). Redis: ZRANK / ZREVRANK.
        """

    def rank(
        self, member: Member, *, style: RankStyle = "competition", reverse: bool = False
    ) -> int | None:
        """1-based rank of the member, or ``None`` if missing. O(log n) for every style.

        Ascending (lowest score is rank 1) unless ``reverse`` (highest score is rank 1).
        unique: index + 1, ties broken by member bytes (Redis order).
        competition: 1 + number of members whose score is strictly better (1, 1, 3).
        dense: 1 + number of distinct scores strictly better (1, 1, 2).
        Unknown styles raise ``ValueError``. Redis has no equivalent for the last two.
        """

    def at(self, index: int) -> tuple[str | bytes, float]:
        """The (member, score) at a 0-based index; negative counts from the end.

        O(log n). ``IndexError`` when out of range. Redis: ZRANGE key i i WITHSCORES.
        """

    def __getitem__(self, index: int) -> tuple[str | bytes, float]:
        """Same as :meth:`at`."""

    # -- range reads ----------------------------------------------------------
    def range_by_index(
        self, start: int, stop: int, *, reverse: bool = False
    ) -> list[tuple[str | bytes, float]]:
        """(member, score) pairs from index ``start`` to ``stop`` inclusive. O(log n + k).

        Redis: ZRANGE key start stop [REV] WITHSCORES (negative indexes, clamping).
        """

    def range_around(
        self, member: Member, before: int, after: int, *, reverse: bool = False
    ) -> tuple[int, list[tuple[str | bytes, float]]] | None:
        """The member's index and the pairs around it ("around me"), or ``None`` if missing.

        O(log n + before + after): one descent for the index, then a walk along the list.
        Redis: ZREVRANK + ZRANGE (two commands).

        Returns ``(index, window)``: ``index`` is the member's 0-based position in the
        chosen order (ascending, or descending with ``reverse``), as :meth:`index` gives.
        ``window`` holds ``min(before + after + 1, len(self))`` consecutive pairs in that
        order containing the member, normally ``before`` pairs ahead of it and ``after``
        behind. At an end of the set the window is shifted, not shrunk: near the start it
        takes more pairs from behind the member, near the end more from ahead of it.
        Negative ``before`` or ``after`` raise ``ValueError``.
        """

    def range_by_score(
        self,
        min: float = float("-inf"),
        max: float = float("inf"),
        *,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
        reverse: bool = False,
        offset: int = 0,
        count: int = -1,
    ) -> list[tuple[str | bytes, float]]:
        """Pairs with min <= score <= max (bounds optionally exclusive). O(log n + offset + k).

        Redis: ZRANGE key min max BYSCORE [REV] [LIMIT offset count] WITHSCORES.
        NaN bounds raise ``InvalidScoreError``.
        """

    def range_by_lex(
        self,
        min: Member | None = None,
        max: Member | None = None,
        *,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
        reverse: bool = False,
        offset: int = 0,
        count: int = -1,
    ) -> list[tuple[str | bytes, float]]:
        """Pairs whose member lies between ``min`` and ``max``. O(log n + offset + k).

        Redis: ZRANGE key min max BYLEX [REV] [LIMIT offset count].
        """

    def count_by_score(
        self,
        min: float = float("-inf"),
        max: float = float("inf"),
        *,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
    ) -> int:
        """Number of members with a score in the range. O(log n). Redis: ZCOUNT."""

    def count_by_lex(
        self,
        min: Member | None = None,
        max: Member | None = None,
        *,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
    ) -> int:
        """Number of members in the lex range. O(log n). Redis: ZLEXCOUNT."""

    def items(
        self, *, reverse: bool = False, after: tuple[float, Member] | None = None
    ) -> Iterator[tuple[str | bytes, float]]:
        """Iterate (member, score) pairs in order, strictly after the point ``after``.

        A cursor: each step resumes after the last (score, member) it yielded, so the
        iteration stays correct while the set changes (members inserted ahead of the
        cursor are seen, members behind it are not, nothing is yielded twice unless its
        score moved it ahead). O(1) amortised per step when the set did not change,
        O(log n) after a change.
        """

    def items_after(
        self, score: float, member: Member, count: int, *, reverse: bool = False
    ) -> list[tuple[str | bytes, float]]:
        """Up to ``count`` pairs strictly after (score, member) in order (before it when
        ``reverse``). The point need not be a member. O(log n + count)."""

    # -- removals -------------------------------------------------------------
    def remove_range_by_index(self, start: int, stop: int) -> int:
        """Remove an index range (inclusive, negatives as ZRANGE). O(log n + k).

        Redis: ZREMRANGEBYRANK.
        """

    def remove_range_by_score(
        self,
        min: float,
        max: float,
        *,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
    ) -> int:
        """Remove members in the score range. O(log n + k). Redis: ZREMRANGEBYSCORE."""

    def remove_range_by_lex(
        self,
        min: Member | None,
        max: Member | None,
        *,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
    ) -> int:
        """Remove members in the lex range. O(log n + k). Redis: ZREMRANGEBYLEX."""

    def pop_min(self, count: int = 1) -> list[tuple[str | bytes, float]]:
        """Remove and return up to ``count`` lowest pairs, lowest first. O(k log n).

        Redis: ZPOPMIN. ``count < 0`` raises ``ValueError``; 0 returns [].
        """

    def pop_max(self, count: int = 1) -> list[tuple[str | bytes, float]]:
        """Remove and return up to ``count`` highest pairs, highest first. Redis: ZPOPMAX."""

    def random_member(self) -> tuple[str | bytes, float] | None:
        """One uniformly random pair, or ``None`` when empty. O(log n). Redis: ZRANDMEMBER key."""

    def random_members(self, count: int) -> list[tuple[str | bytes, float]]:
        """Redis ZRANDMEMBER key count WITHSCORES semantics.

        count > 0: min(count, len) distinct members; count < 0: |count| independent draws
        (repeats allowed); 0: []. O(|count| log n) or O(n) when count >= len.
        """

    # -- set algebra ----------------------------------------------------------
    @classmethod
    def union(
        cls,
        sets: Sequence[SortedSet],
        weights: Sequence[float] | None = None,
        aggregate: Aggregate = "sum",
        *,
        raw: bool = False,
    ) -> SortedSet:
        """Union of the sets. Redis: ZUNION ... WEIGHTS ... AGGREGATE ....

        Each input score is multiplied by its set's weight (default 1); a NaN product
        (0 * inf) counts as 0, and a NaN sum (inf + -inf) becomes 0. Inputs are combined in
        ascending order of their sizes (ties keep argument order), as Redis does, so float
        sums round identically. ``len(weights) != len(sets)``, a NaN weight, an unknown
        aggregate, or no sets raise ``ValueError`` / ``InvalidScoreError``.

        The arguments convert in order (``sets``, then ``weights``, ``aggregate``,
        ``raw``) before any set is read, and the call holds its input sets: the sizes
        that order the inputs, and the members read, are those once every argument has
        converted.
        """

    @classmethod
    def inter(
        cls,
        sets: Sequence[SortedSet],
        weights: Sequence[float] | None = None,
        aggregate: Aggregate = "sum",
        *,
        raw: bool = False,
    ) -> SortedSet:
        """Intersection, weights and aggregates as :meth:`union`. Redis: ZINTER.

        As in Redis, the smallest input drives the loop: its weighted scores that are NaN
        count as 0; a NaN product from another input enters the aggregate as is (SUM then
        turns a NaN total into 0, MIN and MAX ignore it).
        """

    @classmethod
    def diff(cls, sets: Sequence[SortedSet], *, raw: bool = False) -> SortedSet:
        """Members of the first set found in none of the others, with their first-set scores.

        Redis: ZDIFF.
        """

    # -- whole-set ------------------------------------------------------------
    def copy(self) -> SortedSet:
        """An independent copy. O(n)."""

    def __copy__(self) -> SortedSet:
        """``copy.copy(s)``: as :meth:`copy`. O(n)."""

    def __deepcopy__(self, memo: dict[int, object]) -> SortedSet:
        """``copy.deepcopy(s)``: as :meth:`copy` (members and scores are immutable). O(n)."""

    def __reduce__(self) -> tuple[type[SortedSet], tuple[()], tuple[bytes, bool]]:
        """Pickle support, every protocol: ``(SortedSet, (), (snapshot, raw))``. O(n)."""

    def __setstate__(self, state: object) -> None:
        """Pickle support: the contents become those of a ``(snapshot bytes, raw)`` state.

        A state of another shape raises ``TypeError``, a bad snapshot ``SnapshotError``;
        either leaves the set as it was. Open cursors re-seek from their point. O(n).
        """

    def snapshot(self) -> bytes:
        """Serialise to bytes: O(n). Format (identical in both implementations):

        b"RKZS" + version byte 1 + count as u64 little-endian, then per member in
        ascending order: score as f64 little-endian, member length as u32 little-endian,
        member bytes.
        """

    @classmethod
    def restore(cls, data: bytes, *, raw: bool = False) -> SortedSet:
        """Rebuild from :meth:`snapshot` output in O(n). Truncated, trailing or corrupt data,
        NaN scores, unordered or repeated members raise ``SnapshotError``."""

    def memory_usage(self) -> int:
        """Bytes used by the structure (nodes, members, index). O(1)."""

    def _check(self) -> None:
        """Verify every invariant (order, spans, dense spans, levels, backward pointers,
        tail, length, hash table <-> list agreement); raise ``AssertionError`` naming the
        first one broken. O(n)."""
