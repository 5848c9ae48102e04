"""Sans-I/O core of the Redis backends: each operation as (encode, decode), no sockets.

For every :class:`~ranked.backends.base.Backend` operation there is one function here
that checks the arguments, builds a :class:`Call` (a script name or a plain command, its
keys and its arguments) and attaches the decoder that turns the reply into the typed
result. The four shells (:class:`~ranked.backends.redis.RedisBackend`, its asyncio twin
and the two cluster classes) only send a :class:`Call` and hand the reply to
``call.decode``, so no logic exists twice.

Bad input raises here, before anything is sent: a score that is not finite raises
:class:`~ranked.errors.InvalidScoreError`; a composite time outside its budget, or a
non-integer composite score, raises :class:`~ranked.errors.OutOfRangeError`. Errors a
script finds (a composite score pushed out of its budget by ``incr``) come back as error
replies with a ``RANKED_...`` prefix, which :func:`translate_error` maps to the same types.

Contract points resolved here (base.py leaves them open):

- A result of ``incr``/``decr`` that is not finite (overflow to infinity) raises
  ``InvalidScoreError`` and changes nothing, like a non-finite submitted value; one of
  magnitude 2**53 or more that is not the exact sum raises ``OutOfRangeError`` (the
  script's two-sum test, as :func:`~ranked.backends.base.incremented`). An ``int`` value
  a float64 would round raises ``OutOfRangeError`` before anything is sent.
- Negative positions, counts, offsets and limits raise ``ValueError`` (as the memory
  backend); ``stop < start``, ``count == 0`` or ``limit == 0`` read nothing (no round
  trip). Positions and offsets past :data:`~.base.MAX_POSITION` read nothing (no round
  trip), and counts, stops and limits past it are clamped to it: scripts hold positions
  in Lua numbers, exact (and written as plain digits) only up to 2**53, and no board
  holds that many members. A TTL that is not positive raises ``ValueError``; so does an
  unknown rank style.
- ``hash_set`` with no fields only sets the TTL (when given).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Generic, TypeVar, cast

from ..core.ranks import RankStyle
from ..errors import InvalidScoreError, OutOfRangeError, ResponseError
from ._composite import check_layout, integer_score, score_bounds, time_field
from ._scripts import Arg, Script
from .base import (
    MAX_POSITION,
    Composite,
    LexOperator,
    LexOutcome,
    Row,
    SubmitOutcome,
    SubmitRequest,
    Target,
    exact_score,
)
from .procedure import Procedure

__all__ = [
    "Call",
    "ServerClock",
    "around",
    "by_score",
    "count",
    "delete",
    "expire_at",
    "hash_delete",
    "hash_get",
    "hash_set",
    "intersect_store",
    "lex_count",
    "lex_range",
    "lex_replace",
    "page",
    "page_after",
    "percentile",
    "procedure_call",
    "range_all",
    "ranks",
    "remove",
    "scores",
    "set_add",
    "set_members",
    "set_remove",
    "submit",
    "submit_batch",
    "translate_error",
]

T = TypeVar("T")

OUT_OF_RANGE: Final = "RANKED_OUT_OF_RANGE "
INVALID_SCORE: Final = "RANKED_INVALID_SCORE "


class Call(Generic[T]):
    """One round trip: a script (``script`` set) or a plain command (``args[0]`` is its
    name), the keys it touches (for the cluster slot check) and the reply decoder.
    A call with neither a script nor arguments needs no round trip: ``decode(None)``."""

    __slots__ = ("args", "decode", "keys", "script")

    def __init__(
        self,
        script: str | Script | None,
        keys: Sequence[bytes],
        args: Sequence[Arg],
        decode: Callable[[Any], T],
    ) -> None:
        self.script = script
        self.keys = keys
        self.args = args
        self.decode = decode

    @property
    def needs_io(self) -> bool:
        return self.script is not None or bool(self.args)


def procedure_call(
    procedure: Procedure[T], keys: Sequence[bytes], args: Sequence[Arg], now_us: int | None
) -> Call[T]:
    """A feature's :class:`~.procedure.Procedure`: its script, ``ARGV[1]`` the instant."""
    instant: Arg = b"" if now_us is None else now_us
    return Call(procedure.script, keys, (instant, *args), procedure.decode)


