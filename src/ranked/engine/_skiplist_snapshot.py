"""The snapshot byte format shared by the C engine and the pure-Python twin.

Layout (all little-endian)::

    b"RKZS" | version u8 (= 1) | count u64 | count x (score f64 | length u32 | member bytes)

Members appear in ascending (score, member) order, each exactly once.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from ..errors import SnapshotError

__all__ = ["decode", "encode"]

MAGIC = b"RKZS"
VERSION = 1
_HEADER = struct.Struct("<4sBQ")
_ENTRY = struct.Struct("<dI")


def encode(count: int, pairs: Iterable[tuple[bytes, float]]) -> bytes:
    """Serialise ``count`` ascending (member, score) pairs."""
    parts = [_HEADER.pack(MAGIC, VERSION, count)]
    for member, score in pairs:
        parts.append(_ENTRY.pack(score, len(member)))
        parts.append(member)
    return b"".join(parts)


def decode(data: object) -> list[tuple[bytes, float]]:
    """Parse and validate a snapshot; any defect raises ``SnapshotError``."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"snapshot must be bytes, not {type(data).__name__}")
    raw = bytes(data)
    size = len(raw)
    if size < _HEADER.size:
        raise SnapshotError("snapshot truncated: incomplete header")
    magic, version, count = _HEADER.unpack_from(raw, 0)
    if magic != MAGIC:
        raise SnapshotError("not a ranked sorted-set snapshot (bad magic)")
    if version != VERSION:
        raise SnapshotError(f"unknown snapshot version {version}")
    pos = _HEADER.size
    # Each entry takes at least 12 bytes: refuse absurd counts before looping.
    if count > (size - pos) // _ENTRY.size:
        raise SnapshotError("snapshot truncated: fewer entries than its count")
    pairs: list[tuple[bytes, float]] = []
    seen: set[bytes] = set()
    previous: tuple[float, bytes] | None = None
    for _ in range(count):
        if pos + _ENTRY.size > size:
            raise SnapshotError("snapshot truncated inside an entry")
        score, length = _ENTRY.unpack_from(raw, pos)
        pos += _ENTRY.size
        if pos + length > size:
            raise SnapshotError("snapshot truncated inside a member")
        member = raw[pos : pos + length]
        pos += length
        if score != score:
            raise SnapshotError("snapshot holds a NaN score")
        if previous is not None and not previous < (score, member):
            raise SnapshotError("snapshot entries are not in ascending order")
        if member in seen:
            raise SnapshotError("snapshot repeats a member")
        seen.add(member)
        previous = (score, member)
        pairs.append((member, score))
    if pos != size:
        raise SnapshotError("snapshot has trailing bytes")
    return pairs
