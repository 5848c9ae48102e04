"""Key names of a board, and Redis Cluster's hash slot function.

Every key of one board carries the same hash tag ``{<board>}``, so all of them land
in one Redis Cluster slot and one Lua script (or MULTI/EXEC) may touch them all::

    rk:{arena}:meta                 hash    board configuration
    rk:{arena}:data                 hash    member -> member data
    rk:{arena}:w:<window-id>        zset    the scores of one time window
    rk:{arena}:dense:<window-id>    zset    distinct scores of the window (dense rank)
    rk:{arena}:dcount:<window-id>   hash    score -> number of members holding it
    rk:{arena}:ties:<window-id>     hash    member -> tie-break value (secondary hash)
    rk:{arena}:friends:<member>     set     the member's friends
    rk:{arena}:fview:<member>       zset    a cached friends-only view (short TTL)

Keys are ``bytes``: members are binary safe, and Redis compares keys as bytes.
A member may contain ``{`` or ``}``: only the *first* ``{`` of a key starts its tag,
and that is always the board's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ._names import check_name

__all__ = ["SLOT_COUNT", "BoardKeys", "crc16", "hash_slot"]

SLOT_COUNT: Final = 16384
"""Redis Cluster's number of hash slots."""


def _crc16_table() -> tuple[int, ...]:
    # CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection, no final XOR.
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC16_TABLE: Final = _crc16_table()


def crc16(data: bytes) -> int:
    """CRC-16/XMODEM of ``data`` (check value: ``crc16(b"123456789") == 0x31C3``). O(len)."""
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC16_TABLE[(crc >> 8) ^ byte]
    return crc


def hash_slot(key: bytes) -> int:
    """The Redis Cluster hash slot of ``key``: CRC16 of its hash tag (or of all of it) mod 16384.

    The hash tag is what lies between the first ``{`` and the first ``}`` after it,
    when that is non-empty; otherwise the whole key is hashed. Redis: CLUSTER KEYSLOT.
    """
    start = key.find(b"{")
    if start != -1:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1 : end]
    return crc16(key) % SLOT_COUNT


def _member_bytes(member: str | bytes) -> bytes:
    return member.encode("utf-8") if isinstance(member, str) else bytes(member)


@dataclass(frozen=True, slots=True)
class BoardKeys:
    """The keys of one board under one namespace, all in one Redis Cluster slot.

    ``namespace`` and ``board`` are validated names (non-empty, at most 200 UTF-8
    bytes, no ``{`` ``}`` or control characters); a bad one raises
    :class:`~ranked.errors.InvalidNameError`. Window ids come from
    :mod:`ranked.core.windows`.
    """

    board: str
    namespace: str = "rk"

    def __post_init__(self) -> None:
        check_name(self.namespace, "namespace")
        check_name(self.board, "board name")

    @property
    def prefix(self) -> bytes:
        """``<namespace>:{<board>}``: the start of every key of this board."""
        return f"{self.namespace}:{{{self.board}}}".encode()

    @property
    def slot(self) -> int:
        """The Redis Cluster hash slot that holds every key of this board."""
        return hash_slot(self.prefix)

    def _key(self, *parts: str | bytes) -> bytes:
        return b":".join((self.prefix, *(_member_bytes(part) for part in parts)))

    @property
    def meta(self) -> bytes:
        """The hash of the board's configuration."""
        return self._key("meta")

    @property
    def data(self) -> bytes:
        """The hash of member data (member -> opaque bytes)."""
        return self._key("data")

    def window(self, window_id: str) -> bytes:
        """The sorted set of scores of one window (``all`` for all-time)."""
        return self._key("w", window_id)

    def dense(self, window_id: str) -> bytes:
        """The sorted set of the window's distinct scores, for O(log n) dense rank."""
        return self._key("dense", window_id)

    def dense_counts(self, window_id: str) -> bytes:
        """The hash score -> how many members of the window hold that score."""
        return self._key("dcount", window_id)

    def ties(self, window_id: str) -> bytes:
        """The hash member -> tie-break value of the window (secondary-hash tie-break)."""
        return self._key("ties", window_id)

    def friends(self, member: str | bytes) -> bytes:
        """The set of ``member``'s friends."""
        return self._key("friends", member)

    def friend_view(self, member: str | bytes) -> bytes:
        """A short-lived sorted set: the window's scores of ``member``'s friends only."""
        return self._key("fview", member)