def _nothing(value: T) -> Call[T]:
    return Call(None, (), (), lambda _reply: value)


# -- replies -----------------------------------------------------------------------------


def _float(text: Any) -> float:
    return float(text)


def _optional_float(text: Any) -> float | None:
    return None if text is None else float(text)


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _rows_decoder(style: RankStyle) -> Callable[[Any], list[Row]]:
    """The decoder of a row script's reply {first rank, first index, skip, rows} (Lua
    ``ranked_reply``): the rows after the first ``skip`` of the flat ZRANGE WITHSCORES
    output, ranked from the first one's rank as the style counts (unique: one more per
    row; competition: the row's position + 1 when the score changes; dense: one more when
    the score changes)."""
    unique, competition = style == "unique", style == "competition"

    def decode(reply: Any) -> list[Row]:
        rank, first_index, skip, flat = reply
        start, stop = 2 * skip, len(flat)
        if start >= stop:
            return []
        previous = float(flat[start + 1])
        rows: list[Row] = [(flat[start], previous, rank)]
        append = rows.append
        for i in range(start + 2, stop, 2):
            score = float(flat[i + 1])
            if unique:
                rank += 1
            elif score != previous:
                rank = first_index + len(rows) + 1 if competition else rank + 1
            append((flat[i], score, rank))
            previous = score
        return rows

    return decode


_ROWS: Final = {style: _rows_decoder(style) for style in RankStyle}


def _window_decoder(style: RankStyle) -> Callable[[Any], tuple[int, list[Row]] | None]:
    rows_of = _ROWS[style]

    def decode(reply: Any) -> tuple[int, list[Row]] | None:
        if reply is None:
            return None
        index, rows = reply
        return int(index), rows_of(rows)

    return decode


_WINDOWS: Final = {style: _window_decoder(style) for style in RankStyle}


def translate_error(message: str) -> Exception:
    """The typed error for a Redis error reply text (scripts mark their own errors)."""
    if message.startswith(OUT_OF_RANGE):
        return OutOfRangeError(message[len(OUT_OF_RANGE) :])
    if message.startswith(INVALID_SCORE):
        return InvalidScoreError(message[len(INVALID_SCORE) :])
    return ResponseError(message)


_STYLES: Final = frozenset(style.value for style in RankStyle)


def _style(style: RankStyle) -> str:
    if style not in _STYLES:
        raise ValueError(f"unknown rank style {style!r}")
    return str(style)


def _not_negative(**values: int) -> None:
    for name, value in values.items():
        if value < 0:
            raise ValueError(f"{name} must not be negative, not {value}")


def _ttl(ttl_ms: int | None) -> Arg:
    if ttl_ms is None:
        return b""
    if ttl_ms <= 0:
        raise ValueError(f"ttl_ms must be positive, not {ttl_ms}")
    return int(ttl_ms)


def _flag(value: bool) -> int:
    return 1 if value else 0


def _range_bound(value: float) -> Arg:
    if math.isnan(value):
        raise InvalidScoreError("a score range bound is NaN")
    if math.isinf(value):
        return b"+inf" if value > 0 else b"-inf"
    return value


def _finite(value: float, what: str) -> float:
    if isinstance(value, int):
        return exact_score(value) + 0.0  # OutOfRangeError for an int a float64 would round
    number = float(value)
    if not math.isfinite(number):
        raise InvalidScoreError(f"{what} {value!r} is not a finite number")
    return number + 0.0  # -0.0 + 0.0 == +0.0: never store -0


# -- submit ------------------------------------------------------------------------------


_OPERATORS: Final = frozenset(("best", "set", "incr", "decr"))


def _packing(composite: Composite, value: float, now_ms: int) -> tuple[int, int, int, int]:
    """(2**time_bits, score_min, score_max, time field) for one submission, all checked."""
    check_layout(composite)
    integer_score(value)
    score_min, score_max = score_bounds(composite)
    return 1 << composite.time_bits, score_min, score_max, time_field(composite, now_ms)


