"""The service's request and response bodies, as msgspec types: the one description that
decodes and checks requests, encodes responses and generates the OpenAPI document.

Limits a request must keep (checked at decoding; a refused request changes nothing):
members are 1 to 200 characters with no control characters; scores are JSON numbers
(the board refuses what it cannot hold: NaN, infinities, a time tie-break's budget);
a batch holds at most :data:`MAX_BATCH` scores.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final, Literal

import msgspec

__all__ = [
    "MAX_BATCH",
    "MEMBER_PATTERN",
    "BatchBody",
    "BatchResult",
    "BoardInfo",
    "BoardList",
    "BoardSettings",
    "ClearBody",
    "ClearResult",
    "EntryOut",
    "Health",
    "HistoryItem",
    "HistoryOut",
    "ManyBoardsBody",
    "ManyBoardsResult",
    "Member",
    "MemberOut",
    "PageOut",
    "Problem",
    "RanksBody",
    "RanksOut",
    "RebuildResult",
    "RemoveResult",
    "ScoreBody",
    "SeasonSpec",
    "SnapshotResult",
    "SubmitResult",
    "TopOut",
    "WindowsOut",
]

MAX_BATCH: Final = 1000
"""The most scores one batch request carries."""

MEMBER_PATTERN: Final = r"^[^\x00-\x1f\x7f-\x9f]+$"
MAX_MEMBER_LENGTH: Final = 200

Member = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=MAX_MEMBER_LENGTH,
        pattern=MEMBER_PATTERN,
        description="A member: 1 to 200 characters, no control characters.",
        examples=["alice"],
    ),
]
Score = Annotated[
    int | float,
    msgspec.Meta(
        description="A number the board can hold (a time tie-break board takes whole ones).",
        examples=[1500],
    ),
]
Operator = Literal["best", "set", "incr", "decr"]
IdempotencyKey = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=128,
        pattern=MEMBER_PATTERN,
        description="A retried write with the same key is applied once and answered as the first.",
    ),
]
Reason = Annotated[str, msgspec.Meta(min_length=1, max_length=500)]


class SeasonSpec(msgspec.Struct, forbid_unknown_fields=True):
    """A named competition period ``[start, end)`` (aware ISO 8601 instants)."""

    name: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.:-]{1,64}$")]
    start: datetime
    end: datetime


class BoardSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=False):
    """A board's configuration. ``order``, ``tie_break``, ``windows`` and ``seasons`` are
    fixed once the board exists; the rest can be changed by a later PUT."""

    order: Literal["desc", "asc"] = "desc"
    """``desc``: higher scores rank first; ``asc``: lower scores rank first."""
    operator: Operator = "best"
    """What a submission does by default: keep the ``best``, ``set`` it, ``incr`` or
    ``decr`` by it."""
    tie_break: Literal["member", "time"] = "member"
    """Equal scores: ``member`` order, or ``time`` (the earlier achiever first)."""
    windows: Annotated[
        list[Literal["all", "daily", "weekly", "monthly"]],
        msgspec.Meta(min_length=1, max_length=5),
    ] = msgspec.field(default_factory=lambda: ["all"])
    """The windows every submission goes to; the first is the one reads use by default.
    Seasons are given in ``seasons`` (each one a window ``s:<name>``)."""
    seasons: Annotated[list[SeasonSpec], msgspec.Meta(max_length=64)] = msgspec.field(
        default_factory=list
    )
    rank_style: Literal["competition", "dense", "unique"] = "competition"
    """How equal scores rank: 1,2,2,4 (competition), 1,2,2,3 (dense), 1,2,3,4 (unique)."""
    keep: Annotated[int, msgspec.Meta(ge=1, le=10_000_000)] | None = None
    """Keep only the best ``keep`` members (None: keep all)."""
    keep_buffer: Annotated[int, msgspec.Meta(ge=0, le=10_000_000)] = 0
    max_page_size: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 1000
    """The most entries one read returns."""
    public_reads: bool = False
    """Whether clients without a key may read the board."""
    batch_incr_ms: Annotated[int, msgspec.Meta(ge=1, le=10_000)] | None = None
    """Coalesce ``incr`` / ``decr`` submissions per member over this many milliseconds,
    written as one batch (None: every submission written at once; docs/live.md)."""


class BoardInfo(msgspec.Struct):
    board: str
    settings: BoardSettings
    members: int
    """Members in the board's current primary window."""
    window: str
    """The current primary window's id."""


class BoardList(msgspec.Struct):
    boards: list[BoardInfo]


class ScoreBody(msgspec.Struct, forbid_unknown_fields=True):
    """One submission."""

    member: Member
    score: Score
    operator: Operator | None = None
    """Overrides the board's operator for this submission."""
    key: IdempotencyKey | None = None
    # A board with a write guard (docs/guard.md) reads these; other boards ignore them.
    client_time: Annotated[int, msgspec.Meta(ge=0, le=2**53)] | None = None
    """Signed submissions: the client's clock, Unix ms."""
    nonce: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.:~+/=-]{8,128}$")] | None = None
    """Signed submissions: a value used once."""
    signature: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")] | None = None
    """Signed submissions: hex HMAC-SHA256 of (board, member, score, client_time, nonce)."""
    replay: Any = None
    """Any JSON value the client attaches (kept with a held submission for its validator)."""


