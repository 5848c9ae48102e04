"""Live updates: the hub the write handlers tell after each applied write, and the
channels (one per WebSocket) it feeds (docs/live.md).

Per board, a :class:`Feed` numbers the board's events (from 1, per process; the hub's
``epoch`` names the numbering), keeps the newest :attr:`LiveLimits.buffer` of them for
clients that resume, and runs one flush task: woken by a write or a new channel, it reads
each subscribed window's top once, encodes one message per (window, limit) and hands it to
every channel of that group at once (:meth:`Channel.put_all`: queued for a sender task
under the HTTP server, written directly by :mod:`.fastlive`), then sleeps
:attr:`LiveLimits.interval` so that a burst of writes is one message. A write costs the
handler O(1) (number the event, append it); a channel whose queue (or unsent bytes) passes
its bound is closed (4008), never waited for.

The hub calls the boards' own reads (``top``, ``entry``) only: the service calls features,
never backends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ..leaderboard import AsyncLeaderboard, Submission
from .convert import entries
from .livemsg import (
    Event,
    MemberSnapshot,
    MemberUpdate,
    Ping,
    Snapshot,
    Update,
    encode,
)
from .registry import Boards
from .schemas import EntryOut

__all__ = ["CLOSE", "Channel", "Feed", "Hub", "LiveLimits"]

_log = logging.getLogger("ranked.service.live")

CLOSE: Final = {
    "going-away": 1001,
    "bad-request": 4000,
    "unauthorized": 4001,
    "forbidden": 4003,
    "unknown-board": 4004,
    "too-slow": 4008,
}
"""The close codes of the live channels (docs/live.md)."""


@dataclass(frozen=True)
class LiveLimits:
    """The live channels' bounds (environment: ``RANKED_LIVE_<NAME>``)."""

    queue: int = 256
    """Messages a channel may have waiting; one more closes it (4008, too slow). On the
    live port (:mod:`.fastlive`): unsent bytes past this many times the message just
    written (at least 4 KiB)."""
    buffer: int = 1000
    """Events kept per board for clients that resume."""
    interval: float = 0.02
    """The shortest time between two flushes of a board (seconds): the coalescing frame."""
    heartbeat: float = 15.0
    """A ping after this many quiet seconds."""
    close_grace: float = 10.0
    """Seconds a closed channel's last write and close frame may take before its
    connection is dropped."""
    max_top: int = 100
    """The largest ``limit`` a board channel may ask for."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> LiveLimits:
        environ = os.environ if environ is None else environ
        found = cls()

        def get(name: str, default: float) -> float:
            raw = environ.get(f"RANKED_LIVE_{name.upper()}")
            return default if raw is None else float(raw)

        return cls(
            queue=int(get("queue", found.queue)),
            buffer=int(get("buffer", found.buffer)),
            interval=get("interval", found.interval),
            heartbeat=get("heartbeat", found.heartbeat),
            close_grace=get("close_grace", found.close_grace),
            max_top=found.max_top,
        )


class Channel:
    """One subscriber: a board channel (``member`` None: the top ``limit`` of ``window``)
    or a member channel. ``after``: the id to resume from (None: start with a snapshot).
    Its queue holds encoded messages; :meth:`put` is O(1) and never waits."""

    __slots__ = (
        "_wake",
        "after",
        "bound",
        "closed",
        "done",
        "limit",
        "member",
        "queue",
        "standing",
        "started",
        "window",
    )

    def __init__(
        self,
        window: str | None,
        limit: int,
        member: str | None,
        after: int | None,
        bound: int,
    ) -> None:
        self.window = window
        self.limit = limit
        self.member = member
        self.after = after
        self.bound = bound
        self.queue: deque[str] = deque()
        self.closed: tuple[int, str] | None = None
        self.started = False
        self.standing: tuple[float | None, int | None] = (None, None)
        """A member channel's last sent score and rank."""
        self._wake = asyncio.Event()
        self.done = asyncio.Event()
        """Set once the channel is closed."""

    def put(self, message: str) -> None:
        """Queue ``message``; past the bound the channel is closed as too slow."""
        if self.closed is not None:
            return
        if len(self.queue) >= self.bound:
            self.close(CLOSE["too-slow"], "too slow: the client does not keep up")
            return
        self.queue.append(message)
        self._wake.set()

    @classmethod
    def put_all(cls, channels: Sequence[Channel], message: str) -> None:
        """:meth:`put` ``message`` to each of ``channels`` (all of this class): a transport
        that can write one message to many connections at once overrides it."""
        for channel in channels:
            channel.put(message)

    def close(self, code: int, reason: str) -> None:
        if self.closed is None:
            self.closed = (code, reason)
            self.queue.clear()
            self._wake.set()
            self.done.set()

    async def next(self, timeout: float) -> str | None:
        """The next message; None when the channel is closed; ``""`` after ``timeout``
        quiet seconds (time for a heartbeat)."""
        if not self.queue and self.closed is None:
            # A timer that sets the wake event, not asyncio.wait_for: that wraps every
            # wait in a task of its own, once per message per channel.
            expired = False

            def expire() -> None:
                nonlocal expired
                expired = True
                self._wake.set()

            timer = asyncio.get_running_loop().call_later(timeout, expire)
            try:
                while not self.queue and self.closed is None:
                    if expired:
                        return ""
                    self._wake.clear()
                    await self._wake.wait()
            finally:
                timer.cancel()
        if self.closed is not None:
            return None
        return self.queue.popleft()


