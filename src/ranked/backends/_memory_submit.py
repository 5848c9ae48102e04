"""Submissions on the in-process engine: validate every target, then write, trim, stamp TTLs.

:func:`apply_submit` runs under the memory backend's lock. It works in two passes: the
first reads the stored scores and computes every new score (raising before anything
changes), the second writes. The second pass cannot fail, so one submission is atomic by
construction. A batch is atomic as a whole through a :class:`Journal`: every change is
recorded and undone in reverse when a later submission of the batch fails.
"""

from __future__ import annotations

import math
import sys
from math import isfinite
from typing import Final, Literal, cast

from ..engine.keyspace import Keyspace
from ..engine.zset import SortedSet
from ..errors import InvalidScoreError
from ._memory_composite import check_layout, integer_score, pack, stored_score
from .base import Composite, SubmitOutcome, SubmitRequest, Target

__all__ = ["STYLES", "Journal", "apply_submit", "submit_single"]

EngineStyle = Literal["unique", "competition", "dense"]
STYLES: Final = frozenset(("unique", "competition", "dense"))
_FLOAT_MAX: Final = sys.float_info.max
_OPERATORS: Final = frozenset(("best", "set", "incr", "decr"))


class Journal:
    """What a batch changed so far, to put back exactly when a later submission fails."""

    __slots__ = ("keys", "members")

    def __init__(self) -> None:
        # key -> (its sorted set before the batch or None, its deadline before the batch)
        self.keys: dict[bytes, tuple[SortedSet | None, int | None]] = {}
        # (sorted set, member, score before the change or None), in the order applied
        self.members: list[tuple[SortedSet, bytes, float | None]] = []

    def touch(self, keyspace: Keyspace, key: bytes, zset: SortedSet | None) -> None:
        """Remember ``key`` as it was before its first change in this batch."""
        if key not in self.keys:
            self.keys[key] = (zset, keyspace.deadline(key) if zset is not None else None)

    def rollback(self, keyspace: Keyspace) -> None:
        """Undo every recorded change, newest first, then restore keys and deadlines."""
        for zset, member, score in reversed(self.members):
            if score is None:
                zset.remove(member)
            else:
                zset.add(member, score)
        for key, (before, deadline) in self.keys.items():
            if before is None:
                keyspace.delete(key)
                continue
            keyspace.store(key, before)
            if deadline is not None:
                keyspace.put_deadline(key, deadline)


def _check_request(request: SubmitRequest) -> None:
    value = request.value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidScoreError(f"a score must be a number, not {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidScoreError(f"a score must be a finite number, not {value!r}")
    if isinstance(value, int) and request.composite is None and abs(value) > _FLOAT_MAX:
        raise InvalidScoreError(f"a score must fit a float64, not {value}")
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
    new = old + value if operator == "incr" else old - value
    if not math.isfinite(new):
        raise InvalidScoreError(f"{operator} {value!r} on {old!r} gives {new!r}, not finite")
    return new + 0.0


def _composite_score(
    request: SubmitRequest, layout: Composite, score: int, old: float | None
) -> float:
    operator = request.operator
    if operator in ("incr", "decr"):
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
    elif value.__class__ is not int or not -_FLOAT_MAX <= value <= _FLOAT_MAX:
        return apply_submit(keyspace, request, None)  # the general path raises the error
    style: EngineStyle = request.style  # type: ignore[assignment]  # no cast() call: hot path
    keep = request.keep
    target = request.targets[0]
    ttl_ms = target.ttl_ms
    if (
        request.operator not in _OPERATORS
        or style not in STYLES
        or (keep is not None and keep < 0)
        or (ttl_ms is not None and ttl_ms <= 0)
    ):
        return apply_submit(keyspace, request, None)  # the general path raises the error
    member = request.member
    reverse = request.high_first
    key = target.key
    # Peek at the keyspace's tables: a live, non-empty sorted set without a deadline is
    # what Keyspace.zset() would return; anything else takes the checked path.
    zset = keyspace._values.get(key)
    if zset.__class__ is not SortedSet or key in keyspace._deadlines or not zset:
        zset = keyspace.zset(key)
    if zset is None:
        new = _plain_score(request, None)
        zset = keyspace.zset(key, create=True)
        assert zset is not None
        old = previous_rank = None
        zset.add(member, new)
        changed = True
    else:
        old = zset.score(member)
        new = _plain_score(request, old)
        if old is None:
            previous_rank = None
            changed = True
            zset.add(member, new)
        else:
            previous_rank = zset.rank(member, style=style, reverse=reverse)
            changed = new != old
            if changed:
                zset.add(member, new)
    if keep is not None and len(zset) > keep:
        _trim(zset, len(zset) - keep, reverse, None)
    if ttl_ms is not None:
        keyspace.put_deadline(key, keyspace.now_ms() + ttl_ms)
    return (
        SubmitOutcome(
            new, old, zset.rank(member, style=style, reverse=reverse), previous_rank, changed
        ),
    )


def apply_submit(
    keyspace: Keyspace, request: SubmitRequest, journal: Journal | None
) -> tuple[SubmitOutcome, ...]:
    """Apply one submission to all its targets; one outcome per target, in order."""
    plans = _plan(keyspace, request)
    member = request.member
    style = cast(EngineStyle, request.style)
    reverse = request.high_first
    keep = request.keep
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
        if keep is not None and len(zset) > keep:
            _trim(zset, len(zset) - keep, reverse, journal)
        if target.ttl_ms is not None:
            keyspace.put_deadline(key, keyspace.now_ms() + target.ttl_ms)
        rank = zset.rank(member, style=style, reverse=reverse)
        outcomes.append(SubmitOutcome(new, old, rank, previous_rank, changed))
    return tuple(outcomes)


def _trim(zset: SortedSet, excess: int, high_first: bool, journal: Journal | None) -> None:
    """Remove the ``excess`` worst members (the last ones in board order)."""
    start, stop = (0, excess - 1) if high_first else (-excess, -1)
    if journal is not None:
        for worst, score in zset.range_by_index(start, stop):
            assert isinstance(worst, bytes)
            journal.members.append((zset, worst, score))
    zset.remove_range_by_index(start, stop)
