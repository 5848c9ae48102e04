"""Key names of one queue, and the byte encodings its sorted sets hold.

Every key of one queue carries the hash tag ``{<name>}``, so a Redis Cluster keeps them
in one slot and one script may touch them all::

    q:{name}:ready      zset   visible items: score = priority, member = id
    q:{name}:delayed    zset   items not yet visible: score = visible-at (us), member = parked
    q:{name}:leases     zset   reserved items: score = lease deadline (us), member = leased
    q:{name}:attempts   hash   id -> deliveries so far, for items waiting after a failure
    q:{name}:dead       zset   dead letters: score = time of death (us), member = leased
    q:{name}:born       zset   push instants (us) of parked members, only with ``max_age``
    q:{name}:seq        string the last id's sequence number

Encodings (fixed-width big-endian prefixes, so byte order is numeric order):

- id = 8-byte sequence + item. The sequence is ``max(last + 1, now_us)``: strictly
  increasing within one queue (equal priorities leave in push order, as Redis orders equal
  scores by member bytes) and close to the push instant (shards compare by it).
- parked = 8-byte float64 priority + id: an item away from ``ready`` keeps its priority.
- leased = 8-byte priority + 4-byte delivery number + id: unique per delivery, so the
  acknowledgement of an earlier delivery never settles a later one.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from ..core._names import check_name

__all__ = ["LEASE_PREFIX", "SEQ_BYTES", "QueueKeys", "leased", "split_leased"]

SEQ_BYTES: Final = 8
"""An id starts with its 8-byte sequence; the item follows."""
LEASE_PREFIX: Final = 12
"""A lease member starts with priority (8 bytes) and delivery number (4); the id follows."""

_LEASE = struct.Struct(">dI")


@dataclass(frozen=True, slots=True)
class QueueKeys:
    """The keys of queue ``name`` (a validated name: no braces, no control characters)."""

    name: str
    ready: bytes
    delayed: bytes
    leases: bytes
    attempts: bytes
    dead: bytes
    born: bytes
    seq: bytes

    @classmethod
    def of(cls, name: str) -> QueueKeys:
        """The keys of ``name``; a bad name raises ``InvalidNameError``."""
        prefix = b"q:{" + check_name(name, "queue name").encode() + b"}:"
        parts = (b"ready", b"delayed", b"leases", b"attempts", b"dead", b"born", b"seq")
        return cls(name, *(prefix + part for part in parts))

    def all(self) -> tuple[bytes, ...]:
        """Every key but ``seq``, in the order the take, nack and clear scripts declare them."""
        return (self.ready, self.delayed, self.leases, self.attempts, self.dead, self.born)


def leased(priority: float, delivery: int, item_id: bytes) -> bytes:
    """The member of a lease (and of a dead letter)."""
    return _LEASE.pack(priority, delivery) + item_id


def split_leased(member: bytes) -> tuple[float, int, bytes]:
    """(priority, delivery number, id) of a lease member."""
    priority, delivery = _LEASE.unpack_from(member)
    return priority, delivery, member[LEASE_PREFIX:]