class _WindowIds(dict[str | None, str]):
    """The window id a channel's ``window`` argument names, asked of the board once per
    flush (not once per channel)."""

    def __init__(self, board: AsyncLeaderboard) -> None:
        super().__init__()
        self.board = board

    def __missing__(self, window: str | None) -> str:
        found = self[window] = self.board.window_id(window)
        return found


class Feed:
    """One board's events and channels (see the module docstring)."""

    def __init__(self, name: str, hub: Hub) -> None:
        self.name = name
        self.hub = hub
        self.last_id = 0
        self.buffer: deque[Event] = deque(maxlen=hub.limits.buffer)
        self.pending: list[Event] = []
        self.channels: set[Channel] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # -- writers ------------------------------------------------------------------------

    def record(self, event: Event) -> None:
        """Number ``event`` and keep it: O(1)."""
        self.last_id += 1
        event.id = self.last_id
        self.buffer.append(event)
        if self.channels:
            self.pending.append(event)
            self._wake.set()

    # -- channels -----------------------------------------------------------------------

    def add(self, channel: Channel) -> None:
        self.channels.add(channel)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        self._wake.set()

    def discard(self, channel: Channel) -> None:
        self.channels.discard(channel)

    def ping(self) -> str:
        return encode(Ping(self.last_id, self.hub.epoch))

    def missed(self, after: int) -> list[Event] | None:
        """The buffered events after ``after`` up to :attr:`last_id`; None when the
        buffer no longer holds them all (or ``after`` is not one of this epoch's)."""
        if after > self.last_id or after < 0:
            return None
        if after == self.last_id:
            return []
        if not self.buffer or self.buffer[0].id > after + 1:
            return None
        skip = after + 1 - self.buffer[0].id
        return [self.buffer[i] for i in range(skip, len(self.buffer))]

    async def close(self) -> None:
        for channel in self.channels:
            channel.close(CLOSE["going-away"], "the service is stopping")
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    # -- the flush task -----------------------------------------------------------------

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        interval = self.hub.limits.interval
        while True:
            await self._wake.wait()
            self._wake.clear()
            started = loop.time()
            try:
                await self._flush()
            except Exception:  # one failed read must not end the board's updates
                _log.exception("board %r: live flush failed", self.name)
            # flushes start at least an interval apart (the flush's own time counts)
            await asyncio.sleep(max(0.0, started + interval - loop.time()))

    async def _flush(self) -> None:
        events, self.pending = self.pending, []
        last = self.last_id
        board = self.hub.boards.get(self.name)
        channels = [c for c in self.channels if c.closed is None]
        if not events and all(c.started for c in channels):
            return
        ids = _WindowIds(board)
        tops = await self._tops(board, channels, bool(events), ids)
        encoded: dict[tuple[str, int], str] = {}
        # the started board channels get one update per window and limit, written to
        # each group at once (Channel.put_all) after the others' messages
        groups: dict[tuple[type[Channel], str, int], list[Channel]] = {}
        for channel in channels:
            if channel.member is None:
                if channel.started:
                    if events:  # a new channel: nothing for the others
                        key = (type(channel), ids[channel.window], channel.limit)
                        groups.setdefault(key, []).append(channel)
                else:
                    self._board_message(channel, last, tops, ids[channel.window])
            else:
                await self._member_message(board, channel, events, last)
            channel.started = True
        for (kind, window, limit), group in groups.items():
            if window in tops:
                text = encoded.get((window, limit))
                if text is None:
                    top = tops[window][:limit]
                    update = Update(last, self.hub.epoch, window, events, top)
                    text = encoded[window, limit] = encode(update)
                kind.put_all(group, text)

    async def _tops(
        self,
        board: AsyncLeaderboard,
        channels: Iterable[Channel],
        changed: bool,
        ids: _WindowIds,
    ) -> dict[str, list[EntryOut]]:
        """The top of every window a board channel needs now (one read each)."""
        wanted: dict[str, int] = {}
        for channel in channels:
            if channel.member is None and (changed or not channel.started):
                window = ids[channel.window]
                wanted[window] = max(wanted.get(window, 0), channel.limit)
        return {
            window: list(entries(await board.top(n, window=window))) for window, n in wanted.items()
        }

    def _board_message(  # a new channel's first message
        self,
        channel: Channel,
        last: int,
        tops: dict[str, list[EntryOut]],
        window: str,
    ) -> None:
        if window not in tops:
            return
        top = tops[window][: channel.limit]
        epoch = self.hub.epoch
        missed = None if channel.after is None else self.missed_until(channel.after, last)
        if missed is None:
            reset = channel.after is not None
            channel.put(encode(Snapshot(last, epoch, window, top, reset)))
        else:
            channel.put(encode(Update(last, epoch, window, missed, top)))

    def missed_until(self, after: int, last: int) -> list[Event] | None:
        found = self.missed(after)
        return None if found is None else [e for e in found if e.id <= last]

    async def _member_message(
        self, board: AsyncLeaderboard, channel: Channel, events: list[Event], last: int
    ) -> None:
        member = channel.member
        assert member is not None
        window = board.window_id(channel.window)
        found = await board.entry(member, window=window)
        standing: tuple[float | None, int | None] = (
            (None, None) if found is None else (found.score, found.rank)
        )
        epoch = self.hub.epoch
        if not channel.started:
            missed = None if channel.after is None else self.missed_until(channel.after, last)
            if missed is None:
                score, rank = standing
                reset = channel.after is not None
                channel.put(encode(MemberSnapshot(last, epoch, window, member, score, rank, reset)))
                channel.standing = standing
                return
            events = missed
        own = [e for e in events if e.member == member or e.op == "clear"]
        if not own and standing == channel.standing and channel.started:
            return
        (old_score, old_rank), (score, rank) = channel.standing, standing
        channel.standing = standing
        channel.put(
            encode(MemberUpdate(last, epoch, window, member, score, rank, old_score, old_rank, own))
        )


