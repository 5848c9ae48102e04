"""The webhook outbox: notifications bound for a board's webhook, kept in the service's
journal so that each is delivered at least once across crashes and restarts (docs/live.md,
"Notifications").

A notification for a webhook is first appended to the board's outbox stream
(``<board>~notify``, idempotency key ``notify:<id>``), and only once that append is durable
handed to the sender; when its delivery ends (a 2xx answer, or every attempt failed) a
second event (``settled:<id>``, the outcome in ``reason``) marks it done. At start, the
notifications with no mark are sent again, with their ids and bodies unchanged. Both
appends go through the journal's asyncio front (one committer hand-off per loop iteration
for all of them), never on a writer's or a request's path. Reading what is pending is
two ranges of the journal's (stream, key) index and one lookup per pending notification.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Final

from ..journal.aio import AsyncAppender
from ..journal.events import NewEvent, outbox_stream
from ..journal.store import JournalStore

__all__ = ["Outbox"]

_PRODUCED: Final = "notify:"
_SETTLED: Final = "settled:"


class Outbox:
    """The journaled outbox of every board's webhook, on one service's journal."""

    def __init__(self, store: JournalStore) -> None:
        self._store = store
        self._appender = AsyncAppender(store)

    async def produced(self, board: str, payload: Mapping[str, Any]) -> None:
        """Keep ``payload`` (a notification: its ``id`` names it) until it is settled;
        returns once that is durable. The same id kept twice is kept once."""
        delivery = str(payload["id"])
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        event = NewEvent(
            board=outbox_stream(board),
            operation="notification",
            member=delivery.encode(),
            value=body,
            at_us=time.time_ns() // 1000,
            key=_PRODUCED + delivery,
        )
        await self._appender.append([event])

    async def settled(self, board: str, delivery: str, outcome: str) -> None:
        """Mark notification ``delivery`` done: ``ok`` (delivered) or ``failed`` (every
        attempt failed); it is not sent again."""
        event = NewEvent(
            board=outbox_stream(board),
            operation="settled",
            member=delivery.encode(),
            at_us=time.time_ns() // 1000,
            key=_SETTLED + delivery,
            reason=outcome,
        )
        await self._appender.append([event])

    def pending(self, board: str) -> list[dict[str, Any]]:
        """The notifications of ``board`` kept and not settled, oldest first."""
        stream = outbox_stream(board)
        store = self._store
        done = {key[len(_SETTLED) :] for key in store.keys_with_prefix(stream, _SETTLED)}
        found = []
        for key in store.keys_with_prefix(stream, _PRODUCED):
            if key[len(_PRODUCED) :] in done:
                continue
            event = store.event_by_key(stream, key)
            if event is not None:
                found.append((event.seq, json.loads(event.value)))
        return [payload for _, payload in sorted(found, key=lambda pair: pair[0])]
