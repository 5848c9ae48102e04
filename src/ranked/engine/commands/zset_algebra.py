"""Set algebra: ZUNION ZINTER ZDIFF, their *STORE forms, and ZINTERCARD.

Inputs may be sorted sets or plain sets (every member scoring 1.0); missing
keys are empty. Redis order of checks: numkeys, key count, input types, then
the options (WEIGHTS, AGGREGATE, WITHSCORES, LIMIT as each command allows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ...errors import InvalidScoreError
from ..zset import SortedSet
from .common import (
    SYNTAX,
    CommandTable,
    Reply,
    error,
    float_arg,
    int_arg,
    option,
    register,
    register_all,
)
from .zset_common import flatten, pairs, store_result

if TYPE_CHECKING:
    from ..keyspace import Keyspace

__all__ = ["COMMANDS"]

COMMANDS: CommandTable = {}

Operation = Literal["union", "inter", "diff"]
Aggregate = Literal["sum", "min", "max"]
_AGGREGATES: dict[bytes, Aggregate] = {b"sum": "sum", b"min": "min", b"max": "max"}


class _Request:
    def __init__(self, sets: list[SortedSet]) -> None:
        self.sets = sets
        self.weights: list[float] | None = None
        self.aggregate: Aggregate = "sum"
        self.withscores = False
        self.limit = 0


def _input(ks: Keyspace, key: bytes) -> SortedSet:
    value = ks.get(key)
    if value is None:
        return SortedSet(raw=True)
    if isinstance(value, SortedSet):
        return value
    if isinstance(value, set):
        return SortedSet(((member, 1.0) for member in value), raw=True)
    raise error("WRONGTYPE Operation against a key holding the wrong kind of value")


def _parse(
    ks: Keyspace, argv: list[bytes], numkeys_at: int, op: Operation, *, store: bool, card: bool
) -> _Request:
    numkeys = int_arg(argv[numkeys_at])
    if numkeys < 1:
        name = argv[0].lower().decode("ascii")
        raise error(f"ERR at least 1 input key is needed for '{name}' command")
    first = numkeys_at + 1
    if numkeys > len(argv) - first:
        raise error(SYNTAX)
    request = _Request([_input(ks, key) for key in argv[first : first + numkeys]])
    index = first + numkeys
    algebra = op != "diff" and not card
    while index < len(argv):
        word = option(argv[index])
        left = len(argv) - index
        if algebra and word == b"weights" and left >= numkeys + 1:
            weights = argv[index + 1 : index + 1 + numkeys]
            request.weights = [float_arg(w, "ERR weight value is not a float") for w in weights]
            index += 1 + numkeys
        elif algebra and word == b"aggregate" and left >= 2:
            aggregate = _AGGREGATES.get(option(argv[index + 1]))
            if aggregate is None:
                raise error(SYNTAX)
            request.aggregate = aggregate
            index += 2
        elif not store and not card and word == b"withscores":
            request.withscores = True
            index += 1
        elif card and word == b"limit" and left >= 2:
            limit_error = "ERR LIMIT can't be negative"
            request.limit = int_arg(argv[index + 1], limit_error)
            if request.limit < 0:
                raise error(limit_error)
            index += 2
        else:
            raise error(SYNTAX)
    return request


def _compute(request: _Request, op: Operation) -> SortedSet:
    try:
        if op == "diff":
            return SortedSet.diff(request.sets, raw=True)
        combine = SortedSet.union if op == "union" else SortedSet.inter
        return combine(request.sets, request.weights, request.aggregate, raw=True)
    except InvalidScoreError:  # pragma: no cover - weights are validated while parsing
        raise error("ERR weight value is not a float") from None


def _reply(op: Operation, ks: Keyspace, argv: list[bytes]) -> Reply:
    request = _parse(ks, argv, 1, op, store=False, card=False)
    return flatten(pairs(_compute(request, op).items()), request.withscores)


def _store(op: Operation, ks: Keyspace, argv: list[bytes]) -> Reply:
    request = _parse(ks, argv, 2, op, store=True, card=False)
    return store_result(ks, argv[1], _compute(request, op))


register_all(COMMANDS, -3, _reply, {"zunion": ("union",), "zinter": ("inter",), "zdiff": ("diff",)})
register_all(
    COMMANDS,
    -4,
    _store,
    {"zunionstore": ("union",), "zinterstore": ("inter",), "zdiffstore": ("diff",)},
)


@register(COMMANDS, "zintercard", -3)
def zintercard(ks: Keyspace, argv: list[bytes]) -> Reply:
    request = _parse(ks, argv, 1, "inter", store=False, card=True)
    size = len(_compute(request, "inter"))
    return size if request.limit == 0 else min(size, request.limit)
