"""Priority queues on sorted sets, on every backend (see docs/queue.md).

:class:`Queue` / :class:`AsyncQueue`: one queue (lowest priority value first, FIFO among
equal priorities; delayed items; reliable mode with leases, retries and dead letters).
:class:`ShardedQueue` / :class:`AsyncShardedQueue`: N such queues on N hash tags, merged
by popping the global minimum of their heads.

The asyncio classes are the source (``_async/``); the blocking ones (``_sync/``) are
generated from them by ``scripts/generate_sync.py``.
"""

from __future__ import annotations

from ..errors import InvalidItemError, InvalidPriorityError, QueueArgumentError
from ._async.queue import AsyncQueue
from ._async.sharded import AsyncShardedQueue
from ._plan import POLL_CAP
from ._sync.queue import Queue
from ._sync.sharded import ShardedQueue
from .results import Counts, DeadLetter, Lease, NackOutcome

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
