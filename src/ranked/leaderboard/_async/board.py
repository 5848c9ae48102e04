"""``AsyncLeaderboard``: a board on any asyncio backend (memory, Redis, Redis Cluster); the
source of the blocking ``Leaderboard`` (``_sync/board.py``, generated from this file).

Each method is a thin shell: the logic lives in the board's concept objects
(:class:`~ranked.leaderboard._plan.BoardPlan`: ``reads``, ``writes``, ``social``,
``life``...), whose operations yield the board's steps by name;
:class:`~ranked.leaderboard._steps.BoundSteps` runs each on the backend. Complexities
are per step (n = members in the window, k = members asked for or returned). "Atomic"
means one step: under one lock on ``memory://``, one Lua script on Redis and Redis
Cluster. Operations made of several steps say so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from types import MappingProxyType, MethodType, TracebackType
from typing import Any, Self, TypeVar

from ...backends.base import AsyncBackend
from ...backends.procedure import AsyncBound
from ...core._time import Instant
from ...core.lex import LexLayout
from ...core.models import Around, Entry, Member, MemberRank, Page
from ...core.ranks import RankStyle
from ...core.scores import ScoreAt, TimeTiebreak
from ...core.windows import Season, Window, WindowKind, WindowPlan
from ...errors import BoardConfigError, JournalError, UnsupportedOperationError
from ...journal import open_journal
from ...journal.as_of import AsOf
from ...journal.events import NewEvent, is_side_stream
from ...journal.snapshots import SnapshotStore
from ...journal.store import JournalStore
from .._config_json import options as board_options
from .._fast import ask_reader, ask_writer, fast_eligible, method_shortcut
from .._journal_open import restore_later
from .._plan import BoardPlan, PlanCore, Steps, TrimmedLookup, from_ms, run_async, to_ms
from .._plan_journal import Journaling
from .._plan_lex import LexFields
from .._requests import Operator
from .._steps import BoundSteps
from ..config import DEFAULT_MAX_PAGE_SIZE, BoardConfig, TieBreak, window_plan
from ..results import FriendsBoard, HistoryEntry, MemberData, Submission, WindowResult
from .journaled import AsyncBoardJournal

__all__ = ["AsyncLeaderboard"]

T = TypeVar("T")

WindowArg = str | Window | None


class AsyncLeaderboard:
    """A leaderboard: members with scores, ranked, in one or more time windows.

    ``backend`` is an :class:`~ranked.backends.base.AsyncBackend` or a URL for
    :func:`ranked.backends.factory.open_async_backend` (the board then owns and closes it).
    See :class:`~ranked.leaderboard.config.BoardConfig` for the options; ``clock``
    (Unix ms) overrides the backend's clock for choosing windows and stamping time
    tie-breaks (TTLs always count on the backend's clock); ``on_trimmed_lookup``
    rehydrates members trimmed by ``keep`` (see :meth:`submit`); ``bytes_members``
    returns members as ``bytes`` (default: ``str`` when they are UTF-8).

    ``journal`` (a URL such as ``sqlite:///data/journal.db``, or a journal object) makes
    the board durable (docs/durability.md): every write is appended to the journal and
    acknowledged once durable, then applied to the index; opening restores the board
    (the newest good snapshot, then the journal's tail) before the constructor returns
    (asyncio: on ``async with`` or :meth:`restore`). On a board with ``keep`` and an
    all-time primary window, the journal fills ``on_trimmed_lookup`` when it is not given:
    a trimmed member who submits again starts from its journaled score. ``snapshots``:
    the directory of the board's snapshots (``memory://``; default: ``<journal
    file>.snapshots`` beside a SQLite journal), written every ``snapshot_every`` events
    and on :meth:`close`.
    """

    def __init__(
        self,
        backend: AsyncBackend | str,
        name: str,
        *,
        higher_is_better: bool = True,
        operator: Operator = "best",
        tie_break: TieBreak | TimeTiebreak | LexLayout = "member",
        windows: WindowPlan | Sequence[str | WindowKind] | str = ("all",),
        rank_style: RankStyle | str = RankStyle.COMPETITION,
        keep: int | None = None,
        keep_buffer: int = 0,
        max_page_size: int = DEFAULT_MAX_PAGE_SIZE,
        namespace: str = "rk",
        friends_cache_ms: int = 2000,  # ignored: friend boards are read fresh (no cache)
        clock: Callable[[], int] | None = None,
        on_trimmed_lookup: TrimmedLookup | None = None,
        bytes_members: bool = False,
        journal: str | JournalStore | None = None,
        snapshots: str | None = None,
        snapshot_every: int | None = 100_000,
    ) -> None:
        config = BoardConfig(
            name,
            higher_is_better,
            operator,
            tie_break,
            window_plan(windows),
            RankStyle.parse(rank_style),
            keep,
            keep_buffer,
            max_page_size,
            namespace,
            friends_cache_ms,
        )
        self._owns_backend = isinstance(backend, str)
        self.backend: AsyncBackend = _open(backend) if isinstance(backend, str) else backend
        backend = self.backend
        self.config = config
        self._plan = BoardPlan(
            PlanCore(
                config,
                backend.now_ms,
                clock=clock,
                on_trimmed_lookup=on_trimmed_lookup,
                bytes_members=bytes_members,
                cross_slot=backend.cross_slot,
            )
        )
        self._steps = BoundSteps(backend)
        self._reader = ask_reader(backend, self._plan)
        """The one-call entry read in the board's style (see .._fast), or None."""
        # The one-call submit (see .._fast): asked of the backend after the first general
        # submission registers the window, dropped when clear() or a deadline changes the
        # plan; a backend without one is not asked again.
        self._fast_eligible = fast_eligible(self._plan)
        self._fast: AsyncBound[Submission | None] | None = None
        self._shortcut: Any = None
        self._journal: AsyncBoardJournal | None = None
        self._owns_journal = False
        self._config_recorded = journal is None
        self._archives: dict[str, AsyncLeaderboard] = {}
        kept = config.windows
        self._archive_due: int | None = (
            0
            if journal is not None and (kept.seasons or kept.kinds != (WindowKind.ALL_TIME,))
            else None
        )
        """When a journaled board with windows that close next looks for closed windows to
        archive (Unix ms; None: never)."""
        self._restored = journal is None
        if journal is not None:
            self._journal = _journal_of(self, journal, snapshots, snapshot_every)
            self._fast_eligible = False
        if self._fast_eligible and type(self).submit is AsyncLeaderboard.submit:
            self._shortcut = method_shortcut(backend, MethodType(AsyncLeaderboard.submit, self))
            if self._shortcut is not None:
                self.__dict__["submit"] = self._shortcut  # see .._fast
        if self._journal is not None:
            restore_later(self)

    @property
    def name(self) -> str:
        """The board's name (inside every key's hash tag)."""
        return self.config.name

    def __repr__(self) -> str:
        return f"AsyncLeaderboard({self.backend.url!r}, {self.name!r})"

    @property
    def journal_store(self) -> JournalStore | None:
        """The board's journal store, None without one: where other features keep their
        records of the board beside it (the write guard's verdicts, docs/guard.md)."""
        journal = self._journal
        return None if journal is None else journal.store

    # -- writes -----------------------------------------------------------------------

    async def submit(
        self,
        member: Member,
        score: float,
        *,
        operator: Operator | None = None,
        at: Instant | None = None,
        tie: int | None = None,
        key: str | None = None,
        actor: str | None = None,
        reason: str | None = None,
    ) -> Submission:
        """Submit a score to every window open at ``at`` (default: now), atomically.

        ``tie`` (only with ``tie_break="secondary"``): the member's tie-break value, an
        int in the signed 64-bit range; lower wins among equal scores (default: the
        instant in Unix ms). It is written in the same atomic step as the score, only in
        the windows where the score changed (an unchanged score keeps its earlier value).

        ``operator`` overrides the board's (best / set / incr / decr). ``at`` (aware
        datetime or Unix seconds) imports history or pins time in tests; windows past
        their retention at that instant are skipped. On a time tie-break board,
        ``score`` is an int and ``at`` is also the achieved-at time.

        With ``on_trimmed_lookup`` and operator incr/decr/best, a member absent from the
        primary window first gets its historical score from the hook (one extra read;
        not atomic with the write: two concurrent first submissions of one trimmed
        member may both rehydrate). O(windows * log n). Redis: one script
        (ZSCORE, ZADD, companions, PEXPIRE, ranks per window); atomic on every backend.

        ``key`` (a board with a journal): an idempotency key; a retried call with the same
        key is applied once and answers as the first did.

        ``actor`` / ``reason`` (a board with a journal): who submitted and a note on it
        (a non-empty str each), kept in the submission's journal event (the write
        guard's accepted verdicts ride there, docs/guard.md). Replay and rebuild ignore
        them; a board without a journal does too.
        """
        journal = self._journal
        if journal is not None:
            await self._ready()
            lane = journal.lane
            if lane is not None and at is None and tie is None and key is None:
                waiting = lane.submit(member, score, operator, actor, reason)
                if waiting is not None:  # durable and applied when it answers
                    durable: Submission = await waiting
                    if self._archive_due is not None:
                        await self._archive_when_due()
                    return durable
            events, prepared = journal.journaling.submit(
                ((member, score),), operator, at, tie, key, actor, reason
            )
            found: list[Submission] | None = await journal.write(events, prepared)
            if self._archive_due is not None:
                await self._archive_when_due()
            return found[0] if found is not None else (await self._standing([member]))[0]
        fast = self._fast
        if fast is not None and at is None and tie is None:
            done = await fast(member, score, operator)
            if done is not None:
                return done
        writes = self._plan.writes
        single = writes.prepare_one(member, score, operator, at, tie)
        if single is None:  # a window to register, or a trimmed-member lookup
            prepared = writes.prepare(((member, score),), operator, at, tie)
            result = (await run_async(self._steps, writes.submit_steps(prepared)))[0]
        else:
            request, windows = single
            result = writes.finish_single(member, windows, await self._steps.submit(request))
        if fast is None and self._fast_eligible:
            writer, self._fast_eligible = ask_writer(self.backend, self._plan)
            self._use_writer(writer)
        return result

    def _use_writer(self, writer: AsyncBound[Submission | None] | None) -> None:
        """Submit through ``writer`` from now on (None: the general path only)."""
        self._fast = writer
        if self._shortcut is not None:
            self._shortcut.writer = writer

    async def submit_many(
        self,
        scores: Mapping[str, float] | Mapping[bytes, float] | Iterable[tuple[Member, float]],
        *,
        operator: Operator | None = None,
        at: Instant | None = None,
        key: str | None = None,
    ) -> list[Submission]:
        """Submit many (member, score) pairs in order, atomically as a whole, in one
        round trip. O(k * windows * log n). Redis: one script for the batch. ``key``: as
        :meth:`submit`."""
        items: Iterable[tuple[Member, float]] = (
            scores.items() if isinstance(scores, Mapping) else scores
        )
        journal = self._journal
        if journal is not None:
            await self._ready()
            pairs = list(items)
            if not pairs:
                return []
            events, prepared = journal.journaling.submit(pairs, operator, at, None, key)
            done: list[Submission] | None = await journal.write(events, prepared)
            if self._archive_due is not None:
                await self._archive_when_due()
            if done is not None:
                return done
            return await self._standing([m for m, _ in pairs])
        writes = self._plan.writes
        prepared = writes.prepare(items, operator, at)
        if not prepared.requests:
            return []
        return await run_async(self._steps, writes.submit_steps(prepared))

    async def submit_lex(
        self,
        member: Member,
        fields: LexFields,
        *,
        operator: Operator | None = None,
        at: Instant | None = None,
    ) -> Submission:
        """Write a member's fields on a lexicographic board (``tie_break=LexLayout(...)``):
        stored at score 0 as ``layout.encode(fields, member)``, ordered by bytes. ``fields``
        is an int for a one-field layout. Operator ``set`` or ``best`` (keeps the smaller
        encoding, the better one in byte order). One atomic backend step per window
        (Redis: one script: HGET, ZREM, ZADD, HSET, PEXPIRE); the result's ranks are
        unique ranks (positions). O(windows * log n)."""
        steps = self._plan.lex.submit_steps(((member, fields),), operator, at)
        journal = self._journal
        if journal is not None:
            Journaling.checked(steps)
            found = await self._journaled(
                journal.journaling.lex_event(member, fields, operator, at)
            )
            assert found is not None  # no key: every call gets its own answer
            return found[0]  # type: ignore[no-any-return]
        return (await run_async(self._steps, steps))[0]

    async def remove(
        self, member: Member, *, actor: str | None = None, reason: str | None = None
    ) -> bool:
        """Remove a member from every window, with its data and friend set; True if
        anything was removed. Several backend calls (each atomic): O(windows * log n).
        ``actor`` / ``reason``: who removed it and why (journaled with the removal). On a
        journaled board the member also leaves the archives of closed windows (their reads
        leave out members removed after the archive)."""
        steps = self._plan.life.remove(member)
        event = _event("remove", member, actor=actor, reason=reason)
        removed = bool(await self._write(steps, event))
        await self._drop_archives()
        return removed

    async def clear(self, *, actor: str | None = None, reason: str | None = None) -> int:
        """Delete every key of the board (all windows, member data, metadata, friends);
        returns how many existed. Redis: SMEMBERS x2 then DEL. Not atomic as a whole.
        ``actor`` / ``reason``: who cleared it and why (journaled with the clear)."""
        self._use_writer(None)  # the window must be registered again
        journal = self._journal
        if journal is not None:
            event = journal.journaling.event("clear", actor=actor, reason=reason)
            return int(await self._journaled(event) or 0)
        return await run_async(self._steps, self._plan.life.clear())

    async def expire_at(self, when: Instant) -> None:
        """Expire every key of the board at ``when`` (PEXPIREAT); later writes through
        this object inherit the deadline. Several backend calls."""
        self._use_writer(None)  # later writes stamp the deadline: the general path
        await self._expire(to_ms(when))

    async def expire_after_end(self, season: str | Season, delay: timedelta) -> None:
        """Expire the board ``delay`` after one of its seasons ends."""
        deadline = self._plan.windows.season_end_ms(season) + delay // timedelta(milliseconds=1)
        self._use_writer(None)
        await self._expire(deadline)

    async def _expire(self, deadline_ms: int) -> None:
        journal = self._journal
        if journal is not None:
            await self._journaled(journal.journaling.event("expire", value=b"%d" % deadline_ms))
            return
        await run_async(self._steps, self._plan.life.expire_at(deadline_ms))

    # -- reads --------------------------------------------------------------------------

    async def score(self, member: Member, *, window: WindowArg = None) -> float | None:
        """The member's score, None if absent. O(1). Redis: ZMSCORE. Atomic."""
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.score(member, window=window)
        reads = self._plan.reads
        args = reads.plain_scores(member, window)
        if args is None:
            return await run_async(self._steps, reads.score(member, window))
        return reads.score_from(await self._steps.scores(*args))

    async def score_at(self, member: Member, *, window: WindowArg = None) -> ScoreAt | None:
        """(score, achieved-at) on a time tie-break board. O(1). Redis: ZMSCORE."""
        return await run_async(self._steps, self._plan.reads.score_at(member, window))

    def decode(self, raw: float) -> ScoreAt:
        """Split a stored packed value (e.g. a cursor's) into (score, achieved-at)."""
        return self._plan.core.decode(raw)

    async def rank(
        self, member: Member, *, style: RankStyle | str | None = None, window: WindowArg = None
    ) -> int | None:
        """The member's 1-based rank in ``style`` (default: the board's), None if absent.
        O(log n) in every style. Redis: one script (ZSCORE + ZREVRANK / ZCOUNT / dense
        companion ZCOUNT). Atomic."""
        if window is None and style is None and self._reader is not None:
            found = self._reader(member)
            if found is not False:
                return None if found is None else found.rank  # type: ignore[union-attr]
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.rank(member, style=style, window=window)
        reads = self._plan.reads
        args = reads.plain_ranks(member, style, window)
        if args is None:
            found = await run_async(self._steps, reads.entry_of(member, style, window))
            return None if found is None else found.rank
        return reads.rank_from(await self._steps.ranks(*args))

    async def entry(
        self, member: Member, *, style: RankStyle | str | None = None, window: WindowArg = None
    ) -> Entry | None:
        """The member's score and rank, None if absent. O(log n). Atomic."""
        if window is None and style is None and self._reader is not None:
            found = self._reader(member)
            if found is not False:
                return found  # type: ignore[return-value]
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.entry(member, style=style, window=window)
        reads = self._plan.reads
        args = reads.plain_ranks(member, style, window)
        if args is None:
            return await run_async(self._steps, reads.entry_of(member, style, window))
        return reads.entry_from(member, await self._steps.ranks(*args))

    async def ranks_of(
        self,
        members: Sequence[Member],
        *,
        style: RankStyle | str | None = None,
        window: WindowArg = None,
    ) -> list[MemberRank]:
        """Ranks of many members sorted by rank (board order); absent members last with
        ``found`` False. At most ``max_page_size`` members. O(k log n). Atomic."""
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.ranks_of(members, style=style, window=window)
        reads = self._plan.reads
        direct = reads.plain_ranks_of(members, style, window)
        if direct is None:
            return await run_async(self._steps, reads.ranks_of(members, style, window))
        args, listed = direct
        return reads.ranks_of_from(listed, args[1], await self._steps.ranks(*args))

    async def top(
        self,
        n: int = 10,
        *,
        style: RankStyle | str | None = None,
        window: WindowArg = None,
        with_data: bool = False,
    ) -> list[Entry]:
        """The best ``n`` entries (n <= max_page_size). O(log n + n).
        Redis: one script (ZRANGE REV + first rank). Atomic. ``with_data``: each entry
        carries its member data (``Entry.data``), read by one HMGET for the whole list."""
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.top(n, style=style, window=window, with_data=with_data)
        reads = self._plan.reads
        args = None if with_data else reads.plain_top(n, style, window)
        if args is None:
            return await run_async(self._steps, reads.top(n, style, window, with_data))
        return reads.entries(await self._steps.page(*args))

    async def page(
        self,
        cursor: str | None = None,
        *,
        size: int | None = None,
        style: RankStyle | str | None = None,
        window: WindowArg = None,
        with_data: bool = False,
    ) -> Page:
        """A page best first and an opaque cursor to the next (None: no more).

        Keyset paging: the next page starts strictly after the last (score, member), so
        writes between pages neither repeat nor skip members. The cursor remembers its
        window and size. O(log n + size). Redis: one script. Atomic. ``with_data``: each
        entry carries its member data, read by one HMGET for the whole page.
        """
        reads = self._plan.reads
        direct = None
        if cursor is not None and not with_data:
            direct = reads.plain_page_after(cursor, size, style, window)
        if direct is None:
            return await run_async(self._steps, reads.page(cursor, size, style, window, with_data))
        args, limit, window_id = direct
        return reads.page_from(await self._steps.page_after(*args), limit, window_id)

    async def page_at(
        self,
        offset: int,
        size: int,
        *,
        style: RankStyle | str | None = None,
        window: WindowArg = None,
        with_data: bool = False,
    ) -> Page:
        """The page at 0-based position ``offset`` (and a cursor to the next); an offset
        past the end reads an empty page, however large. O(log n + size). Redis: one
        script. Atomic. ``with_data``: as :meth:`page`."""
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.page_at(
                    offset, size, style=style, window=window, with_data=with_data
                )
        return await run_async(
            self._steps, self._plan.reads.page_at(offset, size, style, window, with_data)
        )

    async def around(
        self,
        member: Member,
        before: int = 5,
        after: int = 5,
        *,
        style: RankStyle | str | None = None,
        window: WindowArg = None,
        with_data: bool = False,
    ) -> Around:
        """Up to before + 1 + after entries containing the member; shifted (not shrunk)
        at the edges: near the top it fills from below, near the bottom from above.
        O(log n + size). Redis: one script (ZREVRANK + ZREVRANGE). Atomic.
        ``with_data``: as :meth:`page`."""
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.around(
                    member, before, after, style=style, window=window, with_data=with_data
                )
        reads = self._plan.reads
        args = None if with_data else reads.plain_around(member, before, after, style, window)
        if args is None:
            steps = reads.around(member, before, after, style, window, with_data)
            return await run_async(self._steps, steps)
        return reads.around_from(await self._steps.around(*args))

    async def count(self, *, window: WindowArg = None) -> int:
        """Members in the window. O(1). Redis: ZCARD."""
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.count(window=window)
        total: int = await self._steps.count(self._plan.windows.read_target(window)[1].key)
        return total

    async def count_between(self, low: float, high: float, *, window: WindowArg = None) -> int:
        """Members with low <= score <= high. O(log n). Redis: ZCOUNT. Any int or float
        but NaN: an infinity is unbounded, and an int no float64 holds (10**400 too)
        counts exactly (the bound moves inward to the nearest float64 within it)."""
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.count_between(low, high, window=window)
        return await run_async(self._steps, self._plan.reads.count_between(low, high, window))

    async def between(
        self,
        low: float,
        high: float,
        *,
        offset: int = 0,
        count: int | None = None,
        style: RankStyle | str | None = None,
        window: WindowArg = None,
        with_data: bool = False,
    ) -> list[Entry]:
        """Entries with low <= score <= high, best first, skipping ``offset``, at most
        ``count`` (default and cap: max_page_size). O(log n + offset + count).
        Redis: one script (ZRANGE BYSCORE [REV] LIMIT + first rank). Atomic. Bounds: an
        infinity is unbounded, an int no float64 holds counts exactly. ``with_data``: as
        :meth:`page`."""
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.between(
                    low,
                    high,
                    offset=offset,
                    count=count,
                    style=style,
                    window=window,
                    with_data=with_data,
                )
        return await run_async(
            self._steps,
            self._plan.reads.between(low, high, offset, count, style, window, with_data),
        )

    async def percentile(self, member: Member, *, window: WindowArg = None) -> float | None:
        """Percentage (0 <= p < 100) of the window's members with a strictly worse score
        than ``member`` (plain scores: time tie-breaks do not count); None if absent.
        O(log n). One atomic read (Redis: one script of ZSCORE, ZCARD, ZCOUNT); on a time
        tie-break board three reads (ZMSCORE, ZCARD, ZCOUNT), not atomic as a whole."""
        if window is not None and self._journal is not None:
            archive = await self._from_archive(window)
            if archive is not None:
                return await archive.percentile(member, window=window)
        reads = self._plan.reads
        args = reads.plain_percentile(member, window)
        if args is None:
            return await run_async(self._steps, reads.percentile(member, window))
        return reads.percentile_from(await self._steps.percentile(*args))

    def window_id(self, window: WindowArg = None) -> str:
        """The id of the window a read with this ``window`` argument uses now."""
        return self._plan.windows.window_id(window)

    # -- friends -----------------------------------------------------------------------------

    async def add_friends(self, member: Member, friends: Iterable[Member]) -> int:
        """Add to the member's friend set (on this board); returns how many were new.
        Invalidates the member's cached friend views. Redis: SADD + DEL."""
        listed = list(friends) if not isinstance(friends, str | bytes) else friends
        steps = self._plan.social.add_friends(member, listed)
        event = _event("friends_add", member, lambda j: j.friends(listed))
        return int(await self._write(steps, event) or 0)

    async def remove_friends(self, member: Member, friends: Iterable[Member]) -> int:
        """Remove from the member's friend set; invalidates its cached views. Redis: SREM."""
        listed = list(friends) if not isinstance(friends, str | bytes) else friends
        steps = self._plan.social.remove_friends(member, listed)
        event = _event("friends_remove", member, lambda j: j.friends(listed))
        return int(await self._write(steps, event) or 0)

    async def friends(self, member: Member) -> set[Member]:
        """The member's friends. O(k). Redis: SMEMBERS."""
        return await run_async(self._steps, self._plan.social.friends_of(member))

    async def friends_board(
        self,
        member: Member,
        *,
        style: RankStyle | str | None = None,
        window: WindowArg = None,
        with_data: bool = False,
    ) -> FriendsBoard:
        """The member and its friends ranked among themselves, best first, as a
        :class:`FriendsBoard` (a sequence of entries, at most ``max_page_size``, with
        ``rank``: the member's own rank among them, and ``member_index``); a member with
        no friends gets itself alone. Current scores on every call: one atomic read of
        the friend set and the scores (Redis: one script, SMEMBERS + ZMSCORE), ranked
        here; a secondary tie-break board reads its tie values too (HMGET). Writes
        nothing. O(f log n) for f friends. ``with_data``: as :meth:`page`."""
        return await run_async(
            self._steps, self._plan.social.friends_board(member, style, window, with_data)
        )

    # -- member data and metadata ---------------------------------------------------------

    async def set_member_data(
        self,
        member: Member,
        display_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Replace a member's display name and JSON metadata (lives as long as the board).
        Redis: HSET on the board's data hash. Atomic."""
        steps = self._plan.social.set_member_data(member, display_name, metadata)
        value = {"name": display_name, "meta": metadata}
        await self._write(steps, _event("member_data", member, lambda j: j.json(value)))

    async def member_data(self, members: Sequence[Member]) -> dict[Member, MemberData]:
        """Data of those members that have some. O(k). Redis: HMGET."""
        return await run_async(self._steps, self._plan.social.member_data(members))

    async def set_metadata(self, metadata: Mapping[str, Any]) -> None:
        """Replace the board's JSON metadata (shared by every process). Redis: HSET."""
        steps = self._plan.social.set_metadata(metadata)
        await self._write(steps, _event("metadata", None, lambda j: j.json(metadata)))

    async def merge_metadata(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Shallow-merge ``changes`` into the board's JSON metadata (their keys replace
        those stored, the others stay) and return the merged metadata. Atomic on every
        backend: concurrent merges all land. Redis: HMGET, then a compare-and-set script
        (HGET, HSET, PEXPIRE), again from the read if another write came in between."""
        steps = self._plan.social.merge_metadata(changes)
        merged = await self._write(steps, _event("metadata_merge", None, lambda j: j.json(changes)))
        return merged if merged is not None else await self.metadata()

    async def metadata(self) -> dict[str, Any]:
        """The board's metadata ({} if never set). Redis: HMGET."""
        return await run_async(self._steps, self._plan.social.metadata())

    # -- the journal ------------------------------------------------------------------------

    async def _ready(self) -> None:
        """Restore a journaled board before its first write (asyncio: the constructor
        cannot), and journal its configuration when the journal's last record of it
        differs (a board's first write through this object)."""
        if not self._restored:
            await self.restore()
        if not self._config_recorded:
            self._config_recorded = True
            journal = self._journal
            assert journal is not None
            event = journal.journaling.config_event()
            last = journal.store.last_board_event(self.name, "config")
            if last is None or last.value != event.value:
                await journal.write([event])

    async def rebuild(self) -> int:
        """Delete the board from the index and build it again from the journal alone (no
        snapshot: a snapshot is a copy of the index, damage included): the engine's bulk
        load where the board allows it, else a replay of every event (see
        docs/durability.md). Returns how many events were replayed one by one. Not atomic:
        reads meanwhile see the board partly built."""
        journal = self._journal
        if journal is None:
            raise BoardConfigError(f"board {self.name!r} has no journal to rebuild from")
        self._use_writer(None)
        await run_async(self._steps, journal.journaling.reset())
        self._restored = True
        return await journal.restore(from_snapshot=False)

    async def rebuild_window(self, window: WindowArg = None) -> int:
        """Build one window (default: the current primary one) again from the journal and
        put it in place of the live one, leaving the board's other windows alone: after
        its key was lost or damaged (deleted by hand, a bad release). The events that can
        change the window are replayed into staging keys beside the board's (same hash
        slot), which then replace the window's keys in one atomic step taken only if no
        write came in meanwhile (else it starts again, up to 5 times, then raises
        :class:`~ranked.errors.JournalError`). Returns how many members the window holds.
        O(the board's events) journal reads, O(the window's events) replayed."""
        journal = self._journal
        if journal is None:
            raise BoardConfigError(f"board {self.name!r} has no journal to rebuild from")
        await self._ready()
        window_id = self.window_id(window)
        journaling = journal.journaling
        for _ in range(5):
            applied: int = await self._steps.read_seq(journaling.seq_key)
            source = AsOf(
                journal.store,
                self.name,
                1 << 62,
                up_to_seq=applied,
                select=journaling.window_events(window_id),
            )
            staging = self._staging(source)
            try:
                await staging.restore()
                assert staging._journal is not None
                pairs = journaling.window_keys(window_id, staging._journal.journaling)
                size = await staging.count(window=window_id)
                moved = await self._steps.move_keys(journaling.seq_key, applied, pairs)
            finally:
                if staging._journal is not None:
                    await run_async(staging._steps, staging._journal.journaling.reset())
                staging._journal = None
                await staging.close()
            if moved:
                self._use_writer(None)
                await self._drop_archives()  # the live key serves reads again
                if window_id != "all":
                    await self._steps.set_add(self._plan.core.registry_key, [window_id.encode()])
                return size
        raise JournalError(
            f"board {self.name!r} took writes all through five rebuilds of window"
            f" {window_id!r}; try again when it is quieter"
        )

    @staticmethod
    def recorded_configs(journal: JournalStore) -> dict[str, dict[str, Any] | None]:
        """Every board of ``journal`` -> the keyword arguments its last recorded
        configuration opens it with (``Leaderboard(backend, name, journal=..., **them)``),
        or None for a board with none recorded or one that must be opened with its
        configuration given (a layout tie-break, a time zone other than UTC). Reads the
        journal only: O(boards)."""
        found: dict[str, dict[str, Any] | None] = {}
        for name in journal.boards():
            if is_side_stream(name):  # a guard's verdicts or a webhook outbox, not a board
                continue
            last = journal.last_board_event(name, "config")
            found[name] = None if last is None else board_options(json.loads(last.value))
        return found

    async def record_config(self) -> None:
        """Journal the board's configuration now, when the journal's last record of it
        differs (the first write does it otherwise): a board configured but not written
        to yet is then known to the journal (:meth:`recorded_configs`). Restores the board
        first if it has not been."""
        if self._journal is None:
            raise BoardConfigError(f"board {self.name!r} has no journal to record it in")
        await self._ready()

    @classmethod
    async def rebuild_all(
        cls, backend: AsyncBackend | str, journal: str | JournalStore
    ) -> dict[str, int | None]:
        """Rebuild every board of ``journal`` into ``backend`` (after the index lost them
        all), each opened with the configuration its journal recorded: board name -> events
        replayed one by one, or None for a board that must be opened with its
        configuration given (a layout tie-break, a time zone other than UTC; see
        :meth:`rebuild`) or that has no configuration recorded."""
        store = open_journal(journal) if isinstance(journal, str) else journal
        found: dict[str, int | None] = {}
        try:
            for name, given in cls.recorded_configs(store).items():
                if given is None:
                    found[name] = None
                    continue
                board = cls(backend, name, journal=store, snapshot_every=None, **given)
                try:
                    found[name] = await board.rebuild()
                finally:
                    board._journal = None  # the backend and the journal are the caller's
                    await board.close()
        finally:
            if isinstance(journal, str):
                store.close()
        return found

    async def restore(self) -> int:
        """Bring the board up to its journal (done when a journaled board is opened):
        the newest good snapshot if the index holds nothing of the board, then every
        event the index lacks, each applied once. Returns how many events were applied.
        After the index lost the board (Redis restarted empty, FLUSHALL), one call
        rebuilds it. A board without a journal: 0."""
        journal = self._journal
        if journal is None:
            return 0
        self._restored = True
        try:
            return await journal.restore()
        except UnsupportedOperationError:  # a snapshot of memory:// meets a Redis index
            return await journal.catch_up(await self._steps.read_seq(journal.journaling.seq_key))

    async def snapshot(self) -> int | None:
        """Write a snapshot of a journaled ``memory://`` board now: the journal sequence
        number (``board_seq``) it covers; None when the board has no snapshots (no
        journal, or a backend that persists itself)."""
        journal = self._journal
        if journal is None:
            return None
        try:
            return await journal.snapshot()
        except UnsupportedOperationError:
            journal.snapshots = None  # Redis persists its own keys
            return None

    def history(self, member: Member, *, limit: int | None = 100) -> list[HistoryEntry]:
        """The member's journaled writes, oldest first, at most ``limit`` (None: all):
        submissions with their operator and score, removals with who did them and why,
        data and friend changes. For support and anti-cheat forensics. Reads the journal
        (``JournalStore.member_events``; blocking I/O, also on asyncio). Needs a
        journal: a board without one raises :class:`~ranked.errors.BoardConfigError`."""
        journal = self._journal
        if journal is None:
            raise BoardConfigError(f"board {self.name!r} has no journal: it keeps no history")
        return journal.journaling.history(member, limit)

    def as_of(self, when: Instant) -> AsyncLeaderboard:
        """The board as it stood at ``when`` (every window), read-only: a new board in a
        private in-process store, rebuilt from the journal's events of this board that
        count at or before ``when``, in journal order. Its clock stands at ``when``, so a
        read picks the windows current then and TTLs count from then. O(the board's
        events); reads of the view cost what they cost on any board. Writes to it raise
        :class:`~ranked.errors.JournalError`. Close it when done (asyncio: ``async with
        board.as_of(t) as view``, which also builds it). Needs a journal."""
        journal = self._journal
        if journal is None:
            raise BoardConfigError(f"board {self.name!r} has no journal: it has no past")
        at_ms = to_ms(when)
        source = AsOf(journal.store, self.name, at_ms * 1000 + 999)
        return self._view(at_ms, self.config.windows, source, keep=True)

    async def archive_closed(self) -> list[str]:
        """Freeze the final standings of every registered window that has closed and has
        no archive yet: each one event in the journal (idempotent: a window is archived
        once), so reads of the window keep working after its live key expires. Returns
        the window ids archived now. A journaled board also does this on its own, at most
        once a minute, when it takes a write. Several backend calls and one append per
        window. Needs a journal."""
        journal = self._journal
        if journal is None:
            raise BoardConfigError(f"board {self.name!r} has no journal: it keeps no archives")
        journaling = journal.journaling
        core = self._plan.core
        registered: set[bytes] = await self._steps.set_members(core.registry_key)
        done = []
        for window_id in journaling.closed_windows(registered, core.now_ms()):
            if journal.store.event_by_key(self.name, journaling.archive_key(window_id)):
                continue
            event = await run_async(self._steps, journaling.archive_steps(window_id))
            if event is not None:
                await self._journaled(event)
                done.append(window_id)
        return done

    async def _archive_when_due(self) -> None:
        """Archive the closed windows, at most once a minute (on the board's clock)."""
        now = self._plan.core.now_ms()
        if self._archive_due is not None and now >= self._archive_due:
            self._archive_due = now + 60_000
            await self.archive_closed()

    async def _from_archive(self, window: WindowArg) -> AsyncLeaderboard | None:
        """The archive serving a read of ``window``: a closed window whose live key has
        expired and that has an archive (views kept until :meth:`close`); else None."""
        windows = self._plan.windows
        window_id = windows.window_id(window)
        if window_id == "all":
            return None
        cached = self._archives.get(window_id)
        if cached is not None:
            return cached
        now = from_ms(self._plan.core.now_ms())
        if not windows.kept.window_for_id(window_id).is_closed(now):
            return None
        if await self._steps.count(windows.target(window_id).key):
            return None  # still live
        view = await self.archived(window_id)
        if view is not None:
            self._archives[window_id] = view
        return view

    async def _drop_archives(self) -> None:
        """Close the archive views kept for reads (read again when next needed)."""
        for view in self._archives.values():
            await view.close()
        self._archives.clear()

    def archived_windows(self) -> list[str]:
        """The ids of the closed windows whose final standings the journal keeps
        (:meth:`archive_closed`), sorted; empty without a journal. O(log n + windows)."""
        journal = self._journal
        if journal is None:
            return []
        prefix = journal.journaling.archive_key("")
        return [key[len(prefix) :] for key in journal.store.keys_with_prefix(self.name, prefix)]

    async def archived(self, window: WindowArg) -> AsyncLeaderboard | None:
        """A closed window's archived standings as a read-only board (the same read
        API: top, rank, around, score, pages...; its reads default to that window), in a
        private in-process store; None when the window has no archive. Close it after
        use. Reads of this board that name a closed window whose live key has expired are
        served from it on their own."""
        journal = self._journal
        if journal is None:
            return None
        window_id = self._plan.windows.window_id(window)
        pairs = journal.journaling.archived_pairs(window_id)
        if pairs is None:
            return None
        kept = self._plan.windows.kept
        closed = kept.window_for_id(window_id)
        at_ms = self._plan.core.now_ms() if closed.end is None else to_ms(closed.end) - 1
        # the view keeps this window alone: its reads default to it
        seasons = tuple(s for s in kept.seasons if s.window.id == window_id)
        windows = WindowPlan(
            kinds=() if seasons else (closed.kind,),
            seasons=seasons,
            timezone=kept.timezone,
            retention=timedelta(days=36500),  # the view's copy never expires
        )
        source = AsOf(journal.store, self.name, -1)  # read-only, no events
        view = self._view(at_ms, windows, source, keep=False)
        await view.restore()
        view_journal = view._journal
        assert view_journal is not None
        target = view._plan.windows.target(window_id)
        await view._steps.load_sorted(target.key, view_journal.journaling.seq_key, b"0", pairs)
        return view

    async def _write(self, steps: Steps[T], event: Callable[[Journaling], NewEvent]) -> T | None:
        """Run a write's plan; on a journaled board, check its arguments (the plan up to
        its first step), journal ``event(journaling)`` and apply it once durable (None: a
        retried keyed call whose answer is gone)."""
        journal = self._journal
        if journal is None:
            return await run_async(self._steps, steps)
        Journaling.checked(steps)
        found: T | None = await self._journaled(event(journal.journaling))
        return found

    def _view(
        self, at_ms: int, windows: WindowPlan, source: AsOf, *, keep: bool
    ) -> AsyncLeaderboard:
        """A read-only board like this one (``keep``: with its trim), restored from
        ``source`` into a private in-process store whose clock stands at ``at_ms``."""
        backend = open_async_scratch_backend(clock=lambda: at_ms / 1000)
        view = self._like(backend, source, windows, keep, self.config.namespace, lambda: at_ms)
        view._owns_backend = True
        return view

    def _staging(self, source: AsOf) -> AsyncLeaderboard:
        """A board like this one on the same backend under the namespace
        ``<namespace>~rebuild`` (its keys share this board's hash slot), restored from
        ``source``, with this board's clock."""
        config = self.config
        namespace = f"{config.namespace}~rebuild"
        return self._like(
            self.backend, source, config.windows, True, namespace, self._plan.core.now_ms
        )

    def _like(
        self,
        backend: AsyncBackend,
        source: AsOf,
        windows: WindowPlan,
        keep: bool,
        namespace: str,
        clock: Callable[[], int],
    ) -> AsyncLeaderboard:
        """A board configured like this one (``keep``: with its trim) on ``backend``,
        restored from ``source``, which writes no journal of its own."""
        config = self.config
        board = AsyncLeaderboard(
            backend,
            config.name,
            higher_is_better=config.higher_is_better,
            operator=config.operator,
            tie_break=config.tie_break,
            windows=windows,
            rank_style=config.rank_style,
            keep=config.keep if keep else None,
            keep_buffer=config.keep_buffer if keep else 0,
            max_page_size=config.max_page_size,
            namespace=namespace,
            clock=clock,
            bytes_members=self._plan.core.bytes_members,
            journal=source,
            snapshot_every=None,
        )
        board._config_recorded = True  # it writes nothing to the journal
        return board

    async def _journaled(self, event: Any) -> Any:
        journal = self._journal
        assert journal is not None
        await self._ready()
        return await journal.write([event])

    async def _standing(self, members: Sequence[Member]) -> list[Submission]:
        """The answer to a retried keyed submission whose first answer this process no
        longer holds (it restarted, or more than 4,096 keyed answers came since): each
        member's standing now in the primary window, ``changed`` False (the retry changed
        nothing). :class:`~ranked.errors.JournalError` for a member no longer on the board."""
        window = self.window_id()
        found: list[Submission] = []
        for member in members:  # one read each: a retry after a restart is rare
            (standing,) = await self.ranks_of([member])
            if standing.score is None:
                raise JournalError(
                    f"a write to board {self.name!r} with this key was applied before (its"
                    f" answer is no longer kept), and {standing.member!r} is not on the"
                    " board now"
                )
            now = WindowResult(
                window, standing.score, standing.score, standing.rank, standing.rank, False
            )
            found.append(Submission(standing.member, now, MappingProxyType({window: now})))
        return found

    # -- lifecycle ------------------------------------------------------------------------------

    async def close(self) -> None:
        """Snapshot a journaled ``memory://`` board, close its journal if it opened it
        from a URL, and close the backend if it opened it from a URL."""
        await self._drop_archives()
        journal = self._journal
        if journal is not None:
            if self._restored:
                await self.snapshot()
            if self._owns_journal:
                journal.store.close()
        if self._owns_backend:
            await self.backend.close()

    async def __aenter__(self) -> Self:
        await self._ready()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()


def _event(
    operation: str,
    member: Member | None,
    value: Callable[[Journaling], bytes] = lambda _journaling: b"",
    *,
    actor: str | None = None,
    reason: str | None = None,
) -> Callable[[Journaling], NewEvent]:
    """The event of a write that is not a submission, built once its plan is checked."""

    def build(journaling: Journaling) -> NewEvent:
        return journaling.event(operation, member, value(journaling), actor=actor, reason=reason)

    return build


def _journal_of(
    board: AsyncLeaderboard,
    journal: str | JournalStore,
    snapshots: str | None,
    snapshot_every: int | None,
) -> AsyncBoardJournal:
    """The board's journal, opened from its URL (the board then closes it)."""
    board._owns_journal = isinstance(journal, str)
    store = open_journal(journal) if isinstance(journal, str) else journal
    directory = snapshots
    if directory is None:
        path = getattr(store, "path", None)
        directory = None if path is None else f"{path}.snapshots"
    journaling = Journaling(board._plan, store)
    core = board._plan.core
    if core.on_trimmed_lookup is None and journaling.can_rehydrate():
        core.on_trimmed_lookup = journaling.trimmed_score  # seed 004: history comes back
    found = AsyncBoardJournal(
        store,
        journaling,
        board._steps,
        None if directory is None else SnapshotStore(directory),
        snapshot_every,
    )
    if found.lane is not None:  # an event the index held already answers the standing
        found.lane.standing = board._standing
    return found


def _open(url: str) -> AsyncBackend:
    from ...backends.factory import open_async_backend  # lazily: it imports redis-py

    return open_async_backend(url)


def open_async_scratch_backend(clock: Callable[[], float]) -> AsyncBackend:
    """A private in-process store for a view (see :meth:`AsyncLeaderboard.as_of`)."""
    from ...backends import factory

    return factory.open_async_scratch_backend(clock)
