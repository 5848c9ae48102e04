"""Pure-Python sorted set: the readable twin of the C engine ``_zset.c``.

Same algorithm as the C code, same results, same snapshot bytes. This file is
also the one written source of the API text both engines share: the signatures,
the docstrings (complexity and Redis equivalent of every public method) and the
behavioural contract in the docstring of :class:`SortedSet`. The C engine's stub
``_zset.pyi`` re-exports this class for type checkers rather than repeat them.
``docs/implementation.md`` explains the structure with pictures. In short:

* a **skip list** keeps the members ordered by (score, member bytes). Every node
  has a random number of levels (p = 0.25, at most 32). Level 0 links all nodes;
  each higher level skips ahead. A header node (no member) starts every level;
* every link also stores its **span** (how many level-0 steps it jumps), so the
  position of a node is the sum of spans crossed on the way down to it, and
  the node at a position is found by descending on spans: both O(log n);
* every link also stores a **distinct span** (``dspan``): how many of the nodes
  it jumps over *start a score group* (the first node, and each node whose
  score differs from its predecessor's). Summing ``dspan`` gives the number of
  distinct scores below a point, hence dense ranks in O(log n);
* a plain ``dict`` maps member bytes to its node for O(1) score lookups.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..errors import InvalidScoreError
from . import _skiplist_algebra as algebra
from . import _skiplist_snapshot as snapshot_format
from ._skiplist_args import (
    RANK_STYLES,
    Aggregate,
    Member,
    Pairs,
    RankStyle,
    check_flags,
    to_count,
    to_member,
    to_member_or_none,
    to_pairs,
    to_score,
)

__all__ = ["MAX_LEVEL", "P", "SortedSet", "keys_with_prefix"]

MAX_LEVEL = 32
P = 0.25  # chance that a node reaches one more level: ~1.33 links per node

_random = random.Random()

Pair = tuple[str | bytes, float]
Before = Callable[["_Node"], bool]  # "is this node before the point I look for?"
Range = tuple[Before, Before]  # (lies before the range, does not lie after it)
Lanes = tuple[list["_Node"], list[int], list[int]]  # per level: node, rank, dense rank


def keys_with_prefix(mapping: dict[bytes, Any], prefix: bytes, /) -> list[bytes]:
    """The bytes keys of ``mapping`` that start with ``prefix``, in its order (the
    keyspace's scan for the keys under one prefix; the C engine's twin). O(len(mapping))."""
    if not isinstance(mapping, dict) or not isinstance(prefix, bytes):
        raise TypeError("keys_with_prefix takes a dict and a bytes prefix")
    return [key for key in mapping if isinstance(key, bytes) and key.startswith(prefix)]


def _random_level() -> int:
    level = 1
    while level < MAX_LEVEL and _random.random() < P:
        level += 1
    return level


class _Node:
    """One member. ``forward[i]``/``span[i]``/``dspan[i]`` describe its link on level i.

    ``span[i]``: level-0 steps from this node to ``forward[i]``; when
    ``forward[i]`` is ``None`` it counts every node after this one (kept up to
    date like Redis does, so the insert arithmetic never needs a special case).
    ``dspan[i]``: how many nodes in that same stretch start a score group.
    """

    __slots__ = ("backward", "dspan", "forward", "member", "score", "span")

    def __init__(self, member: bytes, score: float, level: int) -> None:
        self.member = member
        self.score = score
        self.forward: list[_Node | None] = [None] * level
        self.span: list[int] = [0] * level
        self.dspan: list[int] = [0] * level
        self.backward: _Node | None = None  # level 0 only; None for the first node


def _node_size(node: _Node) -> int:
    return (
        sys.getsizeof(node)
        + sys.getsizeof(node.forward)
        + sys.getsizeof(node.span)
        + sys.getsizeof(node.dspan)
        + sys.getsizeof(node.member)
        + sys.getsizeof(node.score)
    )


def _before_point(score: float, member: bytes) -> Before:
    """Nodes strictly before (score, member) in the set's order."""
    return lambda node: node.score < score or (node.score == score and node.member < member)


def _at_or_before_point(score: float, member: bytes) -> Before:
    return lambda node: node.score < score or (node.score == score and node.member <= member)


def _below_score(bound: float, *, inclusive: bool) -> Before:
    """Nodes whose score is < ``bound`` (<= when ``inclusive``)."""
    if inclusive:
        return lambda node: node.score <= bound
    return lambda node: node.score < bound


def _below_member(bound: bytes | None, *, inclusive: bool, unbounded: bool) -> Before:
    """Nodes whose member is < ``bound`` (<= when ``inclusive``). With no bound (an open
    end, Redis ``-`` / ``+``) every node when ``unbounded``, else none."""
    if bound is None:
        return lambda node: unbounded
    if inclusive:
        return lambda node: node.member <= bound
    return lambda node: node.member < bound


def _score_range(low: float, high: float, min_exclusive: object, max_exclusive: object) -> Range:
    """The predicates of a score range: (lies before it, does not lie after it).

    The exclusive flags convert here, low then high, before anything reads the set.
    """
    return (
        _below_score(low, inclusive=bool(min_exclusive)),
        _below_score(high, inclusive=not max_exclusive),
    )


