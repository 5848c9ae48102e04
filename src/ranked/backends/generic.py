"""Steps on keys of any kind, shared by every feature: each one Redis command (or a short
script) and its reference on the memory backend's keyspace, bound like any other
:class:`~ranked.backends.procedure.Step` (``backend.bind(HASH_GET)``).

Choices the commands leave open, the same on every backend: an empty list of keys,
fields or members sends nothing and changes nothing; a negative offset or count raises
``ValueError``; offsets past :data:`~.checks.MAX_POSITION` read nothing and counts past it
are clamped; a NaN score bound raises ``InvalidScoreError``; a TTL that is not positive
raises ``ValueError``; ``HASH_SET`` with no fields only sets the TTL of an existing hash.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from ..engine.commands.common import WRONGTYPE
from ..engine.keyspace import Keyspace
from ..errors import ResponseError
from ._scripts import Arg, script
from .checks import MAX_POSITION, not_negative, range_bound, ttl_arg
from .procedure import Call, Step, answer

__all__ = [
    "COUNT",
    "DELETE",
    "EXPIRE_AT",
    "HASH_DELETE",
    "HASH_GET",
    "HASH_SET",
    "LEX_COUNT",
    "LEX_RANGE",
    "SCORES",
    "SET_ADD",
    "SET_MEMBERS",
    "SET_REMOVE",
    "ByteRange",
    "stored",
]

T = TypeVar("T")
V = TypeVar("V", dict[bytes, bytes], set[bytes])


def stored(keyspace: Keyspace, key: bytes, kind: type[V], create: bool = False) -> V | None:
    """The hash (``dict``) or set at ``key``; None when absent (a new empty one stored
    when ``create``); ``ResponseError`` WRONGTYPE when the key holds another kind."""
    value = keyspace.get(key)
    if value is None:
        if not create:
            return None
        value = kind()
        keyspace.store(key, value)
    elif not isinstance(value, kind):
        raise ResponseError(WRONGTYPE)
    return value


def _on_key(command: str, key: bytes, items: Sequence[bytes], empty: T) -> Call[T]:
    """``command key *items``, answering ``empty`` without a round trip when there are no
    items; the reply decodes as ``type(empty)`` (``int``, ``list``)."""
    if not items:
        return answer(empty)
    return Call(None, (key,), [command, key, *items], type(empty))


# -- keys -----------------------------------------------------------------------------


def _delete_call(keys: Sequence[bytes]) -> Call[int]:
    return Call(None, keys, ["DEL", *keys], int) if keys else answer(0)


def _delete(keyspace: Keyspace, keys: Sequence[bytes]) -> int:
    return sum(1 for key in keys if keyspace.get(key) is not None and keyspace.delete(key))


DELETE: Final = Step(_delete_call, _delete)
"""``(keys) -> how many existed``: DEL. O(k)."""


def _expire_at_call(keys: Sequence[bytes], deadline_ms: int) -> Call[None]:
    if not keys:
        return answer(None)
    return Call(script("expire_at"), keys, [int(deadline_ms)], lambda _reply: None)


def _expire_at(keyspace: Keyspace, keys: Sequence[bytes], deadline_ms: int) -> None:
    for key in keys:
        keyspace.set_deadline(key, deadline_ms)


EXPIRE_AT: Final = Step(_expire_at_call, _expire_at)
"""``(keys, deadline_ms)``: PEXPIREAT on each key that exists (a past deadline deletes
it). O(k)."""


# -- hashes ---------------------------------------------------------------------------


def _hash_set_call(key: bytes, fields: Mapping[bytes, bytes], ttl_ms: int | None) -> Call[None]:
    ttl = ttl_arg(ttl_ms)
    if not fields and ttl_ms is None:
        return answer(None)
    args: list[Arg] = [ttl]
    for field, value in fields.items():
        args += (field, value)
    return Call(script("hash_set"), (key,), args, lambda _reply: None)


def _hash_set(
    keyspace: Keyspace, key: bytes, fields: Mapping[bytes, bytes], ttl_ms: int | None
) -> None:
    ttl_arg(ttl_ms)
    found = stored(keyspace, key, dict, create=bool(fields))
    if found is None:
        return
    found.update(fields)
    if ttl_ms is not None:
        keyspace.put_deadline(key, keyspace.now_ms() + ttl_ms)


HASH_SET: Final = Step(_hash_set_call, _hash_set)
"""``(key, fields, ttl_ms or None)``: HSET, then PEXPIRE when a TTL is given. O(k)."""


def _hash_get_call(key: bytes, fields: Sequence[bytes]) -> Call[list[bytes | None]]:
    return _on_key("HMGET", key, fields, [])


def _hash_get(keyspace: Keyspace, key: bytes, fields: Sequence[bytes]) -> list[bytes | None]:
    found = stored(keyspace, key, dict)
    return [None] * len(fields) if found is None else [found.get(field) for field in fields]


HASH_GET: Final = Step(_hash_get_call, _hash_get, writes=False)
"""``(key, fields) -> values (None when absent)``: HMGET. O(k)."""


def _hash_delete_call(key: bytes, fields: Sequence[bytes]) -> Call[int]:
    return _on_key("HDEL", key, fields, 0)


def _hash_delete(keyspace: Keyspace, key: bytes, fields: Sequence[bytes]) -> int:
    found = stored(keyspace, key, dict) or {}
    return sum(1 for field in fields if found.pop(field, None) is not None)


HASH_DELETE: Final = Step(_hash_delete_call, _hash_delete)
"""``(key, fields) -> how many existed``: HDEL. O(k)."""


# -- sets -----------------------------------------------------------------------------


def _set_add_call(key: bytes, members: Sequence[bytes]) -> Call[int]:
    return _on_key("SADD", key, members, 0)


def _set_add(keyspace: Keyspace, key: bytes, members: Sequence[bytes]) -> int:
    if not members:
        return 0
    found = stored(keyspace, key, set, create=True)
    assert found is not None
    before = len(found)
    found.update(members)
    return len(found) - before


SET_ADD: Final = Step(_set_add_call, _set_add)
"""``(key, members) -> how many were new``: SADD. O(k)."""


def _set_remove_call(key: bytes, members: Sequence[bytes]) -> Call[int]:
    return _on_key("SREM", key, members, 0)


def _set_remove(keyspace: Keyspace, key: bytes, members: Sequence[bytes]) -> int:
    found = stored(keyspace, key, set) or set()
    before = len(found)
    found.difference_update(members)
    return before - len(found)


SET_REMOVE: Final = Step(_set_remove_call, _set_remove)
"""``(key, members) -> how many existed``: SREM. O(k)."""


def _set_members_call(key: bytes) -> Call[set[bytes]]:
    return Call(None, (key,), ["SMEMBERS", key], set)


def _set_members(keyspace: Keyspace, key: bytes) -> set[bytes]:
    found = stored(keyspace, key, set)
    return set() if found is None else set(found)


SET_MEMBERS: Final = Step(_set_members_call, _set_members, writes=False)
"""``(key) -> the members (a copy)``: SMEMBERS. O(n)."""


# -- sorted sets ----------------------------------------------------------------------


def _count_call(key: bytes, low: float = -math.inf, high: float = math.inf) -> Call[int]:
    if low == -math.inf and high == math.inf:
        return Call(None, (key,), ("ZCARD", key), int)
    low_bound, high_bound = range_bound(low), range_bound(high)
    if low > high:
        return answer(0)
    return Call(None, (key,), ["ZCOUNT", key, low_bound, high_bound], int)


def _count(keyspace: Keyspace, key: bytes, low: float = -math.inf, high: float = math.inf) -> int:
    zset = keyspace.zset(key)
    if low == -math.inf and high == math.inf:  # ZCARD
        return 0 if zset is None else len(zset)
    range_bound(low)  # a NaN bound raises
    range_bound(high)
    return 0 if zset is None else zset.count_by_score(low, high)


COUNT: Final = Step(_count_call, _count, writes=False)
"""``(key, low=-inf, high=inf) -> members with low <= score <= high``: ZCARD / ZCOUNT.
O(log n)."""


def _optional_floats(reply: Any) -> list[float | None]:
    return [None if x is None else float(x) for x in reply]


def _scores_call(key: bytes, members: Sequence[bytes]) -> Call[list[float | None]]:
    if not members:
        return answer([])
    return Call(None, (key,), ["ZMSCORE", key, *members], _optional_floats)


def _scores(keyspace: Keyspace, key: bytes, members: Sequence[bytes]) -> list[float | None]:
    zset = keyspace.zset(key)
    return [None] * len(members) if zset is None else zset.scores(members)


SCORES: Final = Step(_scores_call, _scores, writes=False)
"""``(key, members) -> score per member (None when absent)``: ZMSCORE. O(k)."""


@dataclass(frozen=True, slots=True)
class ByteRange:
    """Members between ``low`` and ``high`` by their bytes (None: unbounded), each bound
    inclusive unless marked exclusive. Meaningful when every score is equal."""

    low: bytes | None = None
    high: bytes | None = None
    low_exclusive: bool = False
    high_exclusive: bool = False

    def redis(self) -> tuple[bytes, bytes]:
        """The bounds as ZLEXCOUNT and ZRANGE BYLEX take them (``[x``, ``(x``, ``-``, ``+``)."""
        return _bound(self.low, self.low_exclusive, b"-"), _bound(
            self.high, self.high_exclusive, b"+"
        )


def _bound(value: bytes | None, exclusive: bool, unbounded: bytes) -> bytes:
    if value is None:
        return unbounded
    return (b"(" if exclusive else b"[") + bytes(value)


def _lex_count_call(key: bytes, bounds: ByteRange) -> Call[int]:
    return Call(None, (key,), ["ZLEXCOUNT", key, *bounds.redis()], int)


def _lex_count(keyspace: Keyspace, key: bytes, bounds: ByteRange) -> int:
    zset = keyspace.zset(key)
    if zset is None:
        return 0
    low, high, low_exclusive, high_exclusive = _fields(bounds)
    return zset.count_by_lex(low, high, min_exclusive=low_exclusive, max_exclusive=high_exclusive)


def _fields(bounds: ByteRange) -> tuple[bytes | None, bytes | None, bool, bool]:
    return bounds.low, bounds.high, bounds.low_exclusive, bounds.high_exclusive


LEX_COUNT: Final = Step(_lex_count_call, _lex_count, writes=False)
"""``(key, ByteRange) -> members in the range``: ZLEXCOUNT. O(log n)."""


def _lex_range_call(
    key: bytes, bounds: ByteRange, offset: int, count: int, reverse: bool
) -> Call[list[bytes]]:
    not_negative(offset=offset, count=count)
    if count == 0 or offset > MAX_POSITION:
        return answer([])
    first, last = bounds.redis()
    args: list[Arg] = ["ZRANGE", key]
    args += (last, first, "BYLEX", "REV") if reverse else (first, last, "BYLEX")
    args += ("LIMIT", offset, min(count, MAX_POSITION))
    return Call(None, (key,), args, list)


def _lex_range(
    keyspace: Keyspace, key: bytes, bounds: ByteRange, offset: int, count: int, reverse: bool
) -> list[bytes]:
    not_negative(offset=offset, count=count)
    zset = keyspace.zset(key)
    if zset is None or count == 0 or offset > MAX_POSITION:
        return []
    low, high, low_exclusive, high_exclusive = _fields(bounds)
    pairs = zset.range_by_lex(
        low,
        high,
        min_exclusive=low_exclusive,
        max_exclusive=high_exclusive,
        reverse=reverse,
        offset=offset,
        count=min(count, MAX_POSITION),
    )
    return [member for member, _ in pairs]  # type: ignore[misc]


LEX_RANGE: Final = Step(_lex_range_call, _lex_range, writes=False)
"""``(key, ByteRange, offset, count, reverse) -> members`` in the range in ascending byte
order (descending with ``reverse``), after skipping ``offset``: ZRANGE BYLEX [REV] LIMIT
(REV takes the high bound first). O(log n + offset + count)."""
