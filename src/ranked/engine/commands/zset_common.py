"""Helpers shared by the sorted-set commands: lookups, ranges, replies, encodings.

Redis 7.0 keeps small sorted sets "listpack-encoded" (at most 128 members, none
longer than 64 bytes) and never converts them back once they outgrow that. The
only reply-visible difference is that a listpack stores an integral score as an
integer, so ``-0`` becomes ``0``. The keyspace tracks a per-key flag and the
functions here apply Redis's conversion rules at the same moments Redis does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple, TypeAlias, cast

from ..redisfloat import format_double, parse_lex_bound, parse_score_bound
from ..zset import SortedSet
from .common import SYNTAX, Handler, Reply, error, int_arg, option, typed_lookup

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = [
    "LISTPACK_ENTRIES",
    "LISTPACK_VALUE",
    "PARSE_RANGE",
    "LexRange",
    "MultiPop",
    "Pop",
    "ScoreRange",
    "ZRange",
    "first_pop",
    "flatten",
    "lookup_zset",
    "multi_pop_reply",
    "parse_lex_range",
    "parse_multi_pop",
    "parse_score_range",
    "pop_flat",
    "range_handler",
    "store_emitted",
    "store_result",
]

LISTPACK_ENTRIES = 128  # zset-max-listpack-entries
LISTPACK_VALUE = 64  # zset-max-listpack-value

Pair = tuple[bytes, float]
Pop = Callable[["Keyspace", bytes, SortedSet], Reply]
"""Pops from a non-empty sorted set for one caller and builds its reply."""

lookup_zset: Callable[[Keyspace, bytes], SortedSet | None] = typed_lookup(SortedSet, "zset")


def pairs(items: Iterable[tuple[str | bytes, float]]) -> list[Pair]:
    """Pairs from a raw SortedSet, typed as bytes (raw sets always return bytes)."""
    return cast(list[Pair], list(items))


def pairs_of(pair: tuple[str | bytes, float] | None) -> Pair | None:
    """One pair from a raw SortedSet, typed as bytes."""
    return cast(Pair | None, pair)


def delete_if_empty(ks: Keyspace, key: bytes, zset: SortedSet) -> None:
    """Redis never keeps an empty key: drop it after a removal emptied it."""
    if len(zset) == 0:
        ks.delete(key)


def pop_flat(ks: Keyspace, key: bytes, zset: SortedSet, count: int, highest: bool) -> list[Reply]:
    """Pop ``count`` lowest (or highest) members: ``[member, score, ...]``; an emptied key
    is deleted. O(count log n)."""
    popped = pairs(zset.pop_max(count) if highest else zset.pop_min(count))
    delete_if_empty(ks, key, zset)
    flat: list[Reply] = []
    for member, score in popped:
        flat += [member, format_double(score)]
    return flat


class MultiPop(NamedTuple):
    """The parsed arguments of ZMPOP / BZMPOP."""

    keys: list[bytes]
    highest: bool
    pop_count: int

    def pop(self, ks: Keyspace, key: bytes, zset: SortedSet) -> Reply:
        """This request's :data:`Pop`: :func:`multi_pop_reply`."""
        return multi_pop_reply(ks, key, zset, self)


def parse_multi_pop(argv: list[bytes], numkeys_at: int) -> MultiPop:
    """``numkeys key [key ...] MIN|MAX [COUNT count]`` as Redis 7.0's zmpopGenericCommand
    reads it: numkeys, then the MIN|MAX word, then COUNT (once, at least 1)."""
    numkeys_error = "ERR numkeys should be greater than 0"
    numkeys = int_arg(argv[numkeys_at], numkeys_error)
    if numkeys < 1:
        raise error(numkeys_error)
    where = numkeys_at + 1 + numkeys
    if where >= len(argv) or option(argv[where]) not in (b"min", b"max"):
        raise error(SYNTAX)
    count = -1
    index = where + 1
    while index < len(argv):
        if count == -1 and option(argv[index]) == b"count" and index + 1 < len(argv):
            count_error = "ERR count should be greater than 0"
            count = int_arg(argv[index + 1], count_error)
            if count < 1:
                raise error(count_error)
            index += 2
        else:
            raise error(SYNTAX)
    keys = argv[numkeys_at + 1 : where]
    return MultiPop(keys, option(argv[where]) == b"max", max(count, 1))


def multi_pop_reply(ks: Keyspace, key: bytes, zset: SortedSet, request: MultiPop) -> Reply:
    """Pop for ZMPOP / BZMPOP: ``[key, [[member, score], ...]]``. O(count log n)."""
    flat = pop_flat(ks, key, zset, request.pop_count, request.highest)
    return [key, [flat[i : i + 2] for i in range(0, len(flat), 2)]]


def first_pop(ks: Keyspace, keys: Sequence[bytes], pop: Pop) -> Reply:
    """Redis's look at the keys of a multi-key pop: missing keys are skipped, another
    type is WRONGTYPE, the first non-empty sorted set is popped. None when every key
    is missing."""
    for key in keys:
        zset = lookup_zset(ks, key)
        if zset is not None:  # lookup_zset never returns an empty set
            return pop(ks, key, zset)
    return None