def _encode_request(request: SubmitRequest, keys: list[bytes], args: list[Arg]) -> None:
    value = _finite(request.value, "score")
    if request.keep is not None:
        _not_negative(keep=request.keep)
    if request.operator not in _OPERATORS:
        raise ValueError(f"unknown operator {request.operator!r}")
    # The value goes as its canonical '%.17g' text (Python and Lua's C printf write the same
    # digits): the script reuses it as the companions' score text instead of formatting.
    args += (request.member, b"%.17g" % value, request.operator, _flag(request.high_first))
    args += (_style(request.style), b"" if request.keep is None else request.keep)
    if request.composite is None:
        args += (0, 0, 0, 0, 0)
    else:
        args += (1, *_packing(request.composite, value, request.now_ms))
    tie = request.tie
    args += (0, b"") if tie is None else (1, bytes(tie))
    args.append(len(request.targets))
    for target in request.targets:
        keys += (target.key, target.dense_key, target.counts_key)
        if target.ties_key is None:
            args += (_ttl(target.ttl_ms), 0)
        else:
            keys.append(target.ties_key)
            args += (_ttl(target.ttl_ms), 1)


def _outcomes(flat: Any, sizes: Sequence[int]) -> list[tuple[SubmitOutcome, ...]]:
    """The flat reply (five values per target, request after request) as outcomes."""
    outcomes = [
        SubmitOutcome(
            float(flat[i]),
            None if flat[i + 1] is None else float(flat[i + 1]),
            flat[i + 2],
            flat[i + 3],
            flat[i + 4] == 1,
        )
        for i in range(0, len(flat), 5)
    ]
    grouped: list[tuple[SubmitOutcome, ...]] = []
    at = 0
    for size in sizes:
        grouped.append(tuple(outcomes[at : at + size]))
        at += size
    return grouped


def _plain_outcome(flat: Any) -> tuple[SubmitOutcome, ...]:
    previous = flat[1]
    return (
        SubmitOutcome(
            float(flat[0]),
            None if previous is None else float(previous),
            flat[2],
            flat[3],
            flat[4] == 1,
        ),
    )


def _one_request(size: int) -> Callable[[Any], tuple[SubmitOutcome, ...]]:
    if size == 1:  # the common case: one target, no regrouping
        return _plain_outcome
    return lambda flat: _outcomes(flat, (size,))[0]


def submit(request: SubmitRequest) -> Call[tuple[SubmitOutcome, ...]]:
    """Script ``submit`` with one request. One plain target (no layout, ties hash or
    keep: the common case) goes in the script's short form (ARGV[1] '0', seven values)."""
    targets = request.targets
    if (
        len(targets) == 1
        and request.composite is None
        and request.keep is None
        and targets[0].ties_key is None
    ):
        target = targets[0]
        value = _finite(request.value, "score")
        operator = request.operator
        if operator not in _OPERATORS:
            raise ValueError(f"unknown operator {operator!r}")
        args: list[Arg] = [
            0,
            request.member,
            b"%.17g" % value,
            operator,
            1 if request.high_first else 0,
            _style(request.style),
            _ttl(target.ttl_ms),
        ]
        keys = (target.key, target.dense_key, target.counts_key)
        return Call("submit", keys, args, _plain_outcome)
    all_keys: list[bytes] = []
    all_args: list[Arg] = [1]
    _encode_request(request, all_keys, all_args)
    return Call("submit", all_keys, all_args, _one_request(len(targets)))


def submit_batch(requests: Sequence[SubmitRequest]) -> Call[list[tuple[SubmitOutcome, ...]]]:
    """Script ``submit`` with every request, in order (one call)."""
    if not requests:
        return _nothing([])
    keys: list[bytes] = []
    args: list[Arg] = [len(requests)]
    for request in requests:
        _encode_request(request, keys, args)
    sizes = [len(request.targets) for request in requests]
    return Call("submit", keys, args, lambda flat: _outcomes(flat, sizes))


# -- reads -------------------------------------------------------------------------------


