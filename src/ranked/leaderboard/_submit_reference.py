"""Submissions on the in-process engine: validate every target, then write, trim, stamp TTLs.

:func:`apply_submit` runs under the memory backend's lock. It works in two passes: the
first reads the stored scores and computes every new score (raising before anything
changes), the second writes. The second pass cannot fail, so one submission is atomic by
construction. A batch is atomic as a whole through a :class:`Journal`: every change is
recorded and undone in reverse when a later submission of the batch fails.
"""

from __future__ import annotations

import math
from math import isfinite
from typing import Final, Literal, cast

from ..backends.checks import STYLES
from ..backends.generic import stored
from ..engine.keyspace import Keyspace
from ..engine.zset import SortedSet
from ..errors import InvalidScoreError
from ._composite import check_layout, integer_score, pack, stored_score
from ._requests import (
    EXACT_LIMIT,
    Composite,
    SubmitOutcome,
    SubmitRequest,
    Target,
    exact_score,
    incremented,
)

__all__ = [
    "Hash",
    "Journal",
    "apply_submit",
    "submit_single",
    "ties_hash",
]

Hash = dict[bytes, bytes]

EngineStyle = Literal["unique", "competition", "dense"]
_OPERATORS: Final = frozenset(("best", "set", "incr", "decr"))


class Journal:
    """What a batch changed so far, to put back exactly when a later submission fails."""

    __slots__ = ("fields", "keys", "members")

    def __init__(self) -> None:
        # key -> (its value before the batch or None, its deadline before the batch)
        self.keys: dict[bytes, tuple[SortedSet | Hash | None, int | None]] = {}
        # (sorted set, member, score before the change or None), in the order applied
        self.members: list[tuple[SortedSet, bytes, float | None]] = []
        # (ties hash, field, value before the change or None), in the order applied
        self.fields: list[tuple[Hash, bytes, bytes | None]] = []

    def touch(self, keyspace: Keyspace, key: bytes, value: SortedSet | Hash | None) -> None:
        """Remember ``key`` as it was before its first change in this batch."""
        if key not in self.keys:
            self.keys[key] = (value, keyspace.deadline(key) if value is not None else None)

    def rollback(self, keyspace: Keyspace) -> None:
        """Undo every recorded change, newest first, then restore keys and deadlines."""
        for zset, member, score in reversed(self.members):
            if score is None:
                zset.remove(member)
            else:
                zset.add(member, score)
        for ties, field, value in reversed(self.fields):
            if value is None:
                ties.pop(field, None)
            else:
                ties[field] = value
        for key, (before, deadline) in self.keys.items():
            if before is None:
                keyspace.delete(key)
                continue
            keyspace.store(key, before)
            if deadline is not None:
                keyspace.put_deadline(key, deadline)


def ties_hash(keyspace: Keyspace, key: bytes, create: bool) -> Hash | None:
    """The ties hash at ``key`` (created empty with ``create``); WRONGTYPE for another type."""
    return stored(keyspace, key, dict, create)


