"""The memory twins of the limiter scripts in ``lua/``: the same state, the same replies.

Each function is the Python twin of one ``lua/<algorithm>.lua`` and runs under the memory
backend's lock over its :class:`~ranked.engine.keyspace.Keyspace`. The arithmetic mirrors
the Lua line by line: integers stay integers where both sides are exact, and every
fractional quantity is a float computed in the same order as Lua's doubles, so both twins
give bit-identical replies (the conformance suite checks this at explicit instants).

Arguments arrive as Python ints: ``(cost, consume, limit, window_us[, burst])``. Replies are
``[allowed 1|0, remaining, reset_after_us, retry_after_us or -1]``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ..engine.keyspace import Keyspace
from ..engine.zset import SortedSet

__all__ = ["fixed_window", "gcra", "sliding_counter", "sliding_log", "token_bucket"]

Reply = list[int]

_PAGE = 64
"""Log entries read per step while looking for the instant a denied hit would fit."""


def _expire(keyspace: Keyspace, key: bytes, after_us: float) -> None:
    """PEXPIRE ``key`` to ``after_us`` from now, rounded up to whole milliseconds."""
    keyspace.put_deadline(key, keyspace.now_ms() + math.ceil(after_us / 1000))


def fixed_window(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Reply:
    cost, consume, limit, window = args
    key = keys[0]
    start, count = now, 0
    state = keyspace.get(key)
    if state is not None:
        held_start, _, held_count = state.partition(b":")  # type: ignore[union-attr]
        if now < int(held_start) + window:
            start, count = int(held_start), int(held_count)
    expires = start + window
    if count + cost > limit:
        return [0, limit - count, expires - now, expires - now]
    count += cost
    if consume and cost > 0:
        if start == now:  # a new window: its end is the key's deadline
            keyspace.store(key, b"%d:%d" % (start, count))
            _expire(keyspace, key, expires - now)
        else:
            keyspace.store(key, b"%d:%d" % (start, count), keep_ttl=True)
    return [1, limit - count, expires - now if count > 0 else 0, -1]


def _cost_of(member: str | bytes) -> int:
    return int(member.rpartition(b":")[2])  # type: ignore[arg-type]  # raw set: bytes


def _costs(members: Iterable[str | bytes]) -> int:
    return sum(_cost_of(member) for member in members)


def sliding_log(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Reply:
    cost, consume, limit, window = args
    log_key, units_key = keys[0], keys[1]
    cutoff = now - window
    log: SortedSet | None = keyspace.zset(log_key)
    state = keyspace.get(units_key)
    if state is not None:
        held_total, _, held_seq = state.partition(b":")  # type: ignore[union-attr]
        total, seq = int(held_total), int(held_seq)
    else:  # lost total: rebuild it from the log
        total, seq = (_costs(log) if log is not None else 0), 0
    stale = 0
    if log is not None and log.at(0)[1] <= cutoff:  # the oldest tells if any is stale
        stale = _costs(member for member, _ in log.range_by_score(max=cutoff))
    total -= stale

    allowed = total + cost <= limit
    write = consume and ((allowed and cost > 0) or stale > 0)
    if allowed:
        total += cost
    newest: float | None = now if allowed and cost > 0 else None
    if log is not None and len(log):
        last = log.at(-1)[1]
        if newest is None or last > newest:
            newest = last
    reset = newest + window - now if total > 0 and newest is not None else 0

    if write:
        if log is None:
            log = keyspace.zset(log_key, create=True)
            assert log is not None
        if stale > 0:
            log.remove_range_by_score(-math.inf, cutoff)
        if allowed and cost > 0:
            seq += 1
            log.add(b"%d:%d:%d" % (now, seq, cost), now)
        if total > 0:
            keyspace.store(units_key, b"%d:%d" % (total, seq))
            deadline = keyspace.now_ms() + math.ceil(reset / 1000)
            keyspace.put_deadline(units_key, deadline)
            keyspace.put_deadline(log_key, deadline)
        else:
            keyspace.delete(units_key)
            keyspace.delete(log_key)
    if allowed:
        return [1, limit - total, int(reset), -1]

    # Denied: the oldest live entries must expire until `cost` fits.
    need = total + cost - limit
    assert log is not None
    offset = 0
    while page := log.range_by_score(cutoff, min_exclusive=True, offset=offset, count=_PAGE):
        for member, score in page:
            need -= _cost_of(member)
            if need <= 0:
                return [0, limit - total, int(reset), int(score) + window - now]
        offset += _PAGE
    return [0, limit - total, int(reset), window]  # inconsistent state


def sliding_counter(
    keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]
) -> Reply:
    cost, consume, limit, window = args
    key = keys[0]
    index: int = now // window
    start: int = index * window
    cur = prev = 0
    state = keyspace.get(key)
    if state is not None:
        held_index, held_cur, held_prev = state.split(b":")  # type: ignore[union-attr]
        if int(held_index) >= index:
            cur, prev = int(held_cur), int(held_prev)
        elif int(held_index) == index - 1:
            prev = int(held_cur)

    def estimate(at: int, extra: int) -> float:
        # float() first: Lua multiplies doubles, and so must the twin
        weighted: float
        if at < start + window:
            weighted = float(prev) * (window - (at - start)) / window + cur
        else:
            weighted = float(cur) * (window - (at - start - window)) / window
        return weighted + extra

    reset = start + 2 * window - now if cur > 0 else (start + window - now if prev > 0 else 0)
    now_estimate = estimate(now, 0)
    if now_estimate + cost > limit:
        room = limit - cost - cur
        if room >= 0:
            at = start + math.ceil(window - float(room) * window / prev)
        else:
            at = start + window + math.ceil(window - float(limit - cost) * window / cur)
        while estimate(at, cost) > limit:  # float rounding may land a microsecond early
            at += 1
        return [0, max(0, math.floor(limit - now_estimate)), reset, max(1, at - now)]
    cur += cost
    if cur > 0:
        reset = start + 2 * window - now
    if consume and cost > 0:
        keyspace.store(key, b"%d:%d:%d" % (index, cur, prev))
        _expire(keyspace, key, start + 2 * window - now)
    return [1, max(0, math.floor(limit - (now_estimate + cost))), reset, -1]


def token_bucket(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Reply:
    cost, consume, limit, window, burst = args
    key = keys[0]
    rate = limit / window
    tokens: float = burst
    state = keyspace.get(key)
    if state is not None:
        held, _, last = state.partition(b":")  # type: ignore[union-attr]
        tokens = float(held)
        elapsed = now - int(last)
        if elapsed > 0:
            tokens = min(tokens + elapsed * rate, burst)
    if tokens < cost:
        return [
            0,
            math.floor(tokens),
            math.ceil((burst - tokens) / rate),
            math.ceil((cost - tokens) / rate),
        ]
    tokens -= cost
    reset = math.ceil((burst - tokens) / rate)
    if consume and cost > 0:
        keyspace.store(key, b"%r:%d" % (tokens, now))
        _expire(keyspace, key, reset)
    return [1, math.floor(tokens), reset, -1]


def gcra(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Reply:
    cost, consume, limit, window, burst = args
    key = keys[0]
    interval = window / limit
    tolerance = interval * burst
    state = keyspace.get(key)
    tat: float = now if state is None else float(state)  # type: ignore[arg-type]
    if tat < now:
        tat = now
    new_tat = tat + cost * interval
    early = new_tat - tolerance - now
    allowed, ttl, retry = 1, new_tat - now, -1
    if early > 0:
        allowed, ttl, retry = 0, tat - now, math.ceil(early)
    elif consume and cost > 0:
        keyspace.store(key, repr(new_tat).encode())
        _expire(keyspace, key, ttl)
    remaining = max(0, math.floor((tolerance - ttl) / interval))
    return [allowed, remaining, math.ceil(ttl), retry]