def _rank_pairs(flat: Any) -> list[tuple[float, int] | None]:
    """The flat reply (score, rank per member; nil, nil when absent) as pairs."""
    return [
        None if flat[i] is None else (float(flat[i]), flat[i + 1]) for i in range(0, len(flat), 2)
    ]


def ranks(
    target: Target, members: Sequence[bytes], high_first: bool, style: RankStyle
) -> Call[list[tuple[float, int] | None]]:
    """Script ``ranks``: ZMSCORE + one O(log n) count (or ZREVRANK) per member."""
    style_name = _style(style)
    if not members:
        return _nothing([])
    args: list[Arg] = [_flag(high_first), style_name, *members]
    return Call("ranks", (target.key, target.dense_key), args, _rank_pairs)


def page(
    target: Target, start: int, stop: int, high_first: bool, style: RankStyle
) -> Call[list[Row]]:
    """Script ``page``: ZRANGE by index [REV] WITHSCORES + the first row's rank."""
    _not_negative(start=start, stop=stop)
    style_name = _style(style)
    stop = min(stop, MAX_POSITION)  # Lua numbers are exact (and print as digits) up to it
    if stop < start:
        return _nothing([])
    args: list[Arg] = [start, stop, _flag(high_first), style_name]
    return Call("page", (target.key, target.dense_key), args, _ROWS[style])


def page_after(
    target: Target,
    score: float,
    member: bytes,
    count: int,
    high_first: bool,
    style: RankStyle,
) -> Call[list[Row]]:
    """Script ``page_after``: ZRANGE BYSCORE from the point's score, its leading rows that
    do not come after the point skipped (a long tie run: located by counting), then one
    rank lookup for the first row."""
    _not_negative(count=count)
    bound, style_name = _range_bound(score), _style(style)
    if count == 0:
        return _nothing([])
    args: list[Arg] = [bound, member, min(count, MAX_POSITION), _flag(high_first), style_name]
    keys = (target.key, target.dense_key)
    return Call("page_after", keys, args, _ROWS[style])


def around(
    target: Target,
    member: bytes,
    before: int,
    after: int,
    high_first: bool,
    style: RankStyle,
) -> Call[tuple[int, list[Row]] | None]:
    """Script ``around``: ZREVRANK/ZRANK, then the clamped window."""
    _not_negative(before=before, after=after)
    style_name = _style(style)
    before, after = min(before, MAX_POSITION), min(after, MAX_POSITION)
    args: list[Arg] = [member, before, after, _flag(high_first), style_name]
    return Call("around", (target.key, target.dense_key), args, _WINDOWS[style])


def by_score(
    target: Target,
    low: float,
    high: float,
    offset: int,
    count: int,
    high_first: bool,
    style: RankStyle,
) -> Call[list[Row]]:
    """Script ``by_score``: ZRANGE BYSCORE [REV] LIMIT + the first row's rank."""
    _not_negative(offset=offset, count=count)
    low_bound, high_bound, style_name = _range_bound(low), _range_bound(high), _style(style)
    if count == 0 or low > high or offset > MAX_POSITION:
        return _nothing([])
    count = min(count, MAX_POSITION)
    args: list[Arg] = [low_bound, high_bound, offset, count, _flag(high_first), style_name]
    return Call("by_score", (target.key, target.dense_key), args, _ROWS[style])


def count(target: Target, low: float = -math.inf, high: float = math.inf) -> Call[int]:
    """ZCARD for the whole board, else ZCOUNT."""
    if low == -math.inf and high == math.inf:
        return Call(None, (target.key,), ("ZCARD", target.key), int)
    low_bound, high_bound = _range_bound(low), _range_bound(high)
    if low > high:
        return _nothing(0)
    args: list[Arg] = ["ZCOUNT", target.key, low_bound, high_bound]
    return Call(None, (target.key,), args, int)


def _percentile(reply: Any) -> tuple[float, int, int] | None:
    if reply is None:
        return None
    score, total, worse = reply
    return float(score), int(total), int(worse)


def percentile(
    target: Target, member: bytes, high_first: bool
) -> Call[tuple[float, int, int] | None]:
    """Script ``percentile``: ZSCORE, ZCARD, ZCOUNT strictly worse."""
    args: list[Arg] = [member, _flag(high_first)]
    return Call("percentile", (target.key,), args, _percentile)


