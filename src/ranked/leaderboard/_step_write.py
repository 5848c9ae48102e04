"""A board's writes as steps: each its Lua script (Redis, Redis Cluster: one round trip)
and its reference on the memory backend's keyspace (under the backend's lock).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..backends._scripts import Arg, feature_script
from ..backends.procedure import Call, Step, answer
from ..engine.keyspace import Keyspace
from ._requests import SubmitOutcome, SubmitRequest, Target
from ._submit_reference import Journal, apply_submit, submit_single, ties_hash
from ._submit_script import submit_batch_call, submit_call

__all__ = ["REMOVE", "SUBMIT", "SUBMIT_BATCH"]


def _submit(keyspace: Keyspace, request: SubmitRequest) -> tuple[SubmitOutcome, ...]:
    if request.composite is None and len(request.targets) == 1:
        return submit_single(keyspace, request)
    return apply_submit(keyspace, request, None)


SUBMIT: Final = Step(submit_call, _submit)
"""``(request) -> one outcome per target``: one submission to all its targets (windows),
atomically. O(targets * log n). Redis: script ``submit`` (ZSCORE, ZADD, companions,
PEXPIRE, ranks)."""


def _submit_batch(
    keyspace: Keyspace, requests: Sequence[SubmitRequest]
) -> list[tuple[SubmitOutcome, ...]]:
    journal = Journal()
    try:
        return [apply_submit(keyspace, request, journal) for request in requests]
    except BaseException:
        journal.rollback(keyspace)
        raise


SUBMIT_BATCH: Final = Step(submit_batch_call, _submit_batch)
"""``(requests) -> outcomes per request``: submissions in order whose targets share one
hash slot, all or nothing (a failing one undoes the ones before it). Redis: one call of
script ``submit`` for the whole batch."""


def _remove_call(targets: Sequence[Target], members: Sequence[bytes]) -> Call[int]:
    if not targets or not members:
        return answer(0)
    keys: list[bytes] = []
    args: list[Arg] = [len(targets)]
    for target in targets:
        keys += (target.key, target.dense_key, target.counts_key)
        if target.ties_key is not None:
            keys.append(target.ties_key)
        args.append(0 if target.ties_key is None else 1)
    return Call(feature_script("ranked.leaderboard", "remove"), keys, [*args, *members], int)


def _remove(keyspace: Keyspace, targets: Sequence[Target], members: Sequence[bytes]) -> int:
    for target in targets:  # WRONGTYPE before any change
        if target.ties_key is not None:
            ties_hash(keyspace, target.ties_key, create=False)
    removed = 0
    for target in targets:
        zset = keyspace.zset(target.key)
        if zset is not None and members:
            removed += zset.remove(*members)
        if target.ties_key is not None:
            ties = ties_hash(keyspace, target.ties_key, create=False)
            if ties is not None:
                for member in members:
                    ties.pop(member, None)
    return removed


REMOVE: Final = Step(_remove_call, _remove)
"""``(targets, members) -> removals summed``: ZREM the members from every target (the
companions kept right), HDEL them from each target's ties hash. O(targets * k log n).
Redis: script ``remove``."""
