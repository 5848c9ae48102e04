"""The API's operations: each one a handler over the service's boards, and its route.

A handler reads its board from the registry, decodes its body or query with the msgspec
type its route declares, calls the board (the library does the work), and answers with
the route's response type. Refusals raise :class:`~.http.HTTPProblem`; the library's own
typed errors are turned into problems by the application (:mod:`.app`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final

import msgspec

from ..errors import BoardConfigError, WindowError
from ..leaderboard import IncrBatcher, asubmit_to_boards_nonatomic
from .batching import Batchers
from .convert import entries, field_of, member, query, submitted
from .guard_routes import Guards, HeldResult, guard_routes
from .http import HTTPProblem, Request, Response, Route, json_response
from .keys import Scope
from .live import Hub
from .metrics import Metrics
from .registry import Boards
from .schemas import (
    BatchBody,
    BatchResult,
    BoardInfo,
    BoardList,
    BoardSettings,
    ClearBody,
    ClearResult,
    CountOut,
    DataBody,
    FriendsBody,
    FriendsOut,
    HistogramBucket,
    HistogramOut,
    HistoryItem,
    HistoryOut,
    ManyBoardsBody,
    ManyBoardsResult,
    MemberOut,
    PageOut,
    RankOut,
    RanksBody,
    RanksOut,
    RebuildResult,
    RemoveResult,
    ScoreBody,
    SnapshotResult,
    SubmitResult,
    TopOut,
    WindowsOut,
)

__all__ = ["HistogramQuery", "api_routes", "histogram_routes"]

Limit = Annotated[int, msgspec.Meta(ge=1, le=10_000)]
Window = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^(all|d[0-9]{4}-[0-9]{2}-[0-9]{2}|w[0-9]{4}-W[0-9]{2}|m[0-9]{4}-[0-9]{2}"
        r"|s:[A-Za-z0-9_.:-]{1,64})$",
        description="A window id: all, d2026-11-26 (day), w2026-W48 (ISO week),"
        " m2026-11 (month), s:<season>.",
        examples=["all"],
    ),
]
Style = Annotated[str, msgspec.Meta(pattern="^(competition|dense|unique)$")]


class ReadQuery(msgspec.Struct, forbid_unknown_fields=True):
    window: Window | None = None
    """A window id (default: the current primary window); a closed window is read from
    its archive."""
    style: Style | None = None
    """The rank style (default: the board's)."""


class MemberQuery(ReadQuery, forbid_unknown_fields=True):
    percentile: bool = False
    """Also answer the member's percentile (one more read)."""


class TopQuery(ReadQuery, forbid_unknown_fields=True):
    limit: Limit = 10


class PageQuery(ReadQuery, forbid_unknown_fields=True):
    cursor: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)] | None = None
    """The ``next`` of the previous page (none: the first page)."""
    limit: Limit | None = None


class AroundQuery(ReadQuery, forbid_unknown_fields=True):
    before: Annotated[int, msgspec.Meta(ge=0, le=1000)] = 5
    after: Annotated[int, msgspec.Meta(ge=0, le=1000)] = 5


class RangeQuery(ReadQuery, forbid_unknown_fields=True, kw_only=True):
    min: float
    max: float
    offset: Annotated[int, msgspec.Meta(ge=0)] = 0
    limit: Limit | None = None
    """Default: 100, or the board's max_page_size when that is smaller."""


class CountQuery(msgspec.Struct, forbid_unknown_fields=True):
    window: Window | None = None
    min: float | None = None
    max: float | None = None


class HistoryQuery(msgspec.Struct, forbid_unknown_fields=True):
    limit: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 100


class AsOfQuery(msgspec.Struct, forbid_unknown_fields=True):
    at: datetime
    """The instant (ISO 8601 with a time zone)."""
    window: Window | None = None
    limit: Limit = 10


class RebuildQuery(msgspec.Struct, forbid_unknown_fields=True):
    window: Window | None = None
    """Rebuild this window alone (none: the whole board)."""