def scores(target: Target, members: Sequence[bytes]) -> Call[list[float | None]]:
    """ZMSCORE."""
    if not members:
        return _nothing([])
    args: list[Arg] = ["ZMSCORE", target.key, *members]
    return Call(None, (target.key,), args, lambda reply: [_optional_float(x) for x in reply])


def _pairs(reply: Any) -> list[tuple[bytes, float]]:
    items = cast(list[Any], reply)
    return [(cast(bytes, items[i]), float(items[i + 1])) for i in range(0, len(items), 2)]


def range_all(key: bytes, high_first: bool, limit: int) -> Call[list[tuple[bytes, float]]]:
    """ZRANGE key 0 limit-1 [REV] WITHSCORES."""
    _not_negative(limit=limit)
    if limit == 0:
        return _nothing([])
    args: list[Arg] = ["ZRANGE", key, 0, min(limit, MAX_POSITION) - 1]
    if high_first:
        args.append("REV")
    args.append("WITHSCORES")
    return Call(None, (key,), args, _pairs)


# -- other writes ------------------------------------------------------------------------


def remove(targets: Sequence[Target], members: Sequence[bytes]) -> Call[int]:
    """Script ``remove``: ZREM from every target, companions kept right, HDEL from each
    target's ties hash."""
    if not targets or not members:
        return _nothing(0)
    keys: list[bytes] = []
    args: list[Arg] = [len(targets)]
    for t in targets:
        keys += (t.key, t.dense_key, t.counts_key)
        if t.ties_key is not None:
            keys.append(t.ties_key)
        args.append(0 if t.ties_key is None else 1)
    return Call("remove", keys, [*args, *members], int)


def delete(keys: Sequence[bytes]) -> Call[int]:
    """DEL."""
    if not keys:
        return _nothing(0)
    return Call(None, keys, ["DEL", *keys], int)


def expire_at(keys: Sequence[bytes], deadline_ms: int) -> Call[None]:
    """Script ``expire_at``: PEXPIREAT each key."""
    if not keys:
        return _nothing(None)
    return Call("expire_at", keys, [int(deadline_ms)], lambda _reply: None)


def hash_set(key: bytes, fields: Mapping[bytes, bytes], ttl_ms: int | None) -> Call[None]:
    """Script ``hash_set``: HSET + PEXPIRE."""
    ttl = _ttl(ttl_ms)
    if not fields and ttl_ms is None:
        return _nothing(None)
    args: list[Arg] = [ttl]
    for field, value in fields.items():
        args += (field, value)
    return Call("hash_set", (key,), args, lambda _reply: None)


def hash_get(key: bytes, fields: Sequence[bytes]) -> Call[list[bytes | None]]:
    """HMGET."""
    if not fields:
        return _nothing([])
    return Call(None, (key,), ["HMGET", key, *fields], list)


def hash_delete(key: bytes, fields: Sequence[bytes]) -> Call[int]:
    """HDEL."""
    if not fields:
        return _nothing(0)
    return Call(None, (key,), ["HDEL", key, *fields], int)


def set_add(key: bytes, members: Sequence[bytes]) -> Call[int]:
    """SADD."""
    if not members:
        return _nothing(0)
    return Call(None, (key,), ["SADD", key, *members], int)


def set_remove(key: bytes, members: Sequence[bytes]) -> Call[int]:
    """SREM."""
    if not members:
        return _nothing(0)
    return Call(None, (key,), ["SREM", key, *members], int)


def set_members(key: bytes) -> Call[set[bytes]]:
    """SMEMBERS."""
    return Call(None, (key,), ["SMEMBERS", key], set)


def intersect_store(dest: bytes, board: bytes, members_set: bytes, ttl_ms: int) -> Call[int]:
    """Script ``intersect_store``: ZINTERSTORE dest 2 board set WEIGHTS 1 0, PEXPIRE."""
    return Call("intersect_store", (dest, board, members_set), [_ttl(ttl_ms)], int)


