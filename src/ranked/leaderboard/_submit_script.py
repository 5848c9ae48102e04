"""The Redis form of a board's submission: the ``submit`` script's arguments and the
decoding of its reply (the memory form is :mod:`._submit_reference`).

Bad input raises here, before anything is sent: a score that is not finite raises
:class:`~ranked.errors.InvalidScoreError`; an ``int`` a float64 would round, a composite
time outside its budget, or a non-integer composite score raises
:class:`~ranked.errors.OutOfRangeError`. Errors the script finds (an ``incr`` pushing a
composite score out of its budget, or to an inexact or infinite sum) come back as error
replies with a ``RANKED_...`` prefix, which the Redis backends map to the same types.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Final

from ..backends._scripts import Arg, Script, feature_script
from ..backends.checks import check_style, flag, not_negative, ttl_arg
from ..backends.procedure import Call, answer
from ..errors import InvalidScoreError
from ._composite import check_layout, integer_score, score_bounds, time_field
from ._requests import Composite, SubmitOutcome, SubmitRequest, exact_score

__all__ = ["submit_batch_call", "submit_call"]


def _submit() -> Script:
    """The ``submit`` script (read on first use: ``memory://`` never loads it)."""
    return feature_script("ranked.leaderboard", "submit")


def _finite(value: float, what: str) -> float:
    if isinstance(value, int):
        return exact_score(value) + 0.0  # OutOfRangeError for an int a float64 would round
    number = float(value)
    if not math.isfinite(number):
        raise InvalidScoreError(f"{what} {value!r} is not a finite number")
    return number + 0.0  # -0.0 + 0.0 == +0.0: never store -0


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
        not_negative(keep=request.keep)
    if request.operator not in _OPERATORS:
        raise ValueError(f"unknown operator {request.operator!r}")
    # The value goes as its canonical '%.17g' text (Python and Lua's C printf write the same
    # digits): the script reuses it as the companions' score text instead of formatting.
    args += (request.member, b"%.17g" % value, request.operator, flag(request.high_first))
    args += (check_style(request.style), b"" if request.keep is None else request.keep)
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
            args += (ttl_arg(target.ttl_ms), 0)
        else:
            keys.append(target.ties_key)
            args += (ttl_arg(target.ttl_ms), 1)


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


def submit_call(request: SubmitRequest) -> Call[tuple[SubmitOutcome, ...]]:
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
            check_style(request.style),
            ttl_arg(target.ttl_ms),
        ]
        keys = (target.key, target.dense_key, target.counts_key)
        return Call(_submit(), keys, args, _plain_outcome)
    all_keys: list[bytes] = []
    all_args: list[Arg] = [1]
    _encode_request(request, all_keys, all_args)
    return Call(_submit(), all_keys, all_args, _one_request(len(targets)))


def submit_batch_call(requests: Sequence[SubmitRequest]) -> Call[list[tuple[SubmitOutcome, ...]]]:
    """Script ``submit`` with every request, in order (one call)."""
    if not requests:
        return answer([])
    keys: list[bytes] = []
    args: list[Arg] = [len(requests)]
    for request in requests:
        _encode_request(request, keys, args)
    sizes = [len(request.targets) for request in requests]
    return Call(_submit(), keys, args, lambda flat: _outcomes(flat, sizes))
