"""Dumping and restoring every key under one prefix: the payload of an embedded board's
snapshot (the journal's snapshots, see docs/durability.md).

:data:`DUMP_PREFIX` reads, in one atomic step, every live key starting with a prefix (a
board's ``<namespace>:{<board>}``) with its value and deadline, and one marker string;
:data:`RESTORE_DUMP` stores such a payload back, replacing the keys it names. Only
``memory://`` has them: its keys end with the process, while a Redis server keeps its own
(AOF, RDB) and a board on it is rebuilt from the journal. On Redis and Redis Cluster both raise
:class:`~ranked.errors.UnsupportedOperationError` before anything is sent.

Payload (little-endian), after the magic ``RKDP`` and a version byte (1), per key: key
length u32, key, kind u8 (``z`` sorted set, ``h`` hash, ``s`` set, ``b`` string),
deadline i64 (Unix ms, -1: none), then the value: a sorted set as its engine snapshot
(``SortedSet.snapshot()``: u64 length then the bytes), a hash or set as a u32 count of
u32-length-prefixed byte strings (a hash's fields and values alternate), a string as u32
length and bytes. O(total size) both ways; a sorted set is rebuilt in O(n) from its
ascending snapshot.
"""

from __future__ import annotations

import struct
from typing import Any, Final

from ..engine.commands.common import WRONGTYPE
from ..engine.keyspace import Keyspace
from ..engine.zset import SortedSet
from ..errors import ResponseError, SnapshotError, UnsupportedOperationError
from .procedure import Call, Step

__all__ = ["DUMP_PREFIX", "LOAD_SORTED", "RESTORE_DUMP"]

_MAGIC: Final = b"RKDP\x01"
_U32: Final = struct.Struct("<I")
_U64: Final = struct.Struct("<Q")
_HEAD: Final = struct.Struct("<cq")


def _unsupported(*_args: object) -> Call[Any]:
    raise UnsupportedOperationError(
        "dumping keys is for memory:// (a Redis server persists its own keys; rebuild a"
        " board on it from its journal)"
    )


def _strings(out: list[bytes], items: list[bytes]) -> None:
    out.append(_U32.pack(len(items)))
    for item in items:
        out.append(_U32.pack(len(item)))
        out.append(item)


def _dump(keyspace: Keyspace, prefix: bytes, marker: bytes) -> tuple[bytes, bytes | None]:
    found = keyspace.get(marker)
    if found is not None and not isinstance(found, bytes):
        raise ResponseError(WRONGTYPE)
    out = [_MAGIC]
    for key in keyspace.keys_with_prefix(prefix):
        value = keyspace.get(key)
        deadline = keyspace.deadline(key)
        out.append(_U32.pack(len(key)))
        out.append(key)
        if isinstance(value, SortedSet):
            data = value.snapshot()
            out.append(_HEAD.pack(b"z", -1 if deadline is None else deadline))
            out.append(_U64.pack(len(data)))
            out.append(data)
        elif isinstance(value, dict):
            out.append(_HEAD.pack(b"h", -1 if deadline is None else deadline))
            _strings(out, [part for pair in value.items() for part in pair])
        elif isinstance(value, set):
            out.append(_HEAD.pack(b"s", -1 if deadline is None else deadline))
            _strings(out, sorted(value))
        else:
            assert isinstance(value, bytes)
            out.append(_HEAD.pack(b"b", -1 if deadline is None else deadline))
            out.append(_U32.pack(len(value)))
            out.append(value)
    return b"".join(out), found


DUMP_PREFIX: Final[Step[tuple[bytes, bytes | None]]] = Step(_unsupported, _dump, writes=False)
"""``(prefix, marker) -> (payload, the string at marker or None)``: every live key under
``prefix``, and one string key read in the same atomic step (a journaled board's applied
sequence number: the event the snapshot covers). memory:// only."""


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = memoryview(data)
        self.pos = 0

    def take(self, size: int) -> bytes:
        end = self.pos + size
        if end > len(self.data):
            raise SnapshotError("key dump is truncated")
        chunk = self.data[self.pos : end].tobytes()
        self.pos = end
        return chunk

    def unpack(self, layout: struct.Struct) -> tuple[object, ...]:
        return layout.unpack(self.take(layout.size))

    def strings(self) -> list[bytes]:
        (count,) = self.unpack(_U32)
        assert isinstance(count, int)
        found = []
        for _ in range(count):
            (size,) = self.unpack(_U32)
            assert isinstance(size, int)
            found.append(self.take(size))
        return found


def parse_dump(data: bytes) -> list[tuple[bytes, object, int | None]]:
    """``(key, value, deadline)`` of every key of a payload; a malformed payload raises
    :class:`~ranked.errors.SnapshotError` (nothing is stored)."""
    if not isinstance(data, bytes) or not data.startswith(_MAGIC):
        raise SnapshotError("not a key dump (bad magic or version)")
    reader = _Reader(data)
    reader.pos = len(_MAGIC)
    found: list[tuple[bytes, object, int | None]] = []
    while reader.pos < len(data):
        (size,) = reader.unpack(_U32)
        assert isinstance(size, int)
        key = reader.take(size)
        kind, deadline = reader.unpack(_HEAD)
        value: object
        if kind == b"z":
            (length,) = reader.unpack(_U64)
            assert isinstance(length, int)
            value = SortedSet.restore(reader.take(length), raw=True)
        elif kind == b"h":
            parts = reader.strings()
            if len(parts) % 2:
                raise SnapshotError("key dump: a hash with an odd number of parts")
            value = dict(zip(parts[::2], parts[1::2], strict=True))
        elif kind == b"s":
            value = set(reader.strings())
        elif kind == b"b":
            (length,) = reader.unpack(_U32)
            assert isinstance(length, int)
            value = reader.take(length)
        else:
            raise SnapshotError(f"key dump: unknown kind {kind!r}")
        assert isinstance(deadline, int)
        found.append((key, value, None if deadline < 0 else deadline))
    return found


def _restore(keyspace: Keyspace, data: bytes) -> int:
    entries = parse_dump(data)  # every check before the first change
    for key, value, deadline in entries:
        keyspace.store(key, value)  # type: ignore[arg-type]  # parse_dump built a Value
        if deadline is not None:
            keyspace.put_deadline(key, deadline)
    return len(entries)


RESTORE_DUMP: Final[Step[int]] = Step(_unsupported, _restore)
"""``(payload) -> keys stored``: the keys of a :data:`DUMP_PREFIX` payload, replacing
those of the same names. memory:// only."""


def _load_sorted(
    keyspace: Keyspace,
    key: bytes,
    marker: bytes,
    value: bytes,
    pairs: list[tuple[bytes, float]],
) -> int:
    zset = SortedSet(raw=True)
    zset.load(pairs)  # checks every pair before the keyspace changes
    if zset:
        keyspace.store(key, zset)
    else:
        keyspace.delete(key)
    keyspace.store(marker, value)
    return len(zset)


LOAD_SORTED: Final[Step[int]] = Step(_unsupported, _load_sorted)
"""``(key, marker, value, pairs) -> members``: replace the sorted set at ``key`` by
``pairs`` and set the string ``marker`` to ``value``, in one atomic step: the engine's bulk
load, O(n) for pairs ascending by (score, member), else sorted first (O(n log n), in the
engine's C on the C engine). memory:// only (a board's sorted set on
Redis has companion keys: it is rebuilt by replay)."""