# -- member-encoded (lexicographic) boards ----------------------------------------------


def _lex_outcome(reply: Any) -> LexOutcome:
    previous, stored, previous_rank, rank, changed = reply
    return LexOutcome(
        None if not previous else cast(bytes, previous),
        cast(bytes, stored),
        _optional_int(previous_rank or None),
        int(rank),
        bool(changed),
    )


def lex_replace(
    target: Target,
    index_key: bytes,
    member: bytes,
    encoded: bytes,
    operator: LexOperator,
    high_first: bool,
) -> Call[LexOutcome]:
    """Script ``lex_replace``: HGET, ZRANK, ZREM old, ZADD 0 new, HSET, PEXPIRE."""
    if operator not in ("set", "best"):
        raise ValueError(f"a lexicographic replace takes 'set' or 'best', not {operator!r}")
    keys = (target.key, target.dense_key, target.counts_key, index_key)
    args: list[Arg] = [member, encoded, operator, _flag(high_first), _ttl(target.ttl_ms)]
    return Call("lex_replace", keys, args, _lex_outcome)


def _lex_bound(value: bytes | None, exclusive: bool, unbounded: bytes) -> bytes:
    if value is None:
        return unbounded
    return (b"(" if exclusive else b"[") + bytes(value)


def lex_count(
    target: Target,
    low: bytes | None,
    high: bytes | None,
    low_exclusive: bool = False,
    high_exclusive: bool = False,
) -> Call[int]:
    """ZLEXCOUNT."""
    args: list[Arg] = [
        "ZLEXCOUNT",
        target.key,
        _lex_bound(low, low_exclusive, b"-"),
        _lex_bound(high, high_exclusive, b"+"),
    ]
    return Call(None, (target.key,), args, int)


def lex_range(
    target: Target,
    low: bytes | None,
    high: bytes | None,
    low_exclusive: bool,
    high_exclusive: bool,
    offset: int,
    count: int,
    reverse: bool,
) -> Call[list[bytes]]:
    """ZRANGE BYLEX [REV] LIMIT (REV takes the high bound first)."""
    _not_negative(offset=offset, count=count)
    if count == 0 or offset > MAX_POSITION:
        return _nothing([])
    count = min(count, MAX_POSITION)
    first = _lex_bound(low, low_exclusive, b"-")
    last = _lex_bound(high, high_exclusive, b"+")
    args: list[Arg] = ["ZRANGE", target.key]
    args += (last, first, "BYLEX", "REV") if reverse else (first, last, "BYLEX")
    args += ("LIMIT", offset, count)
    return Call(None, (target.key,), args, list)


# -- time --------------------------------------------------------------------------------


class ServerClock:
    """The server's clock without a round trip: local clock + an offset measured by TIME.

    The offset is measured on first use, again every :attr:`REFRESH_S` seconds, and after
    a connection error (the server may have restarted, or failed over to another
    machine). Until the first measurement the offset is 0 (the local clock).
    """

    REFRESH_S: Final = 30.0

    __slots__ = ("_local", "_next_refresh", "offset_ms")

    def __init__(self, local: Callable[[], float] = time.time) -> None:
        self._local = local
        self.offset_ms = 0
        self._next_refresh = -math.inf

    def local_ms(self) -> int:
        return int(self._local() * 1000)

    def now_ms(self) -> int:
        return self.local_ms() + self.offset_ms

    @property
    def due(self) -> bool:
        return time.monotonic() >= self._next_refresh

    def invalidate(self) -> None:
        self._next_refresh = -math.inf

    def postpone(self, seconds: float) -> None:
        """Keep the current offset for ``seconds`` (the server did not answer TIME)."""
        self._next_refresh = time.monotonic() + seconds

    def update(self, reply: Any, sent_ms: int, received_ms: int) -> None:
        """Record a TIME reply ([seconds, microseconds]) read between the two local times."""
        seconds, micros = reply
        server_ms = int(seconds) * 1000 + int(micros) // 1000
        self.offset_ms = server_ms - (sent_ms + received_ms) // 2
        self._next_refresh = time.monotonic() + self.REFRESH_S