class RemoveQuery(msgspec.Struct, forbid_unknown_fields=True):
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=500)]


_DECODERS: dict[type, msgspec.json.Decoder[Any]] = {}


async def _body(request: Request, kind: type[Any]) -> Any:
    """The request's JSON body as ``kind``: 400 when it is not JSON, 422 naming the field
    when it does not fit."""
    decoder = _DECODERS.get(kind)
    if decoder is None:
        decoder = _DECODERS[kind] = msgspec.json.Decoder(kind)
    raw = await request.body()
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as error:
        raise HTTPProblem(422, "invalid-body", str(error), field_of(error)) from None
    except msgspec.DecodeError as error:
        raise HTTPProblem(400, "malformed-json", f"the body is not JSON: {error}") from None


def _actor(request: Request) -> str:
    return f"key:{request.key.id}" if request.key is not None else "anonymous"


class Handlers:
    """The handlers, bound to one service's boards."""

    def __init__(
        self, boards: Boards, metrics: Metrics, hub: Hub, batchers: Batchers | None = None
    ) -> None:
        self.boards = boards
        self._submitted = metrics.submitted
        self.hub = hub
        """Told of every applied write (the live channels)."""
        self.batchers = batchers or Batchers(boards, metrics, hub)
        """The boards' batched increments (``batch_incr_ms``)."""
        self.guards = Guards(boards)
        """The boards' write guards (guard_routes.py)."""

    # -- boards -------------------------------------------------------------------------

    async def _info(self, name: str) -> BoardInfo:
        board = self.boards.get(name)
        return BoardInfo(name, self.boards.settings(name), await board.count(), board.window_id())

    async def put_board(self, request: Request) -> Response:
        name = request.params["board"]
        settings: BoardSettings = await _body(request, BoardSettings)
        await self.batchers.flush(name)  # pending increments go to the board as it was
        try:
            created = await self.boards.put(name, settings)
        except (WindowError, BoardConfigError) as error:
            raise HTTPProblem(422, "invalid-settings", str(error)) from None
        return json_response(await self._info(name), 201 if created else 200)

    async def list_boards(self, request: Request) -> Response:
        return json_response(BoardList([await self._info(n) for n in self.boards.names()]))

    async def get_board(self, request: Request) -> Response:
        return json_response(await self._info(request.params["board"]))

    # -- writes -------------------------------------------------------------------------

    async def submit(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        body: ScoreBody = await _body(request, ScoreBody)
        guarded = await self.guards.submit(request, board, body)  # None: no guard
        if guarded is not None:  # a guarded board's writes are judged one by one
            done, response = guarded
            if done is not None:
                self._submitted(board.name, 1)
                self.hub.submitted(board.name, (done,))
            return response
        batcher = self.batchers.get(board)
        if batcher is not None:
            return await self._submit_batched(board.name, batcher, body)
        result = await board.submit(body.member, body.score, operator=body.operator, key=body.key)
        self._submitted(board.name, 1)
        self.hub.submitted(board.name, (result,))
        return json_response(submitted(result))

    async def _submit_batched(self, name: str, batcher: IncrBatcher, body: ScoreBody) -> Response:
        """A submission to a board with ``batch_incr_ms``: an increment waits for its
        flush (which tells the live feed); any other write goes in order with the member's
        pending increments."""
        if batcher.batchable(body.score, body.operator, body.key):
            result = await batcher.add(body.member, body.score, body.operator)
        else:
            result = await batcher.write(
                body.member, body.score, operator=body.operator, key=body.key
            )
            self.hub.submitted(name, (result,))
        self._submitted(name, 1)
        return json_response(submitted(result))

    async def submit_batch(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        body: BatchBody = await _body(request, BatchBody)
        await self.guards.refuse_batch(board)
        await self.batchers.flush(board.name)
        results = await board.submit_many(
            [(item.member, item.score) for item in body.scores],
            operator=body.operator,
            key=body.key,
        )
        self._submitted(board.name, len(results))
        self.hub.submitted(board.name, results)
        return json_response(BatchResult([submitted(r) for r in results]))

    async def submit_boards(self, request: Request) -> Response:
        body: ManyBoardsBody = await _body(request, ManyBoardsBody)
        boards = [self.boards.get(name) for name in dict.fromkeys(body.boards)]
        for each in boards:
            await self.guards.refuse_batch(each)
            await self.batchers.flush(each.name)
        results = await asubmit_to_boards_nonatomic(
            boards, body.member, body.score, operator=body.operator
        )
        for each, result in zip(boards, results, strict=True):
            self._submitted(each.name, 1)
            self.hub.submitted(each.name, (result,))
        return json_response(
            ManyBoardsResult({b.name: submitted(r) for b, r in zip(boards, results, strict=True)})
        )

    async def remove_member(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        name = member(request.params["member"])
        reason = query(request.query, RemoveQuery).reason
        await self.batchers.flush(board.name)
        removed = await board.remove(name, actor=_actor(request), reason=reason)
        if removed:
            self.hub.removed(board.name, name)
        return json_response(RemoveResult(removed))

    async def clear(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        body: ClearBody = await _body(request, ClearBody)
        await self.batchers.flush(board.name)
        cleared = await board.clear(actor=_actor(request), reason=body.reason)
        self.hub.cleared(board.name)
        return json_response(ClearResult(cleared))

    async def set_friends(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        name = member(request.params["member"])
        body: FriendsBody = await _body(request, FriendsBody)
        wanted = set(body.friends)
        have = {str(f) for f in await board.friends(name)}
        if have - wanted:
            await board.remove_friends(name, sorted(have - wanted))
        if wanted - have:
            await board.add_friends(name, sorted(wanted - have))
        return json_response(FriendsOut(name, sorted(wanted)))

    async def set_data(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        name = member(request.params["member"])
        body: DataBody = await _body(request, DataBody)
        await board.set_member_data(name, body.name, body.metadata)
        return json_response(body)

    async def get_data(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        name = member(request.params["member"])
        found = (await board.member_data([name])).get(name)
        if found is None:
            raise HTTPProblem(404, "unknown-member", f"{name!r} has no data on the board", "member")
        return json_response(DataBody(found.display_name, dict(found.metadata)))

    # -- reads --------------------------------------------------------------------------

    async def get_member(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        name = member(request.params["member"])
        args = query(request.query, MemberQuery) if request.query else _NO_READ_ARGS
        found = await board.entry(name, style=args.style, window=args.window)
        if found is None:
            raise HTTPProblem(404, "unknown-member", f"{name!r} is not on the board", "member")
        answer = MemberOut(name, found.score, found.rank, board.window_id(args.window))
        if args.percentile:
            answer.percentile = await board.percentile(name, window=args.window)
        return json_response(answer)

    async def top(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        args = query(request.query, TopQuery)
        _check_page(args.limit, board.config.max_page_size)
        found = await board.top(args.limit, style=args.style, window=args.window)
        return json_response(TopOut(entries(found), board.window_id(args.window)))

    async def page(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        args = query(request.query, PageQuery)
        if args.limit is not None:
            _check_page(args.limit, board.config.max_page_size)
        found = await board.page(args.cursor, size=args.limit, style=args.style, window=args.window)
        return json_response(
            PageOut(entries(found.entries), found.next_cursor, board.window_id(args.window))
        )

    async def around(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        name = member(request.params["member"])
        args = query(request.query, AroundQuery)
        found = await board.around(
            name, args.before, args.after, style=args.style, window=args.window
        )
        if found is None:
            raise HTTPProblem(404, "unknown-member", f"{name!r} is not on the board", "member")
        return json_response(TopOut(entries(found.entries), board.window_id(args.window)))

    async def ranks(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        args = query(request.query, ReadQuery)
        body: RanksBody = await _body(request, RanksBody)
        _check_page(len(body.members), board.config.max_page_size)
        found = await board.ranks_of(body.members, style=args.style, window=args.window)
        return json_response(
            RanksOut(
                [RankOut(str(r.member), r.score, r.rank) for r in found],
                board.window_id(args.window),
            )
        )

    async def between(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        args = query(request.query, RangeQuery)
        limit = min(100, board.config.max_page_size) if args.limit is None else args.limit
        _check_page(limit, board.config.max_page_size)
        found = await board.between(
            args.min,
            args.max,
            offset=args.offset,
            count=limit,
            style=args.style,
            window=args.window,
        )
        return json_response(TopOut(entries(found), board.window_id(args.window)))

    async def count(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        args = query(request.query, CountQuery)
        if args.min is None and args.max is None:
            total = await board.count(window=args.window)
        else:
            low = -float("inf") if args.min is None else args.min
            high = float("inf") if args.max is None else args.max
            total = await board.count_between(low, high, window=args.window)
        return json_response(CountOut(total, board.window_id(args.window)))

    async def windows(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        return json_response(WindowsOut(board.window_id(), board.archived_windows()))

    async def friends(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        name = member(request.params["member"])
        return json_response(FriendsOut(name, sorted(str(f) for f in await board.friends(name))))

    async def friends_board(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        name = member(request.params["member"])
        args = query(request.query, ReadQuery)
        found = await board.friends_board(name, style=args.style, window=args.window)
        return json_response(TopOut(entries(found.entries), board.window_id(args.window)))

    async def history(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        name = member(request.params["member"])
        args = query(request.query, HistoryQuery)
        found = board.history(name, limit=args.limit)
        return json_response(
            HistoryOut(
                name,
                [
                    HistoryItem(h.seq, h.at, h.operation, h.score, h.key, h.actor, h.reason)
                    for h in found
                ],
            )
        )

    async def as_of(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        args = query(request.query, AsOfQuery)
        if args.at.tzinfo is None:
            raise HTTPProblem(422, "invalid-parameter", "at needs a time zone (Z or +hh:mm)", "at")
        _check_page(args.limit, board.config.max_page_size)
        async with board.as_of(args.at.astimezone(UTC)) as view:
            found = await view.top(args.limit, window=args.window)
            window = view.window_id(args.window)
        return json_response(TopOut(entries(found), window))

    # -- operations ---------------------------------------------------------------------

    async def rebuild(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        window = query(request.query, RebuildQuery).window
        if window is None:
            return json_response(RebuildResult(await board.rebuild()))
        members = await board.rebuild_window(window)
        return json_response(RebuildResult(0, board.window_id(window), members))

    async def snapshot(self, request: Request) -> Response:
        board = self.boards.get(request.params["board"])
        return json_response(SnapshotResult(await board.snapshot()))


_NO_READ_ARGS: Final = MemberQuery()


def _check_page(size: int, most: int) -> None:
    if size > most:
        raise HTTPProblem(
            422, "page-too-large", f"at most {most} entries a read on this board", "limit"
        )


def api_routes(
    boards: Boards, metrics: Metrics, hub: Hub | None = None, batchers: Batchers | None = None
) -> list[Route]:
    """Every route of the API (``/v1``); writes are told to ``hub`` (the live channels);
    ``batchers``: the boards' batched increments."""
    h = Handlers(boards, metrics, hub or Hub(boards), batchers)
    b = "/v1/boards/{board}"
    m = b + "/members/{member}"
    R, W, A = Scope.READ, Scope.WRITE, Scope.ADMIN
    return [
        *guard_routes(h.guards),  # the write guard's own (guard_routes.py)
        Route("GET", "/v1/boards", h.list_boards, R, "List the boards", response=BoardList),
        Route(
            "PUT",
            b,
            h.put_board,
            A,
            "Create or reconfigure a board",
            body=BoardSettings,
            response=BoardInfo,
            problems=(409,),
        ),
        Route(
            "GET",
            b,
            h.get_board,
            R,
            "A board's settings and size",
            response=BoardInfo,
            board_reads=True,
        ),
        Route(
            "POST",
            b + "/scores",
            h.submit,
            R,  # a write key; a read key only on a board with a guard (guard_routes.py)
            "Submit a score (through the board's write guard when it has one)",
            body=ScoreBody,
            response=SubmitResult,
            tag="scores",
            problems=(409, 429),
            answers=((202, "Held for review (a board with a guard)", HeldResult),),
        ),
        Route(
            "POST",
            b + "/scores/batch",
            h.submit_batch,
            W,
            "Submit many scores, atomically (not on a board with a guard: 409)",
            body=BatchBody,
            response=BatchResult,
            tag="scores",
            problems=(409,),
        ),
        Route(
            "POST",
            "/v1/scores",
            h.submit_boards,
            W,
            "Submit one member's score to many boards",
            body=ManyBoardsBody,
            response=ManyBoardsResult,
            problems=(404, 409),
            tag="scores",
        ),
        Route(
            "GET",
            b + "/top",
            h.top,
            R,
            "The top of a board",
            response=TopOut,
            query=TopQuery,
            tag="reads",
            board_reads=True,
        ),
        Route(
            "GET",
            b + "/entries",
            h.page,
            R,
            "A page of a board (opaque cursors)",
            response=PageOut,
            query=PageQuery,
            tag="reads",
            board_reads=True,
        ),
        Route(
            "POST",
            b + "/ranks",
            h.ranks,
            R,
            "The ranks of a list of members",
            body=RanksBody,
            response=RanksOut,
            query=ReadQuery,
            tag="reads",
            board_reads=True,
        ),
        Route(
            "GET",
            b + "/range",
            h.between,
            R,
            "Members in a score range",
            response=TopOut,
            query=RangeQuery,
            tag="reads",
            board_reads=True,
        ),
        Route(
            "GET",
            b + "/count",
            h.count,
            R,
            "How many members (in a score range)",
            response=CountOut,
            query=CountQuery,
            tag="reads",
            board_reads=True,
        ),
        Route(
            "GET",
            b + "/windows",
            h.windows,
            R,
            "The board's current window and its archived ones",
            response=WindowsOut,
            tag="reads",
            board_reads=True,
        ),
        Route(
            "GET",
            b + "/as-of",
            h.as_of,
            R,
            "The top of a board as it stood at an instant",
            response=TopOut,
            query=AsOfQuery,
            tag="history",
            board_reads=True,
        ),
        Route(
            "GET",
            m,
            h.get_member,
            R,
            "A member's score and rank (and percentile, when asked)",
            response=MemberOut,
            query=MemberQuery,
            tag="reads",
            problems=(404,),
            board_reads=True,
        ),
        Route(
            "GET",
            m + "/around",
            h.around,
            R,
            "The members around a member",
            response=TopOut,
            query=AroundQuery,
            tag="reads",
            problems=(404,),
            board_reads=True,
        ),
        Route(
            "GET",
            m + "/history",
            h.history,
            R,
            "A member's journaled writes",
            response=HistoryOut,
            query=HistoryQuery,
            tag="history",
            board_reads=True,
        ),
        Route(
            "GET",
            m + "/friends",
            h.friends,
            R,
            "A member's friends",
            response=FriendsOut,
            tag="social",
            board_reads=True,
        ),
        Route(
            "PUT",
            m + "/friends",
            h.set_friends,
            W,
            "Set a member's friends",
            body=FriendsBody,
            response=FriendsOut,
            tag="social",
        ),
        Route(
            "GET",
            m + "/friends/board",
            h.friends_board,
            R,
            "A member and its friends ranked among themselves",
            response=TopOut,
            query=ReadQuery,
            tag="social",
            board_reads=True,
        ),
        Route(
            "GET",
            m + "/data",
            h.get_data,
            R,
            "A member's data",
            response=DataBody,
            tag="social",
            problems=(404,),
            board_reads=True,
        ),
        Route(
            "PUT",
            m + "/data",
            h.set_data,
            W,
            "Set a member's data",
            body=DataBody,
            response=DataBody,
            tag="social",
        ),
        Route(
            "DELETE",
            m,
            h.remove_member,
            A,
            "Remove a member (audited: who and why)",
            response=RemoveResult,
            query=RemoveQuery,
            tag="admin",
        ),
        Route(
            "POST",
            b + "/clear",
            h.clear,
            A,
            "Clear a board (audited: who and why)",
            body=ClearBody,
            response=ClearResult,
            tag="admin",
        ),
        Route(
            "POST",
            b + "/rebuild",
            h.rebuild,
            A,
            "Rebuild a board, or one of its windows, from the journal",
            response=RebuildResult,
            query=RebuildQuery,
            tag="admin",
        ),
        Route(
            "POST",
            b + "/snapshot",
            h.snapshot,
            A,
            "Snapshot a board now",
            response=SnapshotResult,
            tag="admin",
        ),
        *histogram_routes(boards),  # the histogram block below
    ]


# -- the score histogram --------------------------------------------------------------------
# GET /v1/boards/{board}/histogram: a window's score distribution, for the board page.
# Built from the board's public reads only: the highest score (top(1)), the lowest (the
# entry at the last position, page_at), and one count_between(edge, +inf) per bucket edge;
# a bucket's count is the difference of two neighbouring counts, so the counts always add
# up to the members counted. O(buckets * log n). Not one atomic read: under concurrent
# writes the buckets show the board as it was over the few reads (a score written
# meanwhile beyond the lowest or highest read lands in an edge bucket, or is not counted).

_INF = float("inf")


class HistogramQuery(msgspec.Struct, forbid_unknown_fields=True):
    window: Window | None = None
    """A window id (default: the current primary window); a closed window is read from
    its archive."""
    buckets: Annotated[int, msgspec.Meta(ge=1, le=100)] = 20
    """How many equal-width buckets (1 to 100)."""


def edges(low: float, high: float, buckets: int) -> list[float]:
    """The ``buckets`` lower edges from ``low`` up, of equal width up to ``high`` (each
    a weighted mean of the two, so that no difference of two large scores overflows)."""
    return [
        low if i == 0 else low * (1 - i / buckets) + high * (i / buckets) for i in range(buckets)
    ]


def histogram_routes(boards: Boards) -> list[Route]:
    """The histogram's route (read scope; none on a ``public_reads`` board)."""

    async def histogram(request: Request) -> Response:
        board = boards.get(request.params["board"])
        args = query(request.query, HistogramQuery)
        window = board.window_id(args.window)
        members = await board.count(window=args.window)
        if members == 0:
            return json_response(HistogramOut(window, 0, None, None, []))
        first = await board.top(1, window=args.window)
        last = await board.page_at(members - 1, 1, window=args.window)
        if not first or not last.entries:  # emptied between the reads
            return json_response(HistogramOut(window, 0, None, None, []))
        scores = (first[0].score, last.entries[0].score)
        low, high = min(scores), max(scores)
        lows = [low] if low == high else edges(low, high, args.buckets)
        at_least = [await board.count_between(edge, _INF, window=args.window) for edge in lows]
        at_least.append(0)
        highs = [*lows[1:], high]
        buckets = [
            HistogramBucket(lows[i], highs[i], at_least[i] - at_least[i + 1])
            for i in range(len(lows))
        ]
        return json_response(HistogramOut(window, at_least[0], low, high, buckets))

    return [
        Route(
            "GET",
            "/v1/boards/{board}/histogram",
            histogram,
            Scope.READ,
            "A window's score distribution (equal-width buckets)",
            query=HistogramQuery,
            response=HistogramOut,
            tag="reads",
            board_reads=True,
        )
    ]