def _check_request(request: SubmitRequest) -> None:
    value = request.value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidScoreError(f"a score must be a number, not {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidScoreError(f"a score must be a finite number, not {value!r}")
    if isinstance(value, int) and request.composite is None:
        exact_score(value)  # OutOfRangeError for an int a float64 would round
    if request.operator not in _OPERATORS:
        raise ValueError(f"unknown operator {request.operator!r}")
    if request.style not in STYLES:
        raise ValueError(f"unknown rank style {request.style!r}")
    if request.keep is not None and request.keep < 0:
        raise ValueError(f"keep must not be negative, not {request.keep}")
    for target in request.targets:
        if target.ttl_ms is not None and target.ttl_ms <= 0:
            raise ValueError(f"ttl_ms must be positive, not {target.ttl_ms}")


def _plain_score(request: SubmitRequest, old: float | None) -> float:
    value = request.value
    operator = request.operator
    if old is None:
        # "+ 0.0" turns -0.0 into 0.0: the contract stores no negative zero.
        return (-value if operator == "decr" else value) + 0.0
    if operator == "best":
        better = value > old if request.high_first else value < old
        return value + 0.0 if better else old
    if operator == "set":
        return value + 0.0
    return incremented(old, value if operator == "incr" else -value)


def _composite_score(
    request: SubmitRequest, layout: Composite, score: int, old: float | None
) -> float:
    operator = request.operator
    if operator in ("incr", "decr"):
        if score == 0 and old is not None:
            return old  # adding nothing changes nothing: no new achieved-at time
        base = 0 if old is None else stored_score(layout, old)
        return pack(layout, base + score if operator == "incr" else base - score, request.now_ms)
    packed = pack(layout, score, request.now_ms)
    if operator == "set" or old is None:
        return packed
    better = packed > old if request.high_first else packed < old
    return packed if better else old


def _plan(
    keyspace: Keyspace, request: SubmitRequest
) -> list[tuple[Target, SortedSet | None, float | None, float]]:
    """(target, its set or None, stored score, new score) per target; raises before writes."""
    _check_request(request)
    layout = request.composite
    score = 0
    if layout is not None:
        check_layout(layout)
        score = integer_score(request.value)
    member = request.member
    plans: list[tuple[Target, SortedSet | None, float | None, float]] = []
    planned: dict[bytes, float] = {}
    for target in request.targets:
        zset = keyspace.zset(target.key)
        if target.ties_key is not None:
            ties_hash(keyspace, target.ties_key, create=False)  # WRONGTYPE before any write
        if target.key in planned:  # the same key twice: the second write sees the first
            old: float | None = planned[target.key]
        else:
            old = None if zset is None else zset.score(member)
        if layout is None:
            new = _plain_score(request, old)
        else:
            new = _composite_score(request, layout, score, old)
        planned[target.key] = new
        plans.append((target, zset, old, new))
    return plans


def submit_single(keyspace: Keyspace, request: SubmitRequest) -> tuple[SubmitOutcome, ...]:
    """The hot path: one target, no composite score, no journal (same result as
    :func:`apply_submit`, with fewer Python steps)."""
    value = request.value
    if value.__class__ is float:
        if not isfinite(value):
            raise InvalidScoreError(f"a score must be a finite number, not {value!r}")
    elif value.__class__ is not int or not -EXACT_LIMIT < value < EXACT_LIMIT:
        # The general path raises the error, or takes an exact int beyond 2**53 as it is.
        return apply_submit(keyspace, request, None)
    style: EngineStyle = request.style  # type: ignore[assignment]  # no cast() call: hot path
    operator = request.operator
    keep = request.keep
    target = request.targets[0]
    ttl_ms = target.ttl_ms
    if (
        operator not in _OPERATORS
        or style not in STYLES
        or (keep is not None and keep < 0)
        or (ttl_ms is not None and ttl_ms <= 0)
        or target.ties_key is not None
    ):
        return apply_submit(keyspace, request, None)  # errors and tie values: the general path
    member = request.member
    reverse = request.high_first
    key = target.key
    zset = keyspace.zset_fast(key)
    if zset is None:
        zset = keyspace.zset(key)
    if zset is None:
        new = (-value if operator == "decr" else value) + 0.0  # _plain_score(request, None)
        zset = keyspace.zset(key, create=True)
        assert zset is not None
        zset.add(member, new)
        outcome = SubmitOutcome(new, None, None, None, True)
    else:
        old = zset.score(member)
        if old is None:
            new = (-value if operator == "decr" else value) + 0.0
            zset.add(member, new)
            outcome = SubmitOutcome(new, None, None, None, True)
        else:
            # _plain_score's set and best, inlined ("+ 0.0": no negative zero is stored)
            if operator == "set":
                new = value + 0.0
            elif operator == "best":
                better = value > old if reverse else value < old
                new = value + 0.0 if better else old
            else:
                new = _plain_score(request, old)
            previous_rank = zset.rank(member, style=style, reverse=reverse)
            if new != old:
                zset.add(member, new)
                outcome = SubmitOutcome(new, old, None, previous_rank, True)
            else:
                outcome = SubmitOutcome(new, old, previous_rank, previous_rank, False)
                if keep is None and ttl_ms is None:
                    # Unchanged and nothing trimmed: the rank is the previous one.
                    return (outcome,)
    if keep is not None and len(zset) > keep:
        _trim(zset, len(zset) - keep, reverse, None, None)
    if ttl_ms is not None:
        keyspace.put_deadline(key, keyspace.now_ms() + ttl_ms)
    # An unchanged score keeps its rank; keep may have trimmed the member, so then the
    # rank is read again (None when it is gone).
    if outcome.changed or keep is not None:
        outcome.rank = zset.rank(member, style=style, reverse=reverse)
    return (outcome,)


def apply_submit(
    keyspace: Keyspace, request: SubmitRequest, journal: Journal | None
) -> tuple[SubmitOutcome, ...]:
    """Apply one submission to all its targets; one outcome per target, in order."""
    plans = _plan(keyspace, request)
    member = request.member
    style = cast(EngineStyle, request.style)
    reverse = request.high_first
    keep = request.keep
    tie = request.tie
    outcomes = []
    for target, zset, old, new in plans:
        key = target.key
        if zset is None:
            zset = keyspace.zset(key)  # an earlier target of this request may have made it
        if journal is not None:
            journal.touch(keyspace, key, zset)
        if zset is None:
            zset = keyspace.zset(key, create=True)
            assert zset is not None
            previous_rank = None
        else:
            previous_rank = None if old is None else zset.rank(member, style=style, reverse=reverse)
        changed = old is None or new != old
        if changed:
            if journal is not None:
                journal.members.append((zset, member, old))
            zset.add(member, new)
        ties_key = target.ties_key
        if ties_key is not None and changed and tie is not None:
            _set_tie(keyspace, ties_key, member, tie, journal)
        if keep is not None and len(zset) > keep:
            trim_ties = None if ties_key is None else (keyspace, ties_key)
            _trim(zset, len(zset) - keep, reverse, journal, trim_ties)
        if target.ttl_ms is not None:
            deadline = keyspace.now_ms() + target.ttl_ms
            keyspace.put_deadline(key, deadline)
            if ties_key is not None and keyspace.get(ties_key) is not None:
                keyspace.put_deadline(ties_key, deadline)
        rank = zset.rank(member, style=style, reverse=reverse)
        outcomes.append(SubmitOutcome(new, old, rank, previous_rank, changed))
    return tuple(outcomes)


def _set_tie(
    keyspace: Keyspace, ties_key: bytes, member: bytes, tie: bytes, journal: Journal | None
) -> None:
    """HSET ties_key member tie, recorded in the journal."""
    ties = ties_hash(keyspace, ties_key, create=False)
    if journal is not None:
        journal.touch(keyspace, ties_key, ties)
    if ties is None:
        ties = ties_hash(keyspace, ties_key, create=True)
        assert ties is not None
    if journal is not None:
        journal.fields.append((ties, member, ties.get(member)))
    ties[member] = bytes(tie)


def _trim(
    zset: SortedSet,
    excess: int,
    high_first: bool,
    journal: Journal | None,
    ties: tuple[Keyspace, bytes] | None,
) -> None:
    """Remove the ``excess`` worst members (the last ones in board order), and their
    fields of the ties hash (``ties``: the keyspace and the hash's key)."""
    start, stop = (0, excess - 1) if high_first else (-excess, -1)
    if journal is not None or ties is not None:
        worst = zset.range_by_index(start, stop)
        if journal is not None:
            for gone, score in worst:
                assert isinstance(gone, bytes)
                journal.members.append((zset, gone, score))
        if ties is not None:
            stored = ties_hash(ties[0], ties[1], create=False)
            if stored is not None:
                if journal is not None:
                    journal.touch(ties[0], ties[1], stored)
                for gone, _ in worst:
                    assert isinstance(gone, bytes)
                    value = stored.pop(gone, None)
                    if journal is not None and value is not None:
                        journal.fields.append((stored, gone, value))
    zset.remove_range_by_index(start, stop)