def _lex_range(
    low: bytes | None, high: bytes | None, min_exclusive: object, max_exclusive: object
) -> Range:
    """The predicates of a lex range (``None``: an open end), as :func:`_score_range`."""
    return (
        _below_member(low, inclusive=bool(min_exclusive), unbounded=False),
        _below_member(high, inclusive=not max_exclusive, unbounded=True),
    )


def _clamp_indexes(start: int, stop: int, length: int) -> tuple[int, int] | None:
    """ZRANGE index rules: negatives count from the end, then clamp; None if empty."""
    if start < 0:
        start += length
    if stop < 0:
        stop += length
    start = max(start, 0)
    if start > stop or start >= length:
        return None
    return start, min(stop, length - 1)


class SortedSet:
    """A Redis-style sorted set. This docstring is the behavioural contract that the C
    class ``ranked.engine._zset.SortedSet`` and this pure-Python twin both follow
    exactly; one test suite (``tests/engine``) runs on both.

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

    def __init__(self, pairs: Pairs | None = None, *, raw: bool = False) -> None:
        """Make a set, optionally filled from ``pairs`` (as :meth:`load`)."""
        self._raw = bool(raw)
        self._mods = 0  # bumped on every change; lets items() step in O(1) when unchanged
        self._reset()
        if pairs is not None:
            self.load(pairs)

    def _reset(self) -> None:
        self._header = _Node(b"", 0.0, MAX_LEVEL)
        self._tail: _Node | None = None
        self._level = 1  # levels in use: header.forward[i] is None for i >= _level
        self._length = 0
        self._groups = 0  # number of distinct scores
        self._dict: dict[bytes, _Node] = {}
        self._node_bytes = 0
        self._mods += 1

    @property
    def raw(self) -> bool:
        """True when members are returned as ``bytes``."""
        return self._raw

    def _out(self, member: bytes) -> str | bytes:
        return member if self._raw else member.decode("utf-8", "surrogateescape")

    # -- the skip list: descents ------------------------------------------------------

    def _descend(self, before: Before) -> Lanes:
        """For each level i: the last node ``update[i]`` that is ``before`` the point,
        its rank ``rank[i]`` (header = 0) and its dense rank ``dense[i]``."""
        lanes: Lanes = ([self._header] * MAX_LEVEL, [0] * MAX_LEVEL, [0] * MAX_LEVEL)
        self._last_before(before, lanes)
        return lanes

    def _last_before(self, before: Before, lanes: Lanes | None = None) -> tuple[_Node, int, int]:
        """The last node ``before`` the point (the header if none), with how many nodes
        and how many score groups lie up to and including it. O(log n).

        With ``lanes``, also records the same three for every level in use, as
        :meth:`_descend` returns them."""
        node, position, groups = self._header, 0, 0
        for level in range(self._level - 1, -1, -1):
            nxt = node.forward[level]
            while nxt is not None and before(nxt):
                position += node.span[level]
                groups += node.dspan[level]
                node, nxt = nxt, nxt.forward[level]
            if lanes is not None:
                lanes[0][level], lanes[1][level], lanes[2][level] = node, position, groups
        return node, position, groups

    def _node_at(self, rank: int) -> _Node:
        """The node at 1-based ``rank`` (1 <= rank <= length): descend on spans."""
        node, traversed = self._header, 0
        for level in range(self._level - 1, -1, -1):
            nxt = node.forward[level]
            while nxt is not None and traversed + node.span[level] <= rank:
                traversed += node.span[level]
                node, nxt = nxt, nxt.forward[level]
            if traversed == rank:
                return node
        raise AssertionError(f"rank {rank} out of range")  # pragma: no cover

    def _index_of(self, node: _Node) -> int:
        """0-based ascending position of a node."""
        return self._last_before(_before_point(node.score, node.member))[1]

    # -- the skip list: changes -------------------------------------------------------

    def _insert(self, member: bytes, score: float) -> _Node:
        """Link a new node; the caller guarantees ``member`` is absent."""
        header = self._header
        update, rank, dense = self._descend(_before_point(score, member))
        level = _random_level()
        if level > self._level:
            # New levels start at the header and (being empty) span every node.
            for i in range(self._level, level):
                update[i], rank[i], dense[i] = header, 0, 0
                header.span[i] = self._length
                header.dspan[i] = self._groups
            self._level = level
        node = _Node(member, score, level)
        prev = update[0]
        nxt = prev.forward[0]
        starts = 1 if prev is header or prev.score != score else 0
        # The successor may stop (or start) being a group start: it now follows us.
        next_delta = 0
        if nxt is not None:
            was_start = prev is header or nxt.score != prev.score
            next_delta = (nxt.score != score) - was_start
        for i in range(level):
            before = update[i]
            steps, group_steps = rank[0] - rank[i], dense[0] - dense[i]
            node.forward[i] = before.forward[i]
            before.forward[i] = node
            node.span[i] = before.span[i] - steps
            node.dspan[i] = before.dspan[i] - group_steps + next_delta
            before.span[i] = steps + 1
            before.dspan[i] = group_steps + starts
        for i in range(level, self._level):
            # Links above the new node now jump over it (and over the successor's flag).
            update[i].span[i] += 1
            update[i].dspan[i] += starts + next_delta
        node.backward = None if prev is header else prev
        if nxt is not None:
            nxt.backward = node
        else:
            self._tail = node
        self._length += 1
        self._groups += starts + next_delta
        self._dict[member] = node
        self._node_bytes += _node_size(node)
        self._mods += 1
        return node

    def _unlink(self, node: _Node, update: list[_Node]) -> None:
        """Unlink ``node``; ``update[i]`` is the last node before it on level i.

        Leaves ``update`` valid for the successor, so range deletions reuse it.
        The dict entry is the caller's business.
        """
        header = self._header
        prev = update[0]
        nxt = node.forward[0]
        starts = 1 if prev is header or prev.score != node.score else 0
        next_delta = 0
        if nxt is not None:
            now_start = prev is header or nxt.score != prev.score
            next_delta = now_start - (nxt.score != node.score)
        for i in range(self._level):
            before = update[i]
            if before.forward[i] is node:
                before.span[i] += node.span[i] - 1
                before.dspan[i] += node.dspan[i] - starts + next_delta
                before.forward[i] = node.forward[i]
            else:
                before.span[i] -= 1
                before.dspan[i] += next_delta - starts
        if nxt is not None:
            nxt.backward = node.backward
        else:
            self._tail = node.backward
        while self._level > 1 and header.forward[self._level - 1] is None:
            self._level -= 1
        self._length -= 1
        self._groups += next_delta - starts
        self._node_bytes -= _node_size(node)
        self._mods += 1

    def _delete(self, node: _Node) -> None:
        update = self._descend(_before_point(node.score, node.member))[0]
        self._unlink(node, update)
        del self._dict[node.member]

    def _set_score(self, node: _Node, score: float) -> None:
        """Move an existing member to ``score`` (the caller checked ``score != old``)."""
        update = self._descend(_before_point(node.score, node.member))[0]
        prev, nxt = node.backward, node.forward[0]
        if (prev is None or prev.score < score) and (nxt is None or nxt.score > score):
            # Still strictly between its neighbours: the order is unchanged, only
            # the group-start flags of the node and of its successor can change.
            old_start = prev is None or prev.score != node.score
            node_delta = 1 - old_start
            next_delta = 0 if nxt is None else 1 - (nxt.score != node.score)
            for i in range(self._level):
                update[i].dspan[i] += node_delta
                if i < len(node.forward):
                    node.dspan[i] += next_delta
                else:
                    update[i].dspan[i] += next_delta
            node.score = score
            self._groups += node_delta + next_delta
            self._mods += 1
            return
        self._unlink(node, update)
        self._insert(node.member, score)  # replaces the dict entry

    def _build(self, pairs: Sequence[tuple[bytes, float]]) -> None:
        """Fill an empty set from strictly ascending, distinct pairs in O(n).

        Each node draws its level as usual; ``last[i]`` remembers the latest node
        on level i, so linking is one append per level and the spans are rank
        differences.
        """
        header = self._header
        last = [header] * MAX_LEVEL
        last_rank = [0] * MAX_LEVEL
        last_dense = [0] * MAX_LEVEL
        top, groups, prev = 1, 0, None
        for rank, (member, score) in enumerate(pairs, 1):
            level = _random_level()
            node = _Node(member, score, level)
            if prev is None or prev.score != score:
                groups += 1
            for i in range(level):
                before = last[i]
                before.forward[i] = node
                before.span[i] = rank - last_rank[i]
                before.dspan[i] = groups - last_dense[i]
                last[i], last_rank[i], last_dense[i] = node, rank, groups
            node.backward = prev
            top = max(top, level)
            self._dict[member] = node
            self._node_bytes += _node_size(node)
            prev = node
        count = len(pairs)
        for i in range(top):
            last[i].span[i] = count - last_rank[i]
            last[i].dspan[i] = groups - last_dense[i]
        self._tail = prev
        self._length = count
        self._groups = groups
        self._level = top
        self._mods += 1

    def _nodes(self, reverse: bool = False) -> Iterator[_Node]:
        node = self._tail if reverse else self._header.forward[0]
        while node is not None:
            yield node
            node = node.backward if reverse else node.forward[0]

    # Used by the set algebra (see _skiplist_algebra.Source).
    def _pairs(self) -> Iterator[tuple[bytes, float]]:
        for node in self._nodes():
            yield node.member, node.score

    def _lookup(self, member: bytes) -> float | None:
        node = self._dict.get(member)
        return None if node is None else node.score

    # -- size -------------------------------------------------------------------------

    def __len__(self) -> int:
        """Number of members. O(1). Redis: ZCARD."""
        return self._length

    def __contains__(self, member: object) -> bool:
        """O(1). Non-``str``/``bytes`` objects are simply not members. Redis: ZSCORE."""
        if not isinstance(member, str | bytes):
            return False
        return to_member(member) in self._dict

    def __iter__(self) -> Iterator[str | bytes]:
        """Members in ascending order, as :meth:`items` (safe while the set changes).

        O(1) per step. Redis: ZRANGE.
        """
        return (member for member, _ in self.items())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._length} members)"

    def clear(self) -> None:
        """Remove every member. O(n). Redis: DEL."""
        self._reset()

    # -- writes -----------------------------------------------------------------------

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
        check_flags(nx, xx, gt, lt)
        return self._add(to_member(member), to_score(score), nx, xx, gt, lt, ch)

    def _add(
        self, member: bytes, score: float, nx: bool, xx: bool, gt: bool, lt: bool, ch: bool
    ) -> int:
        node = self._dict.get(member)
        if node is None:
            if xx:
                return 0
            self._insert(member, score)
            return 1
        if nx:
            return 0
        current = node.score
        if (gt and not score > current) or (lt and not score < current):
            return 0
        if score != current:  # so 0.0 never overwrites a stored -0.0
            self._set_score(node, score)
            return 1 if ch else 0
        return 0

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
        """ZADD with many (member, score) pairs: O(k log n). Redis: ZADD.

        Every score is validated first. Pairs are applied in order (a member given twice ends
        with its last score, and is counted as Redis counts it). Returns the count as
        :meth:`add` does, summed.
        """
        check_flags(nx, xx, gt, lt)
        checked = to_pairs(pairs)
        return sum(self._add(m, s, nx, xx, gt, lt, ch) for m, s in checked)

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
        check_flags(nx, xx, gt, lt)
        key = to_member(member)
        step = to_score(amount, "increment")
        node = self._dict.get(key)
        if node is None:
            if xx:
                return None
            # Redis stores the increment itself, so a -0.0 increment keeps its sign.
            self._insert(key, step)
            return step
        if nx:
            return None
        current = node.score
        new = current + step
        if new != new:
            raise InvalidScoreError("resulting score is not a number (NaN)")
        if (gt and not new > current) or (lt and not new < current):
            return None
        if new != current:
            self._set_score(node, new)
        return new

    def remove(self, *members: Member) -> int:
        """Remove the members; returns how many existed. O(k log n). Redis: ZREM."""
        keys = [to_member(member) for member in members]
        removed = 0
        for key in keys:
            node = self._dict.get(key)
            if node is not None:
                self._delete(node)
                removed += 1
        return removed

    def load(self, pairs: Pairs) -> int:
        """Bulk add without flags; returns how many members were new. Redis: ZADD.

        O(n) when the set is empty and the pairs arrive strictly ascending by
        (score, member bytes) with no repeated member; otherwise O(n log n), with the
        same result.
        """
        checked = to_pairs(pairs)
        if self._length == 0 and _strictly_ascending(checked):
            self._build(checked)
            return len(checked)
        return sum(self._add(m, s, False, False, False, False, False) for m, s in checked)

    # -- point reads ------------------------------------------------------------------

    def score(self, member: Member) -> float | None:
        """The member's score, or ``None``. O(1). Redis: ZSCORE."""
        return self._lookup(to_member(member))

    def scores(self, members: Iterable[Member]) -> list[float | None]:
        """Scores of many members, ``None`` for missing ones. O(k). Redis: ZMSCORE."""
        keys = [to_member(member) for member in members]
        return [self._lookup(key) for key in keys]

    def index(self, member: Member, *, reverse: bool = False) -> int | None:
        """0-based position in ascending order (descending with ``reverse``), or ``None``.

        O(log n). Redis: ZRANK / ZREVRANK.
        """
        node = self._dict.get(to_member(member))
        if node is None:
            return None
        position = self._index_of(node)
        return self._length - 1 - position if reverse else position

    def rank(
        self, member: Member, *, style: RankStyle = "competition", reverse: bool = False
    ) -> int | None:
        """1-based rank of the member, or ``None`` if missing. O(log n) for every style.

        Ascending (lowest score is rank 1) unless ``reverse`` (highest score is rank 1).
        unique: index + 1, ties broken by member bytes (Redis order; Redis: ZRANK + 1).
        competition: 1 + number of members whose score is strictly better (1, 1, 3).
        dense: 1 + number of distinct scores strictly better (1, 1, 2).
        Unknown styles raise ``ValueError``. Redis has no equivalent for the last two.
        """
        if style not in RANK_STYLES:
            raise ValueError(f"rank style must be one of {RANK_STYLES}, not {style!r}")
        node = self._dict.get(to_member(member))
        if node is None:
            return None
        if style == "unique":
            position = self._index_of(node)
            return self._length - position if reverse else position + 1
        score = node.score
        if style == "competition":
            if reverse:  # 1 + how many score strictly higher
                return 1 + self._length - self._last_before(_below_score(score, inclusive=True))[1]
            return 1 + self._last_before(_below_score(score, inclusive=False))[1]
        dense_up = 1 + self._last_before(_below_score(score, inclusive=False))[2]
        return self._groups - dense_up + 1 if reverse else dense_up

    def at(self, index: int) -> Pair:
        """The (member, score) at a 0-based index; negative counts from the end.

        O(log n). ``IndexError`` when out of range. Redis: ZRANGE key i i WITHSCORES.
        """
        position = to_count(index, "index")
        if position < 0:
            position += self._length
        if not 0 <= position < self._length:
            raise IndexError("sorted set index out of range")
        node = self._node_at(position + 1)
        return self._out(node.member), node.score

    def __getitem__(self, index: int) -> Pair:
        """Same as :meth:`at`. O(log n)."""
        return self.at(index)

    # -- range reads ------------------------------------------------------------------

    def range_by_index(self, start: int, stop: int, *, reverse: bool = False) -> list[Pair]:
        """(member, score) pairs from index ``start`` to ``stop`` inclusive. O(log n + k).

        Redis: ZRANGE key start stop [REV] WITHSCORES (negative indexes, clamping).
        """
        bounds = _clamp_indexes(to_count(start, "start"), to_count(stop, "stop"), self._length)
        if bounds is None:
            return []
        first, last = bounds
        rank = self._length - first if reverse else first + 1
        node: _Node | None = self._node_at(rank)
        return self._collect(node, reverse, last - first + 1, lambda _: True)

    def range_around(
        self, member: Member, before: int, after: int, *, reverse: bool = False
    ) -> tuple[int, list[Pair]] | None:
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
        key = to_member(member)
        ahead, behind = to_count(before, "before"), to_count(after, "after")
        if ahead < 0:
            raise ValueError("before must not be negative")
        if behind < 0:
            raise ValueError("after must not be negative")
        node = self._dict.get(key)
        if node is None:
            return None
        position = self._index_of(node)  # the only descent
        index = self._length - 1 - position if reverse else position
        size = min(ahead + behind + 1, self._length)
        first = min(max(index - ahead, 0), self._length - size)
        start = node
        for _ in range(index - first):  # walk back to the window's first pair
            previous = start.forward[0] if reverse else start.backward
            assert previous is not None  # the window lies inside the set
            start = previous
        return index, self._collect(start, reverse, size, _all)

    def _collect(
        self, node: _Node | None, reverse: bool, count: int, inside: Callable[[_Node], bool]
    ) -> list[Pair]:
        """Walk from ``node`` while ``inside`` holds, taking up to ``count`` (<0: all)."""
        out: list[Pair] = []
        while node is not None and count != 0 and inside(node):
            out.append((self._out(node.member), node.score))
            count -= 1
            node = node.backward if reverse else node.forward[0]
        return out

    def _range(self, bounds: Range, reverse: bool, offset: int, count: int) -> list[Pair]:
        """Shared walk of score and lex ranges.

        ``bounds`` = (``below_low``, ``up_to_high``): ``below_low(n)``: n lies before the
        range; ``up_to_high(n)``: n does not lie after it. LIMIT offsets are skipped with
        one descent on spans.
        """
        below_low, up_to_high = bounds
        if offset < 0 or count == 0:
            return []
        if reverse:
            last_rank = self._last_before(up_to_high)[1]
            rank = last_rank - offset
            if rank < 1:
                return []
            return self._collect(self._node_at(rank), True, count, lambda node: not below_low(node))
        first_rank = self._last_before(below_low)[1] + 1 + offset
        if first_rank > self._length:
            return []
        return self._collect(self._node_at(first_rank), False, count, up_to_high)

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
    ) -> list[Pair]:
        """Pairs with min <= score <= max (bounds optionally exclusive). O(log n + offset + k).

        Redis: ZRANGE key min max BYSCORE [REV] [LIMIT offset count] WITHSCORES.
        NaN bounds raise ``InvalidScoreError``.
        """
        low, high = to_score(min, "min"), to_score(max, "max")
        skip, limit = to_count(offset, "offset"), to_count(count, "count")
        bounds = _score_range(low, high, min_exclusive, max_exclusive)
        return self._range(bounds, bool(reverse), skip, limit)

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
    ) -> list[Pair]:
        """Pairs whose member lies between ``min`` and ``max`` (``None``: unbounded).

        O(log n + offset + k). Redis: ZRANGE key min max BYLEX [REV] [LIMIT offset count].
        """
        low, high = to_member_or_none(min), to_member_or_none(max)
        skip, limit = to_count(offset, "offset"), to_count(count, "count")
        bounds = _lex_range(low, high, min_exclusive, max_exclusive)
        return self._range(bounds, bool(reverse), skip, limit)

    def count_by_score(
        self,
        min: float = float("-inf"),
        max: float = float("inf"),
        *,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
    ) -> int:
        """Number of members with a score in the range. O(log n). Redis: ZCOUNT."""
        low, high = to_score(min, "min"), to_score(max, "max")
        return self._count(_score_range(low, high, min_exclusive, max_exclusive))

    def count_by_lex(
        self,
        min: Member | None = None,
        max: Member | None = None,
        *,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
    ) -> int:
        """Number of members in the lex range. O(log n). Redis: ZLEXCOUNT."""
        low, high = to_member_or_none(min), to_member_or_none(max)
        return self._count(_lex_range(low, high, min_exclusive, max_exclusive))

    def _count(self, bounds: Range) -> int:
        """How many nodes lie in the range: two descents. O(log n)."""
        below = self._last_before(bounds[0])[1]
        up_to = self._last_before(bounds[1])[1]
        return up_to - below if up_to > below else 0

    def items(
        self, *, reverse: bool = False, after: tuple[float, Member] | None = None
    ) -> Iterator[Pair]:
        """Iterate (member, score) pairs in order, strictly after the point ``after``.

        A cursor: each step resumes after the last (score, member) it yielded, so the
        iteration stays correct while the set changes (members inserted ahead of the
        cursor are seen, members behind it are not, nothing is yielded twice unless its
        score moved it ahead). O(1) amortised per step when the set did not change,
        O(log n) after a change. Redis: ZSCAN-like.
        """
        point: tuple[float, bytes] | None = None
        if after is not None:
            if not isinstance(after, tuple) or len(after) != 2:
                raise TypeError("after must be a (score, member) tuple")
            point = (to_score(after[0], "after score"), to_member(after[1]))
        return self._cursor(bool(reverse), point)

    def _cursor(self, reverse: bool, point: tuple[float, bytes] | None) -> Iterator[Pair]:
        node: _Node | None = None
        seen_mods = -1
        while True:
            if node is not None and seen_mods == self._mods:
                node = node.backward if reverse else node.forward[0]  # unchanged: O(1)
            elif point is None:
                node = self._tail if reverse else self._header.forward[0]
            else:
                node = self._neighbour(point, reverse)
            if node is None:
                return
            point = (node.score, node.member)
            seen_mods = self._mods
            yield self._out(node.member), node.score

    def _neighbour(self, point: tuple[float, bytes], reverse: bool) -> _Node | None:
        """The first node strictly after ``point`` (strictly before it when reversed)."""
        if reverse:
            node = self._last_before(_before_point(*point))[0]
            return None if node is self._header else node
        return self._last_before(_at_or_before_point(*point))[0].forward[0]

    def items_after(
        self, score: float, member: Member, count: int, *, reverse: bool = False
    ) -> list[Pair]:
        """Up to ``count`` pairs strictly after (score, member) (before it when reversed).

        O(log n + count). ``count < 0`` raises ``ValueError``. Redis: ZRANGE BYSCORE
        with an exclusive bound, made exact for ties.
        """
        point = (to_score(score), to_member(member))
        limit = to_count(count)
        if limit < 0:
            raise ValueError("count must not be negative")
        if limit == 0:
            return []
        return self._collect(self._neighbour(point, bool(reverse)), bool(reverse), limit, _all)

    # -- removals ---------------------------------------------------------------------

    def _remove_run(self, update: list[_Node], count: int, inside: Callable[[_Node], bool]) -> int:
        """Delete up to ``count`` (<0: all) nodes after ``update[0]`` while ``inside``."""
        removed = 0
        node = update[0].forward[0]
        while node is not None and removed != count and inside(node):
            nxt = node.forward[0]
            self._unlink(node, update)
            del self._dict[node.member]
            removed += 1
            node = nxt
        return removed

    def remove_range_by_index(self, start: int, stop: int) -> int:
        """Remove an index range (inclusive, negatives as ZRANGE). O(log n + k).

        Redis: ZREMRANGEBYRANK.
        """
        bounds = _clamp_indexes(to_count(start, "start"), to_count(stop, "stop"), self._length)
        if bounds is None:
            return 0
        first, last = bounds
        node = self._node_at(first + 1)
        update = self._descend(_before_point(node.score, node.member))[0]
        return self._remove_run(update, last - first + 1, _all)

    def remove_range_by_score(
        self,
        min: float,
        max: float,
        *,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
    ) -> int:
        """Remove members in the score range. O(log n + k). Redis: ZREMRANGEBYSCORE."""
        low, high = to_score(min, "min"), to_score(max, "max")
        return self._remove_range(_score_range(low, high, min_exclusive, max_exclusive))

    def remove_range_by_lex(
        self,
        min: Member | None,
        max: Member | None,
        *,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
    ) -> int:
        """Remove members in the lex range. O(log n + k). Redis: ZREMRANGEBYLEX."""
        low, high = to_member_or_none(min), to_member_or_none(max)
        return self._remove_range(_lex_range(low, high, min_exclusive, max_exclusive))

    def _remove_range(self, bounds: Range) -> int:
        """Delete every node in the range. O(log n + k)."""
        below_low, up_to_high = bounds
        return self._remove_run(self._descend(below_low)[0], -1, up_to_high)

    def pop_min(self, count: int = 1) -> list[Pair]:
        """Remove and return up to ``count`` lowest pairs, lowest first. O(k log n).

        Redis: ZPOPMIN. ``count < 0`` raises ``ValueError``; 0 returns [].
        """
        return self._pop(count, highest=False)

    def pop_max(self, count: int = 1) -> list[Pair]:
        """Remove and return up to ``count`` highest pairs, highest first. O(k log n).

        Redis: ZPOPMAX. ``count < 0`` raises ``ValueError``; 0 returns [].
        """
        return self._pop(count, highest=True)

    def _pop(self, count: int, *, highest: bool) -> list[Pair]:
        limit = to_count(count)
        if limit < 0:
            raise ValueError("count must not be negative")
        out: list[Pair] = []
        first = [self._header] * MAX_LEVEL  # the header precedes the first node everywhere
        while len(out) < limit and self._tail is not None:
            node = self._tail if highest else self._header.forward[0]
            assert node is not None
            out.append((self._out(node.member), node.score))
            if highest:
                self._delete(node)
            else:
                self._unlink(node, first)  # no descent: nothing lies before the first node
                del self._dict[node.member]
        return out

    def random_member(self) -> Pair | None:
        """One uniformly random pair, or ``None`` when empty. O(log n). Redis: ZRANDMEMBER key."""
        if not self._length:
            return None
        node = self._node_at(_random.randrange(self._length) + 1)
        return self._out(node.member), node.score

    def random_members(self, count: int) -> list[Pair]:
        """Redis ZRANDMEMBER key count WITHSCORES semantics.

        count > 0: min(count, len) distinct members; count < 0: |count| independent draws
        (repeats allowed); 0: []. O(|count| log n) or O(n) when count >= len.
        """
        wanted = to_count(count)
        length = self._length
        if wanted == 0 or length == 0:
            return []
        if wanted >= length:
            return [(self._out(node.member), node.score) for node in self._nodes()]
        if wanted > 0:
            positions = _random.sample(range(length), wanted)
        else:
            positions = [_random.randrange(length) for _ in range(-wanted)]
        out: list[Pair] = []
        for position in positions:
            node = self._node_at(position + 1)
            out.append((self._out(node.member), node.score))
        return out

    # -- set algebra ------------------------------------------------------------------

    @classmethod
    def _from_scores(cls, scores: Iterable[tuple[bytes, float]], raw: bool) -> SortedSet:
        result = cls(raw=raw)
        result._build(sorted(scores, key=lambda pair: (pair[1], pair[0])))
        return result

    @classmethod
    def _sources(cls, sets: Sequence[SortedSet]) -> list[algebra.Source]:
        """The input sets, read once into a list of our own (it holds them for the call)."""
        if isinstance(sets, SortedSet) or not isinstance(sets, Sequence):
            raise TypeError("sets must be a sequence of SortedSet")
        sources: list[algebra.Source] = list(sets)
        for item in sources:
            if not isinstance(item, SortedSet):
                raise TypeError(f"sets must hold SortedSet objects, not {type(item).__name__}")
        return sources

    @classmethod
    def union(
        cls,
        sets: Sequence[SortedSet],
        weights: Sequence[float] | None = None,
        aggregate: Aggregate = "sum",
        *,
        raw: bool = False,
    ) -> SortedSet:
        """Union of the sets. O(N log N) for N input members.

        Redis: ZUNION ... WEIGHTS ... AGGREGATE ...

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
        return cls._combine(algebra.union_scores, sets, weights, aggregate, raw)

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

        O(k * m) lookups for the smallest set's k members and m sets. As in Redis, the
        smallest input drives the loop: its weighted scores that are NaN count as 0; a NaN
        product from another input enters the aggregate as is (SUM then turns a NaN total
        into 0, MIN and MAX ignore it).
        """
        return cls._combine(algebra.inter_scores, sets, weights, aggregate, raw)

    @classmethod
    def _combine(
        cls,
        scores: algebra.Combine,
        sets: Sequence[SortedSet],
        weights: Sequence[float] | None,
        aggregate: Aggregate,
        raw: object,
    ) -> SortedSet:
        """Union or inter (``scores``) of the weighted inputs, smallest input first."""
        paired = algebra.weigh_inputs(cls._sources(sets), weights, aggregate)
        flag = bool(raw)  # every argument converts before a set is read, as in the C engine
        inputs = algebra.smallest_first(paired)
        return cls._from_scores(scores(inputs, aggregate).items(), flag)

    @classmethod
    def diff(cls, sets: Sequence[SortedSet], *, raw: bool = False) -> SortedSet:
        """Members of the first set found in none of the others, with their first-set scores.

        O(n * m) lookups for the first set's n members. Redis: ZDIFF.
        """
        sources = cls._sources(sets)
        if not sources:
            raise ValueError("at least one input set is required")
        raw = bool(raw)
        return cls._from_scores(algebra.diff_pairs(sources), raw)

    # -- whole set --------------------------------------------------------------------

    def copy(self) -> SortedSet:
        """An independent copy (same ``raw``). O(n). Redis: COPY."""
        clone = type(self)(raw=self._raw)
        clone._build(list(self._pairs()))
        return clone

    def __copy__(self) -> SortedSet:
        """``copy.copy(s)``: as :meth:`copy`. O(n)."""
        return self.copy()

    def __deepcopy__(self, memo: dict[int, object]) -> SortedSet:
        """``copy.deepcopy(s)``: as :meth:`copy` (members and scores are immutable). O(n)."""
        return self.copy()

    def __reduce__(self) -> tuple[type[SortedSet], tuple[()], tuple[bytes, bool]]:
        """Pickle support, every protocol: ``(SortedSet, (), (snapshot, raw))``. O(n).

        :meth:`__setstate__` loads the state.
        """
        return (type(self), (), (self.snapshot(), self._raw))

    def __setstate__(self, state: object) -> None:
        """Pickle support: the contents become those of a ``(snapshot bytes, raw)`` state.

        The state is checked and the snapshot decoded before the set changes, so a state
        of another shape raises ``TypeError``, a bad snapshot ``SnapshotError``, and either
        leaves the set as it was. Open cursors re-seek from their point. O(n).
        """
        if not (isinstance(state, tuple) and len(state) == 2 and isinstance(state[0], bytes)):
            raise TypeError("SortedSet state must be a (snapshot bytes, raw) tuple")
        raw = bool(state[1])
        pairs = snapshot_format.decode(state[0])
        self._raw = raw
        self._reset()
        self._build(pairs)

    def snapshot(self) -> bytes:
        """Serialise to bytes: O(n). Redis: DUMP (own format).

        Format (identical in both implementations): b"RKZS" + version byte 1 + count as
        u64 little-endian, then per member in ascending order: score as f64 little-endian,
        member length as u32 little-endian, member bytes.
        """
        return snapshot_format.encode(self._length, self._pairs())

    @classmethod
    def restore(cls, data: bytes, *, raw: bool = False) -> SortedSet:
        """Rebuild from :meth:`snapshot` output in O(n). Redis: RESTORE (own format).

        Truncated, trailing or corrupt data, NaN scores, unordered or repeated members
        raise ``SnapshotError``.
        """
        pairs = snapshot_format.decode(data)
        result = cls(raw=raw)
        result._build(pairs)
        return result

    def memory_usage(self) -> int:
        """Bytes used by the structure (nodes, members, index). O(1). Redis: MEMORY USAGE.

        The C engine counts what it allocated; this twin estimates with ``sys.getsizeof``.
        """
        return (
            sys.getsizeof(self)
            + _node_size(self._header)
            + self._node_bytes
            + sys.getsizeof(self._dict)
        )

    # -- invariants -------------------------------------------------------------------

    def _check(self) -> None:
        """Verify every invariant (order, spans, dense spans, levels, backward pointers,
        tail, length, hash table <-> list agreement); raise ``AssertionError`` naming the
        first one broken. O(n).
        """
        header = self._header
        assert header.backward is None, "header has a backward pointer"
        assert 1 <= self._level <= MAX_LEVEL, f"level {self._level} out of range"
        assert self._level == 1 or header.forward[self._level - 1] is not None, (
            "level not shrunk after its top lane emptied"
        )
        for i in range(self._level, MAX_LEVEL):
            assert header.forward[i] is None, f"header links on unused level {i}"

        # Level 0: order, backward pointers, tail, length, group starts, dict agreement.
        nodes: list[_Node] = []
        starts: list[int] = []  # starts[k] = group starts among the first k nodes
        groups = 0
        prev: _Node | None = None
        node = header.forward[0]
        total_bytes = 0
        while node is not None:
            assert node.score == node.score, "NaN score stored"
            level = len(node.forward)
            assert 1 <= level <= self._level, f"node level {level} outside 1..{self._level}"
            assert len(node.span) == level and len(node.dspan) == level, "lane lists differ"
            assert node.backward is prev, "backward pointer broken"
            if prev is not None:
                assert (prev.score, prev.member) < (node.score, node.member), "order broken"
            if prev is None or prev.score != node.score:
                groups += 1
            assert self._dict.get(node.member) is node, "dict does not point at the node"
            starts.append(groups)
            nodes.append(node)
            total_bytes += _node_size(node)
            prev, node = node, node.forward[0]
        assert self._tail is prev, "tail is not the last node"
        assert len(nodes) == self._length, "length disagrees with the list"
        assert len(self._dict) == self._length, "dict size disagrees with the list"
        assert groups == self._groups, "distinct-score count wrong"
        assert total_bytes == self._node_bytes, "memory accounting drifted"

        # Every lane: visits exactly the nodes that tall; spans = rank differences.
        position = {id(n): k + 1 for k, n in enumerate(nodes)}
        groups_upto = [0, *starts]  # by 1-based rank; header = rank 0
        for i in range(self._level):
            expected = [n for n in nodes if len(n.forward) > i]
            at, rank = header, 0
            for target in expected:
                assert at.forward[i] is target, f"lane {i} skips or repeats a node"
                target_rank = position[id(target)]
                assert at.span[i] == target_rank - rank, f"span wrong on lane {i}"
                assert at.dspan[i] == groups_upto[target_rank] - groups_upto[rank], (
                    f"distinct span wrong on lane {i}"
                )
                at, rank = target, target_rank
            assert at.forward[i] is None, f"lane {i} does not end"
            assert at.span[i] == self._length - rank, f"open span wrong on lane {i}"
            assert at.dspan[i] == groups - groups_upto[rank], (
                f"open distinct span wrong on lane {i}"
            )


def _all(_: _Node) -> bool:
    return True


def _strictly_ascending(pairs: Sequence[tuple[bytes, float]]) -> bool:
    """True when pairs go strictly up in (score, member) and no member repeats."""
    seen: set[bytes] = set()
    previous: tuple[float, bytes] | None = None
    for member, score in pairs:
        if member in seen or (previous is not None and not previous < (score, member)):
            return False
        seen.add(member)
        previous = (score, member)
    return True
