"""Priority queues on sorted sets, on every backend (see docs/queue.md).

:class:`Queue` / :class:`AsyncQueue`: one queue (lowest priority value first, FIFO among
equal priorities; delayed items; reliable mode with leases, retries and dead letters).
:class:`ShardedQueue` / :class:`AsyncShardedQueue`: N such queues on N hash tags, merged
by popping the global minimum of their heads.
"""

from __future__ import annotations

from ..errors import InvalidItemError, InvalidPriorityError, QueueArgumentError
from ._plan import POLL_CAP
from .aio import AsyncQueue
from .results import Counts, DeadLetter, Lease, NackOutcome
from .sharded import AsyncShardedQueue, ShardedQueue
from .sync import Queue

__all__ = [
    "POLL_CAP",
    "AsyncQueue",
    "AsyncShardedQueue",
    "Counts",
    "DeadLetter",
    "InvalidItemError",
    "InvalidPriorityError",
    "Lease",
    "NackOutcome",
    "Queue",
    "QueueArgumentError",
    "ShardedQueue",
]
