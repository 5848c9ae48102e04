"""A board's own atomic steps, as :class:`~ranked.backends.procedure.Procedure` objects:
each a Lua script in ``lua/`` (Redis, Redis Cluster: one round trip) and its Python twin
(memory: run under the backend's lock), with one decoder for both replies.

- :data:`FRIEND_SCORES`: a member and its friends with their current scores (SMEMBERS,
  then ZMSCORE), so a friends board is read fresh, whole, in one step; bound through
  :data:`FRIEND_SCORES_STEP` ``(board key, friend set key, member)``.
- :data:`SWAP_FIELD`: compare-and-set of one hash field, the step an atomic
  read-modify-write (merging board metadata) retries on; bound through
  :data:`SWAP_FIELD_STEP` ``(keys, args)``, the script's own.
- :data:`MOVE_KEYS`: a window rebuilt under staging keys put in place of the live one,
  when the index has taken no write since the rebuild read the journal; bound through
  :data:`MOVE_KEYS_STEP` ``(sequence key, expected number, [(staging, live)])``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ..backends._scripts import Arg
from ..backends.procedure import Operation, Procedure
from ..backends.sequenced import applied_seq
from ..engine.commands.common import WRONGTYPE
from ..engine.keyspace import Keyspace
from ..errors import ResponseError

__all__ = [
    "FRIEND_SCORES",
    "FRIEND_SCORES_STEP",
    "MOVE_KEYS",
    "MOVE_KEYS_STEP",
    "SWAP_FIELD",
    "SWAP_FIELD_STEP",
]

_PACKAGE: Final = "ranked.leaderboard"


def _set(keyspace: Keyspace, key: bytes) -> set[bytes]:
    value = keyspace.get(key)
    if value is None:
        return set()
    if not isinstance(value, set):
        raise ResponseError(WRONGTYPE)
    return value


def _friend_scores(
    keyspace: Keyspace, now_us: int, keys: Sequence[bytes], args: Sequence[Arg]
) -> list[Any]:
    """The twin of ``lua/friend_scores.lua``: flat [member, score, ...] of the member and
    its friends that are on the board."""
    board, friends_key = keys
    member = args[0]
    assert isinstance(member, bytes)
    members = list(_set(keyspace, friends_key))
    if member not in members:
        members.append(member)
    zset = keyspace.zset(board)
    if zset is None:
        return []
    reply: list[Any] = []
    for name, score in zip(members, zset.scores(members), strict=True):
        if score is not None:
            reply += (name, score)
    return reply


def _pairs(reply: Any) -> list[tuple[bytes, float]]:
    return [(reply[i], float(reply[i + 1])) for i in range(0, len(reply), 2)]


FRIEND_SCORES: Final = Procedure(_PACKAGE, "friend_scores", _friend_scores, _pairs)
"""KEYS (board, friend set), ARGS (member,) -> [(member, stored score)] of those on the
board, in no particular order. O(f) for f friends (+ log n each on memory)."""


def _friend_keys(
    board: bytes, friends: bytes, member: bytes
) -> tuple[Sequence[bytes], Sequence[Arg], None]:
    return (board, friends), (member,), None


FRIEND_SCORES_STEP: Final = Operation(FRIEND_SCORES, _friend_keys)
"""``(board key, friend set key, member) -> [(member, stored score)]``."""


def _hash(keyspace: Keyspace, key: bytes) -> dict[bytes, bytes] | None:
    value = keyspace.get(key)
    if value is not None and not isinstance(value, dict):
        raise ResponseError(WRONGTYPE)
    return value


def _swap_field(keyspace: Keyspace, now_us: int, keys: Sequence[bytes], args: Sequence[Arg]) -> int:
    """The twin of ``lua/swap_field.lua``: 1 when the field held the expected value (or
    was absent, as expected) and now holds the new one, else 0 with nothing written."""
    field, expected, has_expected, new, ttl_ms = args
    assert isinstance(field, bytes) and isinstance(new, bytes)
    stored = _hash(keyspace, keys[0])
    current = None if stored is None else stored.get(field)
    if current != (expected if has_expected == 1 else None):
        return 0
    if stored is None:
        stored = {}
        keyspace.store(keys[0], stored)
    stored[field] = new
    if ttl_ms != b"":
        assert isinstance(ttl_ms, int)
        keyspace.put_deadline(keys[0], keyspace.now_ms() + ttl_ms)
    return 1


SWAP_FIELD: Final = Procedure(_PACKAGE, "swap_field", _swap_field, bool)
"""KEYS (hash,), ARGS (field, expected, 1 if expected else 0, new value, ttl_ms or b"")
-> whether the field was swapped. O(1)."""

SWAP_FIELD_STEP: Final = Operation.raw(SWAP_FIELD)
"""``(keys, args) -> whether the field was swapped``."""


def _move_keys(keyspace: Keyspace, now_us: int, keys: Sequence[bytes], args: Sequence[Arg]) -> int:
    """The twin of ``lua/move_keys.lua``: 1 when the sequence key held the expected
    number and each staging key now stands in place of its live key (with its TTL; an
    absent staging key deletes the live one), else 0 with the staging keys deleted."""
    (expected,) = args
    assert isinstance(expected, int)
    moved = applied_seq(keyspace, keys[0]) == expected
    for staging, live in zip(keys[1::2], keys[2::2], strict=True):
        value = keyspace.get(staging)
        if moved and value is not None:
            deadline = keyspace.deadline(staging)
            listpack = keyspace.is_listpack(staging)
            keyspace.delete(live)
            keyspace.store(live, value)
            keyspace.set_listpack(live, listpack)
            if deadline is not None:
                keyspace.put_deadline(live, deadline)
        elif moved:
            keyspace.delete(live)
        keyspace.delete(staging)
    return int(moved)


MOVE_KEYS: Final = Procedure(_PACKAGE, "move_keys", _move_keys, bool)
"""KEYS (sequence key, staging, live, staging, live, ...), ARGS (expected number,) ->
whether the keys were moved. O(keys) (a rename moves a value without copying it)."""


def _move_keys_args(
    seq_key: bytes, expected: int, pairs: Sequence[tuple[bytes, bytes]]
) -> tuple[Sequence[bytes], Sequence[Arg], None]:
    return (seq_key, *(key for pair in pairs for key in pair)), (expected,), None


MOVE_KEYS_STEP: Final = Operation(MOVE_KEYS, _move_keys_args)
"""``(sequence key, expected number, [(staging, live)]) -> whether the keys were moved``."""
