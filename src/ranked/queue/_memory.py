"""The Python twins of the queue's scripts: the same steps over the memory keyspace.

Each function mirrors ``lua/<name>.lua`` line for line and returns the same reply shape
(priorities may come back as floats where Lua returns their text: the decoders accept
both). They run under the memory backend's lock; arguments arrive as Python values.
Queue keys never carry a TTL, so :meth:`Keyspace.zset_fast` (no expiry check) is exact
for them and keeps the hot path to a dictionary lookup.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, Final

from ..engine.keyspace import Keyspace
from ..engine.zset import SortedSet

__all__ = ["ack", "clear", "dead", "extend", "nack", "plain_ready", "push", "push_now", "take"]

SETTLE_LIMIT: Final = 1000
"""At most this many due delayed items, expired leases and stale items per call."""

_INF: Final = float("inf")
_pack_priority = struct.Struct(">d").pack
_unpack_priority = struct.Struct(">d").unpack_from
_pack_lease = struct.Struct(">dI").pack
_unpack_lease = struct.Struct(">dI").unpack_from
_pack_seq = struct.Struct(">Q").pack
_unpack_seq = struct.Struct(">Q").unpack_from


def _zset(keyspace: Keyspace, key: bytes) -> SortedSet:
    found = keyspace.zset_fast(key)
    if found is not None:
        return found
    created = keyspace.zset(key, create=True)
    assert created is not None
    return created


def _hash(keyspace: Keyspace, key: bytes) -> dict[bytes, bytes]:
    found = keyspace.get(key)
    if isinstance(found, dict):
        return found
    created: dict[bytes, bytes] = {}
    keyspace.store(key, created)
    return created


def push(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Any:
    """``lua/push.lua``."""
    if len(args) == 5 and args[0] == 0 and args[2] == 0 and args[3] == 0:  # one plain item
        push_now(keyspace, now, keys, args[4], args[1])
        return 1
    ready_key, delayed_key, seq_key, born_key = keys
    raw = keyspace.get(seq_key)
    last = int(raw) if isinstance(raw, bytes) else 0
    ready = keyspace.zset_fast(ready_key) or _zset(keyspace, ready_key)
    track = args[0] == 1
    for index in range(1, len(args), 4):
        priority, at, delay, item = args[index : index + 4]
        if delay > 0:
            at = now + delay
        last = last + 1 if last >= now else now
        item_id = _pack_seq(last) + item
        if at > now:
            parked = _pack_priority(priority) + item_id
            _zset(keyspace, delayed_key).add(parked, at)
        else:
            parked = b""
            ready.add(item_id, priority)
        if track:
            _zset(keyspace, born_key).add(parked or _pack_priority(priority) + item_id, last)
    keyspace.store(seq_key, b"%d" % last)
    return (len(args) - 1) // 4


def push_now(
    keyspace: Keyspace, now: int, keys: Sequence[bytes], item: bytes, priority: float
) -> None:
    """``lua/push.lua`` for one item visible now, with no push instant kept (no
    ``max_age``): the next sequence, then the item in the ready set. O(log n)."""
    ready_key, _, seq_key, _ = keys
    raw = keyspace.get(seq_key)
    last = int(raw) if isinstance(raw, bytes) else 0
    ready = keyspace.zset_fast(ready_key) or _zset(keyspace, ready_key)
    last = last + 1 if last >= now else now
    ready.add(_pack_seq(last) + item, priority)
    keyspace.store(seq_key, b"%d" % last)


def plain_ready(keyspace: Keyspace, keys: Sequence[bytes]) -> SortedSet | None:
    """The ready set when a pop of its head is the whole of ``lua/take.lua``'s pop (no
    ``max_age`` assumed): nothing to settle (no delayed item, no lease), no retried item,
    the set non-empty. None: run :func:`take`. O(1)."""
    fast = keyspace.zset_fast
    if fast(keys[1]) is not None or fast(keys[2]) is not None:
        return None
    ready = fast(keys[0])
    return ready if ready is not None and keyspace.get(keys[3]) is None else None


def _settle(keyspace: Keyspace, now: int, keys: Sequence[bytes], limit: int, max_age: int) -> None:
    """Promote due items, reap expired leases, drop stale items (take.lua's first part)."""
    ready_key, delayed_key, leases_key, _, _, born_key = keys
    delayed = keyspace.zset_fast(delayed_key)
    if delayed is not None:
        due = delayed.range_by_score(-_INF, now, count=SETTLE_LIMIT)
        if due:
            ready = _zset(keyspace, ready_key)
            for member, _ in due:
                ready.add(member[8:], _unpack_priority(member)[0])  # type: ignore[arg-type]
            delayed.remove(*(member for member, _ in due))
    leases = keyspace.zset_fast(leases_key)
    if leases is not None:
        expired = leases.range_by_score(-_INF, now, count=SETTLE_LIMIT)
        for member, _ in expired:
            _requeue_expired(keyspace, now, keys, member, limit, max_age)  # type: ignore[arg-type]
        if expired:
            leases.remove(*(member for member, _ in expired))
    if max_age > 0:
        born = keyspace.zset_fast(born_key)
        if born is not None:
            stale = born.range_by_score(
                -_INF, now - max_age, max_exclusive=True, count=SETTLE_LIMIT
            )
            if stale:
                _drop_stale(keyspace, keys, [member for member, _ in stale])  # type: ignore[misc]


def _requeue_expired(
    keyspace: Keyspace, now: int, keys: Sequence[bytes], member: bytes, limit: int, max_age: int
) -> None:
    priority, delivery = _unpack_lease(member)
    item_id = member[12:]
    born_key = keys[5]
    if max_age > 0 and _unpack_seq(item_id)[0] < now - max_age:
        _remove(keyspace, born_key, member[:8] + item_id)
    elif limit > 0 and delivery >= limit:
        _zset(keyspace, keys[4]).add(member, now)
        _remove(keyspace, born_key, member[:8] + item_id)
    else:
        _zset(keyspace, keys[0]).add(item_id, priority)
        _hash(keyspace, keys[3])[item_id] = b"%d" % delivery


def _drop_stale(keyspace: Keyspace, keys: Sequence[bytes], stale: list[bytes]) -> None:
    ready = keyspace.zset_fast(keys[0])
    delayed = keyspace.zset_fast(keys[1])
    attempts = keyspace.get(keys[3])
    for member in stale:
        item_id = member[8:]
        if not (ready is not None and ready.remove(item_id)) and delayed is not None:
            delayed.remove(member)
        if isinstance(attempts, dict):
            attempts.pop(item_id, None)
    _remove(keyspace, keys[5], *stale)


def _remove(keyspace: Keyspace, key: bytes, *members: bytes) -> None:
    found = keyspace.zset_fast(key)
    if found is not None:
        found.remove(*members)


def take(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Any:
    """``lua/take.lua``: settle, then pop / peek / reserve / counts."""
    mode, count, lease_us, limit, max_age, expect = args
    if mode == "pop" and count == 1 and not max_age:
        plain = plain_ready(keyspace, keys)
        if plain is not None:  # the hot path: a plain pop of one
            ((item_id, priority),) = plain.pop_min(1)
            return [now, 0, item_id, priority, 0]
    fast = keyspace.zset_fast
    if max_age or fast(keys[1]) is not None or fast(keys[2]) is not None:
        _settle(keyspace, now, keys, limit, max_age)
    ready = fast(keys[0])
    if mode == "counts":
        return [now, 0, *(_card(keyspace, key) for key in keys[:3]), _card(keyspace, keys[4])]
    if expect:
        head = ready.at(0)[0] if ready is not None else None
        if head != expect:
            return [now, 1]
    reply: list[Any] = [now, 0]
    if ready is None:
        return reply
    attempts = keyspace.get(keys[3])
    retried = attempts if isinstance(attempts, dict) else None
    if mode == "peek":
        for item_id, priority in ready.range_by_index(0, count - 1):
            delivery = retried.get(item_id, b"0") if retried else 0  # type: ignore[arg-type]
            reply += (item_id, priority, int(delivery))
        return reply
    popped = ready.pop_min(count)
    reserving = mode == "reserve"
    for item_id, priority in popped:
        delivery = int(retried.pop(item_id, 0)) if retried else 0  # type: ignore[arg-type]
        if reserving:
            delivery += 1
            lease = _pack_lease(priority, delivery) + item_id  # type: ignore[operator]
            _zset(keyspace, keys[2]).add(lease, now + lease_us)
        elif max_age > 0:
            _remove(keyspace, keys[5], _pack_priority(priority) + item_id)  # type: ignore[operator]
        reply += (item_id, priority, delivery)
    return reply


def _card(keyspace: Keyspace, key: bytes) -> int:
    found = keyspace.zset_fast(key)
    return len(found) if found is not None else 0


def _held(keyspace: Keyspace, now: int, leases_key: bytes, member: bytes) -> SortedSet | None:
    """The leases set when ``member`` is a lease whose deadline is after ``now``."""
    leases = keyspace.zset_fast(leases_key)
    if leases is None:
        return None
    deadline = leases.score(member)
    return leases if deadline is not None and deadline > now else None


def ack(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Any:
    """``lua/ack.lua``."""
    acked = 0
    for member in args:
        leases = _held(keyspace, now, keys[0], member)
        if leases is not None:
            leases.remove(member)
            _remove(keyspace, keys[1], member[:8] + member[12:])
            acked += 1
    return acked


def nack(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Any:
    """``lua/nack.lua``: 0 not held, 1 requeued, 2 delayed, 3 dead, 4 dropped (stale)."""
    member, delay, limit, max_age = args
    leases = _held(keyspace, now, keys[2], member)
    if leases is None:
        return 0
    leases.remove(member)
    priority, delivery = _unpack_lease(member)
    item_id = member[12:]
    parked = member[:8] + item_id
    if max_age > 0 and _unpack_seq(item_id)[0] < now - max_age:
        _remove(keyspace, keys[5], parked)
        return 4
    if limit > 0 and delivery >= limit:
        _zset(keyspace, keys[4]).add(member, now)
        _remove(keyspace, keys[5], parked)
        return 3
    _hash(keyspace, keys[3])[item_id] = b"%d" % delivery
    if delay > 0:
        _zset(keyspace, keys[1]).add(parked, now + delay)
        return 2
    _zset(keyspace, keys[0]).add(item_id, priority)
    return 1


def extend(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Any:
    """``lua/extend.lua``."""
    member, lease_us = args
    leases = _held(keyspace, now, keys[0], member)
    if leases is None:
        return None
    leases.add(member, now + lease_us)
    return now + lease_us


def clear(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Any:
    """``lua/clear.lua``."""
    items = sum(_card(keyspace, key) for key in keys[:3])
    for key in keys:
        keyspace.delete(key)
    return items


def dead(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Any:
    """``lua/dead.lua``: list / retry / purge dead letters."""
    mode, count, track = args
    letters = keyspace.zset_fast(keys[1])
    if mode == "list":
        if letters is None:
            return []
        return [
            part
            for pair in letters.range_by_index(0, count - 1 if count >= 0 else -1)
            for part in pair
        ]
    if letters is None:
        return 0
    if mode == "purge":
        size = len(letters)
        keyspace.delete(keys[1])
        return size
    popped = letters.pop_min(len(letters) if count < 0 else count)
    for member, _ in popped:
        parked: bytes = member[:8] + member[12:]  # type: ignore[operator,assignment]
        _zset(keyspace, keys[0]).add(parked[8:], _unpack_priority(parked)[0])
        if track == 1:
            _zset(keyspace, keys[2]).add(parked, now)
    return len(popped)