class ScoreRange(NamedTuple):
    """A parsed score range (always min then max)."""

    min: float
    max: float
    min_exclusive: bool
    max_exclusive: bool
    empty: bool = False  # as LexRange's; no score range is answered without a look


class LexRange(NamedTuple):
    """A parsed lex range; None bounds are unbounded, ``empty`` for ``+ ...`` or ``... -``."""

    min: bytes | None
    max: bytes | None
    min_exclusive: bool
    max_exclusive: bool
    empty: bool


ZRange: TypeAlias = ScoreRange | LexRange


def parse_score_range(low: bytes, high: bytes) -> ScoreRange:
    """Parse two score bounds or raise ``ERR min or max is not a float``."""
    lo = parse_score_bound(low)
    hi = parse_score_bound(high)
    if lo is None or hi is None:
        raise error("ERR min or max is not a float")
    return ScoreRange(lo[0], hi[0], lo[1], hi[1])


def parse_lex_range(low: bytes, high: bytes) -> LexRange:
    """Parse two lex bounds or raise ``ERR min or max not valid string range item``."""
    lo = parse_lex_bound(low)
    hi = parse_lex_bound(high)
    if lo is None or hi is None:
        raise error("ERR min or max not valid string range item")
    empty = (lo.value is None and not lo.low) or (hi.value is None and hi.low)
    return LexRange(
        lo.value,
        hi.value,
        lo.exclusive and lo.value is not None,
        hi.exclusive and hi.value is not None,
        empty,
    )


PARSE_RANGE: dict[str, Callable[[bytes, bytes], ZRange]] = {
    "score": parse_score_range,
    "lex": parse_lex_range,
}
"""The parser of each kind of range: BYSCORE ``score``, BYLEX ``lex``."""


def range_handler(kind: str, method: Callable[..., int]) -> Handler:
    """The handler of a ``KEY min max`` command on a range of a zset (ZCOUNT ZLEXCOUNT
    ZREMRANGEBYSCORE ZREMRANGEBYLEX): the range, of ``kind`` (``score`` or ``lex``), is
    parsed before the key is looked up, and ``method`` (a SortedSet method such as
    ``SortedSet.count_by_score``) answers. A missing key or a range Redis answers as
    empty without a look gives 0; an emptied key is deleted. O(log n), plus what a
    removal removes."""
    parse = PARSE_RANGE[kind]

    def handler(ks: Keyspace, argv: list[bytes]) -> Reply:
        bounds = parse(argv[2], argv[3])
        zset = lookup_zset(ks, argv[1])
        if zset is None or bounds.empty:
            return 0
        found: int = method(
            zset,
            bounds.min,
            bounds.max,
            min_exclusive=bounds.min_exclusive,
            max_exclusive=bounds.max_exclusive,
        )
        if not zset:
            ks.delete(argv[1])
        return found

    return handler


def flatten(found: Sequence[Pair], withscores: bool) -> list[Reply]:
    """A flat RESP2 reply: members, each followed by its score with ``withscores``."""
    if not withscores:
        return [member for member, _ in found]
    flat: list[Reply] = []
    for member, score in found:
        flat += [member, format_double(score)]
    return flat


def fits_listpack(found: Iterable[Pair], size: int) -> bool:
    """Would Redis keep this many members, with these lengths, as a listpack?"""
    return size <= LISTPACK_ENTRIES and all(len(member) <= LISTPACK_VALUE for member, _ in found)


def store_result(ks: Keyspace, key: bytes, result: SortedSet) -> int:
    """Store a Z*STORE result like Redis: empty deletes ``key``; small ones lose ``-0``.

    Redis builds the result as a skiplist and converts it to a listpack when it
    fits, which turns every ``-0`` score into ``0``. Returns the size stored.
    """
    size = len(result)
    if size == 0:
        ks.delete(key)
        return 0
    listpack = size <= LISTPACK_ENTRIES and fits_listpack(pairs(result.items()), size)
    if listpack:
        for member, score in pairs(result.items()):
            if score == 0.0:
                result.remove(member)
                result.add(member, 0.0)
    ks.store(key, result)
    ks.set_listpack(key, listpack)
    return size


def store_emitted(ks: Keyspace, key: bytes, emitted: Sequence[Pair], size_hint: int) -> int:
    """Store ZRANGESTORE results, inserted one by one in reply order as Redis does.

    The destination starts as a listpack unless ``size_hint`` exceeds 128, and
    converts on the first insert that would not fit; ``-0`` inserted while it is
    a listpack is stored as ``0``.
    """
    if not emitted:
        ks.delete(key)
        return 0
    listpack = size_hint <= LISTPACK_ENTRIES
    stored: list[Pair] = []
    for count, (member, score) in enumerate(emitted, start=1):
        if listpack and (count > LISTPACK_ENTRIES or len(member) > LISTPACK_VALUE):
            listpack = False
        stored.append((member, 0.0 if listpack and score == 0.0 else score))
    result = SortedSet(raw=True)
    result.load(stored)
    ks.store(key, result)
    ks.set_listpack(key, listpack)
    return len(stored)