class Hub:
    """Every board's feed, in one service process (one event loop)."""

    def __init__(self, boards: Boards, limits: LiveLimits | None = None) -> None:
        self.boards = boards
        self.limits = limits or LiveLimits.from_environ()
        self.epoch = secrets.token_hex(4)
        """Names this process's numbering of events."""
        self._feeds: dict[str, Feed] = {}
        self.observers: list[Callable[[str, Sequence[Submission]], None]] = []
        """Also told of every board's applied submissions (the notifications' watchers)."""

    def feed(self, name: str) -> Feed:
        feed = self._feeds.get(name)
        if feed is None:
            feed = self._feeds[name] = Feed(name, self)
        return feed

    # -- what the write handlers tell ---------------------------------------------------

    def submitted(self, board: str, results: Sequence[Submission]) -> None:
        """Submissions applied to ``board``: one event each. O(len(results))."""
        for observer in self.observers:
            observer(board, results)
        feed = self.feed(board)
        for result in results:
            primary = result.primary
            windows = (
                {w: r.score for w, r in result.windows.items()} if len(result.windows) > 1 else None
            )
            member = result.member
            feed.record(
                Event(
                    0,
                    "submit",
                    member if isinstance(member, str) else member.decode("utf-8", "replace"),
                    primary.window,
                    primary.score,
                    primary.rank,
                    primary.previous_score,
                    primary.previous_rank,
                    windows,
                )
            )

    def removed(self, board: str, member: str) -> None:
        self.feed(board).record(Event(0, "remove", member))

    def cleared(self, board: str) -> None:
        self.feed(board).record(Event(0, "clear"))

    async def close(self) -> None:
        """Close every channel (1001) and stop the flush tasks."""
        for feed in self._feeds.values():
            await feed.close()

    def closing(self) -> None:
        """Tell every channel the service is stopping (1001), without waiting."""
        for feed in self._feeds.values():
            for channel in feed.channels:
                channel.close(CLOSE["going-away"], "the service is stopping")

    async def drained(self, timeout: float) -> None:
        """Wait until every connection has ended (each sent its close frame, or was
        dropped), at most ``timeout`` seconds: after :meth:`closing`, before the server
        stops, so that it does not cut a connection before its close frame is out."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while any(feed.channels for feed in self._feeds.values()) and loop.time() < deadline:
            await asyncio.sleep(0.01)
