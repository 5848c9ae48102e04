"""Reads: score, ranks, top-N, pages and cursors, around-me, score ranges, percentile."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from ..core.cursors import Cursor
from ..core.models import Around, Entry, Member, MemberRank, Page
from ..core.ranks import RankStyle
from ..core.scores import ScoreAt
from ..core.windows import Window
from ..errors import BoardConfigError, InvalidCursorError, InvalidScoreError, PageSizeError
from ._plan_core import Call, PlanCore, Steps, _new, member_bytes
from ._plan_lex import Lex
from ._plan_ties import Ties
from ._plan_windows import Windows
from ._requests import MAX_POSITION, Row, Target

__all__ = [
    "AroundArgs",
    "PageAfterArgs",
    "PageArgs",
    "PercentileAnswer",
    "PercentileArgs",
    "RanksArgs",
    "Reads",
    "ScoresArgs",
]

ScoresArgs = tuple[bytes, list[bytes]]
RanksArgs = tuple[Target, list[bytes], bool, RankStyle]
PageArgs = tuple[Target, int, int, bool, RankStyle]
PageAfterArgs = tuple[Target, float, bytes, int, bool, RankStyle]
AroundArgs = tuple[Target, bytes, int, int, bool, RankStyle]
PercentileArgs = tuple[Target, bytes, bool]
PercentileAnswer = tuple[float, int, int] | None

DEFAULT_PAGE_SIZE: Final = 50
_INF: Final = math.inf


def _sort_key(item: tuple[tuple[int, float, bytes], MemberRank]) -> tuple[int, float, bytes]:
    return item[0]


def _inward(bound: float, *, up: bool) -> float:
    """The float64 nearest ``bound`` on its inner side: itself when it is a float or an
    exact int; else the next float up (a low bound, ``up``) or down (a high bound).
    An int past the float64 range becomes the infinity beyond it. Exact: Python
    compares ints and floats exactly."""
    if isinstance(bound, float):
        return bound
    try:
        near = float(bound)
    except OverflowError:
        return _INF if bound > 0 else -_INF
    if near == bound:
        return near
    if up:
        return near if near > bound else math.nextafter(near, _INF)
    return near if near < bound else math.nextafter(near, -_INF)


class Reads:
    """Read steps of a board (no I/O). ``core.lex`` is the board's lexicographic layout
    (None on other boards); ``self.lex`` the reads of such boards."""

    def __init__(self, core: PlanCore, windows: Windows, ties: Ties, lex: Lex) -> None:
        self.core = core
        self.windows = windows
        self.ties = ties
        self.lex = lex
        self.entries = core.entries
        """:meth:`PlanCore.entries`, for the shells' direct reads."""
        self._plain = core.lex is None and not core.secondary
        """Reads by plain score and member (no tie-break of ours): one step each."""

    def score(self, member: Member, window: str | Window | None) -> Steps[float | None]:
        """The member's plain score (a lexicographic board: its first field)."""
        core = self.core
        window_id, target = self.windows.read_target(window)
        if core.lex is not None:
            found_lex = yield from self.lex.ranks(window_id, target, [member_bytes(member)])
            return None if found_lex[0] is None else found_lex[0][0]
        found: list[float | None] = yield ("scores", (target.key, [member_bytes(member)]))
        return None if found[0] is None else core.score_out(found[0])

    def score_at(self, member: Member, window: str | Window | None) -> Steps[ScoreAt | None]:
        """The member's (score, achieved-at) on a time tie-break board."""
        core = self.core
        if core.layout is None:
            raise BoardConfigError(f"board {core.config.name!r} has no time tie-break")
        target = self.windows.read_target(window)[1]
        found: list[float | None] = yield ("scores", (target.key, [member_bytes(member)]))
        return None if found[0] is None else core.layout.decode(found[0])

    # -- direct calls: the plain board's one-call reads, for the shells to make without
    # the generator driver (None: the board needs the general steps) -------------------

    def plain_scores(self, member: Member, window: str | Window | None) -> ScoresArgs | None:
        """The arguments of :meth:`score`'s one ``scores`` call; None on a lexicographic board."""
        if self.core.lex is not None:
            return None
        return self.windows.read_target(window)[1].key, [member_bytes(member)]

    def score_from(self, found: list[float | None]) -> float | None:
        """:meth:`score`'s result from its ``scores`` answer."""
        raw = found[0]
        layout = self.core.layout
        if raw is None or layout is None:
            return raw
        return layout.decode(raw).score

    def plain_ranks(
        self, member: Member, style: RankStyle | str | None, window: str | Window | None
    ) -> RanksArgs | None:
        """The arguments of :meth:`entry_of`'s one ``ranks`` call; None on a secondary or
        lexicographic board."""
        if not self._plain:
            return None
        core = self.core
        target = self.windows.read_target(window)[1]
        return target, [member_bytes(member)], core.high_first, core.style_of(style)

    def entry_from(self, member: Member, found: list[tuple[float, int] | None]) -> Entry | None:
        """:meth:`entry_of`'s result from its ``ranks`` answer (plain boards)."""
        hit = found[0]
        if hit is None:
            return None
        return _new(Entry, (member, self.core.score_out(hit[0]), hit[1], None))

    @staticmethod
    def rank_from(found: list[tuple[float, int] | None]) -> int | None:
        """The rank in a ``ranks`` answer for one member (plain boards)."""
        hit = found[0]
        return None if hit is None else hit[1]

    def plain_top(
        self, n: int, style: RankStyle | str | None, window: str | Window | None
    ) -> PageArgs | None:
        """The arguments of :meth:`top`'s one ``page`` call; None on a secondary or
        lexicographic board. Rows come back through :meth:`entries`."""
        if not self._plain:
            return None
        core = self.core
        limit = core.check_size(n, "n")
        target = self.windows.read_target(window)[1]
        return target, 0, limit - 1, core.high_first, core.style_of(style)

    def plain_around(
        self,
        member: Member,
        before: int,
        after: int,
        style: RankStyle | str | None,
        window: str | Window | None,
    ) -> AroundArgs | None:
        """The arguments of :meth:`around`'s one ``around`` call; None on a secondary or
        lexicographic board. The answer goes through :meth:`around_from`."""
        if not self._plain:
            return None
        core = self.core
        core.check_offset(before)
        core.check_offset(after)
        core.check_size(before + after + 1, "before + after + 1")
        target = self.windows.read_target(window)[1]
        resolved = core.style_of(style)
        return target, member_bytes(member), before, after, core.high_first, resolved

    def around_from(self, found: tuple[int, list[Row]] | None) -> Around:
        """:meth:`around`'s result from its ``around`` answer (plain boards)."""
        if found is None:
            return Around((), None)
        return Around(tuple(self.entries(found[1])), found[0])

    def plain_percentile(
        self, member: Member, window: str | Window | None
    ) -> PercentileArgs | None:
        """The arguments of :meth:`percentile`'s one ``percentile`` call; None on a time
        tie-break board (worse means a worse *plain* score: a packed count would include
        equal scores achieved later) or a lexicographic board."""
        core = self.core
        if core.layout is not None or core.lex is not None:
            return None
        return self.windows.read_target(window)[1], member_bytes(member), core.high_first

    @staticmethod
    def percentile_from(found: PercentileAnswer) -> float | None:
        """:meth:`percentile`'s result from a ``percentile`` answer."""
        if found is None:
            return None
        total, worse = found[1], found[2]
        return 100.0 * worse / total if total else 0.0

    def entry_of(
        self, member: Member, style: RankStyle | str | None, window: str | Window | None
    ) -> Steps[Entry | None]:
        """The member's entry (score and rank) or None."""
        core = self.core
        window_id, target = self.windows.read_target(window)
        resolved = core.style_of(style)
        found = yield from self._ranks(window_id, target, [member_bytes(member)], resolved)
        if found[0] is None:
            return None
        score, rank = found[0]
        return Entry(member, score if core.lex is not None else core.score_out(score), rank)

    def _ranks(
        self, window_id: str, target: Target, members: list[bytes], style: RankStyle
    ) -> Steps[list[tuple[float, int] | None]]:
        """(score, rank) per member in ``style``, by the board's tie-break."""
        core = self.core
        if core.secondary:
            return (yield from self.ties.secondary_ranks(target, window_id, members, style))
        if core.lex is not None:
            return (yield from self.lex.ranks(window_id, target, members, style))
        found: list[tuple[float, int] | None] = yield (
            "ranks",
            (target, members, core.high_first, style),
        )
        return found

    def _rows(
        self, window_id: str, target: Target, start: int, count: int, style: RankStyle
    ) -> Steps[list[Row]]:
        """``count`` rows from 0-based position ``start``, by the board's tie-break."""
        core = self.core
        if core.secondary:
            return (yield from self.ties.rows(window_id, target, start, count, style))
        if core.lex is not None:
            found: list[Row] = yield (
                "page",
                (target, start, start + count - 1, False, RankStyle.UNIQUE),
            )
            return (yield from self.lex.rows(target, found, style))
        rows: list[Row] = yield (
            "page",
            (target, start, start + count - 1, core.high_first, style),
        )
        return rows

    def ranks_of(
        self,
        members: Sequence[Member],
        style: RankStyle | str | None,
        window: str | Window | None,
    ) -> Steps[list[MemberRank]]:
        """Ranks of many members, best first; absent members last, in the order given."""
        listed, encoded, window_id, target, resolved = self._ranks_of_input(members, style, window)
        if not listed:
            return []
        found = yield from self._ranks(window_id, target, encoded, resolved)
        return self.ranks_of_from(listed, encoded, found)

    def _ranks_of_input(
        self,
        members: Sequence[Member],
        style: RankStyle | str | None,
        window: str | Window | None,
    ) -> tuple[list[Member], list[bytes], str, Target, RankStyle]:
        core = self.core
        listed = list(members)
        if len(listed) > core.config.max_page_size:
            raise PageSizeError(
                f"{len(listed)} members exceed the board's max_page_size "
                f"({core.config.max_page_size})"
            )
        encoded = [member_bytes(member) for member in listed]
        window_id, target = self.windows.read_target(window)
        return listed, encoded, window_id, target, core.style_of(style)

    def plain_ranks_of(
        self,
        members: Sequence[Member],
        style: RankStyle | str | None,
        window: str | Window | None,
    ) -> tuple[RanksArgs, list[Member]] | None:
        """The arguments of :meth:`ranks_of`'s one ``ranks`` call and the members as a
        list; None on a secondary or lexicographic board, or for no members. The answer
        goes through :meth:`ranks_of_from`."""
        if not self._plain:
            return None
        listed, encoded, _, target, resolved = self._ranks_of_input(members, style, window)
        if not listed:
            return None
        return (target, encoded, self.core.high_first, resolved), listed

    def ranks_of_from(
        self,
        members: list[Member],
        encoded: list[bytes],
        found: list[tuple[float, int] | None],
    ) -> list[MemberRank]:
        """:meth:`ranks_of`'s result from its (score, rank) per member."""
        core = self.core
        # Board order in one sort: by rank, ties by score then by member bytes as the
        # board orders them. Best first (high_first) is the reverse of (-rank, score, raw).
        high_first = core.high_first
        out = None if core.lex is not None or core.layout is None else core.score_out
        present: list[tuple[tuple[int, float, bytes], MemberRank]] = []
        missing: list[MemberRank] = []
        for member, raw, hit in zip(members, encoded, found, strict=True):
            if hit is None:
                missing.append(_new(MemberRank, (member, None, None)))
                continue
            score, rank = hit
            entry = _new(MemberRank, (member, score if out is None else out(score), rank))
            present.append(((-rank if high_first else rank, score, raw), entry))
        present.sort(key=_sort_key, reverse=high_first)
        return [entry for _, entry in present] + missing

    def page(
        self,
        cursor: str | None,
        size: int | None,
        style: RankStyle | str | None,
        window: str | Window | None,
        with_data: bool = False,
    ) -> Steps[Page]:
        """A page best first; with a cursor, the page after the one that produced it.
        ``with_data``: each entry carries its member data (one HMGET more)."""
        core = self.core
        resolved_style = core.style_of(style)
        if cursor is None:
            limit = core.check_size(DEFAULT_PAGE_SIZE if size is None else size)
            window_id, target = self.windows.read_target(window)
            rows = yield from self._rows(window_id, target, 0, limit + 1, resolved_style)
        else:
            point, limit, window_id, target = self._resume(cursor, size, window)
            member = member_bytes(point.member)
            if core.secondary:
                rows = yield from self.ties.after(
                    window_id, target, point.score, member, limit + 1, resolved_style
                )
            else:
                read_style = RankStyle.UNIQUE if core.lex is not None else resolved_style
                rows = yield (
                    "page_after",
                    (target, point.score, member, limit + 1, core.high_first, read_style),
                )
                if core.lex is not None:
                    rows = yield from self.lex.rows(target, rows, resolved_style)
        page = self._page(rows, limit, window_id)
        if with_data and page.entries:
            page = Page((yield from core.with_data(page.entries, True)), page.next_cursor)
        return page

    def _resume(
        self, cursor: str, size: int | None, window: str | Window | None
    ) -> tuple[Cursor, int, str, Target]:
        """A cursor's point, the page size, window id and target (all checked)."""
        core = self.core
        point = Cursor.decode(cursor, board=core.config.name)
        if point.direction is not core.direction:
            raise InvalidCursorError("cursor was made for a board read in the other direction")
        if window is not None and self.windows.window_id(window) != point.window:
            raise InvalidCursorError(f"cursor is for window {point.window!r}")
        limit = core.check_size(point.limit if size is None else size)
        if point.window == "all" and self.windows.all_time_first:
            # what read_target gives, cheaper
            return point, limit, "all", self.windows.target("all")
        window_id, target = self.windows.read_target(point.window)
        return point, limit, window_id, target

    def plain_page_after(
        self,
        cursor: str,
        size: int | None,
        style: RankStyle | str | None,
        window: str | Window | None,
    ) -> tuple[PageAfterArgs, int, str] | None:
        """The arguments of :meth:`page`'s one ``page_after`` call (with a cursor), the
        page size and the window id; None on a secondary or lexicographic board. Rows
        come back through :meth:`page_from`."""
        if not self._plain:
            return None
        core = self.core
        resolved = core.style_of(style)
        point, limit, window_id, target = self._resume(cursor, size, window)
        member = member_bytes(point.member)
        return (target, point.score, member, limit + 1, core.high_first, resolved), limit, window_id

    def page_from(self, rows: list[Row], limit: int, window_id: str) -> Page:
        """:meth:`page`'s result from its ``page_after`` answer (plain boards)."""
        return self._page(rows, limit, window_id)

    def page_at(
        self,
        offset: int,
        size: int,
        style: RankStyle | str | None,
        window: str | Window | None,
        with_data: bool = False,
    ) -> Steps[Page]:
        """The page starting at 0-based position ``offset`` (``with_data``: as :meth:`page`)."""
        core = self.core
        start = core.check_offset(offset)
        limit = core.check_size(size)
        window_id, target = self.windows.read_target(window)
        resolved = core.style_of(style)
        if start > MAX_POSITION:  # past the end of every board: no round trip
            return Page((), None)
        rows = yield from self._rows(window_id, target, start, limit + 1, resolved)
        page = self._page(rows, limit, window_id)
        if with_data and page.entries:
            page = Page((yield from core.with_data(page.entries, True)), page.next_cursor)
        return page

    def _page(self, rows: list[Row], limit: int, window_id: str) -> Page:
        core = self.core
        entries = tuple(core.entries(rows[:limit]))
        if len(rows) <= limit:
            return Page(entries, None)
        last = rows[limit - 1]
        member: Member = core.member_out(last[0])
        token = Cursor(core.config.name, window_id, core.direction, last[1], member, limit)
        return Page(entries, token.encode())

    def top(
        self,
        n: int,
        style: RankStyle | str | None,
        window: str | Window | None,
        with_data: bool = False,
    ) -> Steps[list[Entry]]:
        """The best ``n`` entries (``with_data``: with their member data, one HMGET)."""
        core = self.core
        limit = core.check_size(n, "n")
        window_id, target = self.windows.read_target(window)
        rows = yield from self._rows(window_id, target, 0, limit, core.style_of(style))
        entries = core.entries(rows)
        if with_data:
            entries = list((yield from core.with_data(entries, True)))
        return entries

    def around(
        self,
        member: Member,
        before: int,
        after: int,
        style: RankStyle | str | None,
        window: str | Window | None,
        with_data: bool = False,
    ) -> Steps[Around]:
        """Up to before + 1 + after entries containing the member, shifted at the edges
        (``with_data``: with their member data, one HMGET)."""
        core = self.core
        core.check_offset(before)
        core.check_offset(after)
        size = core.check_size(before + after + 1, "before + after + 1")
        window_id, target = self.windows.read_target(window)
        resolved = core.style_of(style)
        own = member_bytes(member)
        if core.secondary:
            view = yield from self.ties.around(window_id, target, own, before, size, resolved)
        else:
            if core.lex is not None:
                encoded = yield from self.lex.encoded(window_id, [own])
                if encoded[0] is None:
                    return Around((), None)
                own = encoded[0]
            read_style = RankStyle.UNIQUE if core.lex is not None else resolved
            found = yield ("around", (target, own, before, after, core.high_first, read_style))
            if found is None:
                return Around((), None)
            index, rows = found
            if core.lex is not None:
                rows = yield from self.lex.rows(target, rows, resolved)
            view = Around(tuple(core.entries(rows)), index)
        if with_data and view.entries:
            view = Around((yield from core.with_data(view.entries, True)), view.member_index)
        return view

    def _bounds(self, low: float, high: float) -> tuple[float, float] | None:
        """Inclusive plain-score bounds as stored bounds, or None when no score can lie
        between them. Any int or float but NaN: infinities are unbounded, and a bound no
        float64 (or no packed value) holds is moved inward to the nearest one that lies
        within it (an int past the float64 range becomes the infinity beyond it), so
        the count is exact."""
        core = self.core
        for bound in (low, high):
            if isinstance(bound, bool) or not isinstance(bound, int | float) or bound != bound:
                raise InvalidScoreError(f"a score bound is a number (not NaN), not {bound!r}")
        layout = core.layout
        if layout is None:
            if low.__class__ is float and high.__class__ is float:  # taken as they are
                return None if low > high else (low, high)
            stored_low, stored_high = _inward(low, up=True), _inward(high, up=False)
            return None if stored_low > stored_high else (stored_low, stored_high)
        # Plain-score bounds -> packed bounds: every time of the lowest and highest score.
        if low > layout.score_max or high < layout.score_min or low > high:
            return None
        shift = layout.time_bits
        packed_low = -_INF if low <= layout.score_min else float(math.ceil(low) << shift)
        packed_high = (
            _INF
            if high >= layout.score_max
            else float((math.floor(high) << shift) + core.time_mask)
        )
        return None if packed_low > packed_high else (packed_low, packed_high)

    def count(self, window: str | Window | None) -> Steps[int]:
        """Members in the window."""
        target = self.windows.read_target(window)[1]
        total: int = yield ("count", (target.key,))
        return total

    def count_between(self, low: float, high: float, window: str | Window | None) -> Steps[int]:
        """Members with ``low <= score <= high`` (plain scores, both inclusive)."""
        if self.core.lex is not None:
            return (
                yield from self.lex.count_between(self.windows.read_target(window)[1], low, high)
            )
        bounds = self._bounds(low, high)
        target = self.windows.read_target(window)[1]
        if bounds is None:
            return 0
        total: int = yield ("count", (target.key, *bounds))
        return total

    def between(
        self,
        low: float,
        high: float,
        offset: int,
        count: int | None,
        style: RankStyle | str | None,
        window: str | Window | None,
        with_data: bool = False,
    ) -> Steps[list[Entry]]:
        """Entries with ``low <= score <= high`` best first, after ``offset``, at most
        ``count`` (``with_data``: with their member data, one HMGET)."""
        core = self.core
        start = core.check_offset(offset)
        limit = core.check_size(core.config.max_page_size if count is None else count, "count")
        resolved = core.style_of(style)
        if start > MAX_POSITION:  # past the end of every board: no round trip
            self.windows.read_target(window)  # a window the board does not keep is still an error
            if core.lex is None:
                self._bounds(low, high)
            else:
                self.lex.field_range(low, high)
            return []
        rows: list[Row]
        if core.lex is not None:
            target = self.windows.read_target(window)[1]
            rows = yield from self.lex.between(target, low, high, start, limit, resolved)
        else:
            bounds = self._bounds(low, high)
            window_id, target = self.windows.read_target(window)
            if bounds is None:
                return []
            packed_low, packed_high = bounds
            if core.secondary:
                fetch: Call = ("by_score", (target, packed_low, packed_high, core.high_first))
                rows = yield from self.ties.resorted(window_id, fetch, start, limit, resolved)
            else:
                rows = yield (
                    "by_score",
                    (target, packed_low, packed_high, start, limit, core.high_first, resolved),
                )
        entries = core.entries(rows)
        if with_data:
            entries = list((yield from core.with_data(entries, True)))
        return entries

    def percentile(self, member: Member, window: str | Window | None) -> Steps[float | None]:
        """100 * (members with a strictly worse plain score) / (all members); None if absent."""
        core = self.core
        if core.lex is not None:
            window_id, lex_target = self.windows.read_target(window)
            return (yield from self.lex.percentile(window_id, lex_target, member_bytes(member)))
        args = self.plain_percentile(member, window)
        if args is not None:
            answer: PercentileAnswer = yield ("percentile", args)
            return self.percentile_from(answer)
        target = self.windows.read_target(window)[1]
        found: list[float | None] = yield ("scores", (target.key, [member_bytes(member)]))
        raw = found[0]
        if raw is None:
            return None
        total: int = yield ("count", (target.key,))
        layout = core.layout
        if layout is None:
            if core.high_first:
                low, high = -_INF, math.nextafter(raw, -_INF)
            else:
                low, high = math.nextafter(raw, _INF), _INF
        else:
            plain = layout.decode(raw).score
            if core.high_first:
                low, high = -_INF, float((plain << layout.time_bits) - 1)
            else:
                low, high = float((plain + 1) << layout.time_bits), _INF
        worse: int = yield ("count", (target.key, low, high))
        return 100.0 * worse / total if total else 0.0
