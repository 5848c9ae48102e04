"""The write step of member-encoded (lexicographic) boards: every entry at score 0,
ordered by its bytes; a hash (the index) maps each member to its stored encoding.
"""

from __future__ import annotations

from typing import Any, Final, cast

from ..backends._scripts import Arg, feature_script
from ..backends.checks import flag, ttl_arg
from ..backends.procedure import Call, Step
from ..engine.keyspace import Keyspace
from ._requests import LexOutcome, LexWrite, Target
from ._submit_reference import ties_hash

__all__ = ["LEX_REPLACE"]

_PACKAGE: Final = "ranked.leaderboard"


def _check(operator: str, target: Target) -> Arg:
    if operator not in ("set", "best"):
        raise ValueError(f"a lexicographic replace takes 'set' or 'best', not {operator!r}")
    return ttl_arg(target.ttl_ms)


def _outcome(reply: Any) -> LexOutcome:
    previous, stored, previous_rank, rank, changed = reply
    return LexOutcome(
        None if not previous else cast(bytes, previous),
        cast(bytes, stored),
        int(previous_rank) if previous_rank else None,
        int(rank),
        bool(changed),
    )


def _lex_replace_call(target: Target, index_key: bytes, write: LexWrite) -> Call[LexOutcome]:
    ttl = _check(write.operator, target)
    keys = (target.key, target.dense_key, target.counts_key, index_key)
    args: list[Arg] = [write.member, write.encoded, write.operator, flag(write.high_first), ttl]
    return Call(feature_script(_PACKAGE, "lex_replace"), keys, args, _outcome)


def _lex_replace(
    keyspace: Keyspace, target: Target, index_key: bytes, write: LexWrite
) -> LexOutcome:
    operator, high_first, member = write.operator, write.high_first, write.member
    _check(operator, target)
    encoded = bytes(write.encoded)
    index = ties_hash(keyspace, index_key, create=False)  # WRONGTYPE before writes
    zset = keyspace.zset(target.key)
    old = None if index is None else index.get(member)
    new = encoded
    if operator == "best" and old is not None:
        better = encoded > old if high_first else encoded < old
        new = encoded if better else old
    previous_rank = None
    if old is not None and zset is not None:
        found = zset.index(old, reverse=high_first)
        previous_rank = None if found is None else found + 1
    if zset is None:
        zset = keyspace.zset(target.key, create=True)
        assert zset is not None
    if new != old:
        if old is not None:
            zset.remove(old)
        index = ties_hash(keyspace, index_key, create=True)
        assert index is not None
        index[member] = new
    if zset.score(new) is None:  # a new entry, or one whose index outlived it
        zset.add(new, 0.0)
    if target.ttl_ms is not None:
        deadline = keyspace.now_ms() + target.ttl_ms
        keyspace.put_deadline(target.key, deadline)
        if keyspace.get(index_key) is not None:
            keyspace.put_deadline(index_key, deadline)
    rank = zset.index(new, reverse=high_first)
    assert rank is not None
    return LexOutcome(old, new, previous_rank, rank + 1, new != old)


LEX_REPLACE: Final = Step(_lex_replace_call, _lex_replace)
"""``(target, index_key, LexWrite) -> LexOutcome``: replace the member's entry by the
write's encoding in one step. Reads the previous encoding from the index (a hash member ->
stored encoding); ``set`` stores the new one, ``best`` the better of the two. When the
encoding changes: the old entry leaves, the new one enters at score 0, the index is
updated. The key and the index get the target's TTL on every call. O(log n). Redis:
script ``lex_replace`` (HGET, ZRANK, ZREM, ZADD, HSET, PEXPIRE)."""