class WindowOut(msgspec.Struct):
    window: str
    score: float
    rank: int | None
    previous_score: float | None
    previous_rank: int | None
    changed: bool


class SubmitResult(msgspec.Struct):
    """What a submission did in the board's primary window (``windows``: every window)."""

    member: str
    score: float
    rank: int | None
    """``null`` when ``keep`` trimmed the member at once."""
    previous_score: float | None
    previous_rank: int | None
    changed: bool
    window: str
    windows: list[WindowOut]


class BatchItem(msgspec.Struct, forbid_unknown_fields=True):
    member: Member
    score: Score


class BatchBody(msgspec.Struct, forbid_unknown_fields=True):
    """Many submissions to one board, atomic as a whole."""

    scores: Annotated[list[BatchItem], msgspec.Meta(min_length=1, max_length=MAX_BATCH)]
    operator: Operator | None = None
    key: IdempotencyKey | None = None


class BatchResult(msgspec.Struct):
    results: list[SubmitResult]


class ManyBoardsBody(msgspec.Struct, forbid_unknown_fields=True):
    """One member's score to several boards (each board atomic on its own)."""

    member: Member
    score: Score
    boards: Annotated[list[str], msgspec.Meta(min_length=1, max_length=64)]
    operator: Operator | None = None


class ManyBoardsResult(msgspec.Struct):
    results: dict[str, SubmitResult]


class EntryOut(msgspec.Struct):
    member: str
    score: float
    rank: int


class MemberOut(msgspec.Struct, omit_defaults=True):
    member: str
    score: float
    rank: int
    window: str
    percentile: float | None = None
    """With ``?percentile=true``: the share of the board's members ranked below, in %."""


class TopOut(msgspec.Struct):
    entries: list[EntryOut]
    window: str


class PageOut(msgspec.Struct):
    entries: list[EntryOut]
    next: str | None
    """The cursor of the next page (``null``: no more)."""
    window: str


class RanksBody(msgspec.Struct, forbid_unknown_fields=True):
    members: Annotated[list[Member], msgspec.Meta(min_length=1, max_length=1000)]


class RankOut(msgspec.Struct):
    member: str
    score: float | None
    rank: int | None


class RanksOut(msgspec.Struct):
    ranks: list[RankOut]
    window: str


class CountOut(msgspec.Struct):
    count: int
    window: str


class WindowsOut(msgspec.Struct):
    current: str
    """The current primary window's id."""
    archived: list[str]
    """Closed windows whose final standings the journal keeps."""


class HistoryItem(msgspec.Struct):
    seq: int
    """The event's number in the whole journal (every board's events share it)."""
    at: datetime
    operation: str
    score: float | None
    key: str | None
    actor: str | None
    reason: str | None


class HistoryOut(msgspec.Struct):
    member: str
    history: list[HistoryItem]


class RemoveResult(msgspec.Struct):
    removed: bool


class ClearBody(msgspec.Struct, forbid_unknown_fields=True):
    reason: Reason


class ClearResult(msgspec.Struct):
    removed_keys: int


class RebuildResult(msgspec.Struct):
    replayed: int
    """Events replayed one by one into the board (a whole-board rebuild; 0 for a window)."""
    window: str | None = None
    """The window rebuilt alone (null: the whole board)."""
    members: int | None = None
    """How many members the rebuilt window holds."""


class SnapshotResult(msgspec.Struct):
    covers_board_seq: int | None
    """The number, within the board, of the last event the snapshot holds (``null``: the
    backend keeps no snapshots, as on Redis)."""


class FriendsBody(msgspec.Struct, forbid_unknown_fields=True):
    friends: Annotated[list[Member], msgspec.Meta(max_length=1000)]


class FriendsOut(msgspec.Struct):
    member: str
    friends: list[str]


class DataBody(msgspec.Struct, forbid_unknown_fields=True):
    """A member's display name and JSON metadata (both replaced)."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None
    metadata: dict[str, Any] | None = None


class Health(msgspec.Struct):
    status: str


class Problem(msgspec.Struct, omit_defaults=True):
    """An error (RFC 9457, ``application/problem+json``)."""

    type: str
    title: str
    status: int
    detail: str
    field: str | None = None
    """The request field the problem is about (``$.score``, ``member``, ``limit``)."""


# -- the score histogram (GET /v1/boards/{board}/histogram) --------------------------------


class HistogramBucket(msgspec.Struct):
    low: float
    """The bucket's lowest score (included)."""
    high: float
    """Its highest: excluded, but for the last bucket (the window's highest score)."""
    count: int


class HistogramOut(msgspec.Struct):
    """A window's score distribution in equal-width buckets from its lowest score to its
    highest (no bucket when the window is empty; one when every score is equal)."""

    window: str
    members: int
    """The members counted: the buckets' counts add up to it."""
    min: float | None
    max: float | None
    buckets: list[HistogramBucket]
