"""Submissions: validate and build requests, read outcomes back, rehydrate trimmed members.

The hottest path (a one-member submission) is split into :meth:`Writes.prepare_one` and
:meth:`Writes.finish_single` so the shells call the backend directly, without a generator;
:func:`fan_out` prepares one score for many boards (``submit_to_boards_nonatomic``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import isfinite
from types import MappingProxyType
from typing import Any

from ..core._time import Instant
from ..core.lex import LEX_INT_MAX, LEX_INT_MIN
from ..core.models import Member
from ..errors import BoardConfigError, OutOfRangeError
from ._plan_core import PlanCore, Steps, _new, from_ms, member_bytes, to_ms
from ._plan_ties import tie_value_bytes
from ._plan_windows import Windows, WriteWindows
from ._requests import Operator, SubmitOutcome, SubmitRequest, incremented
from .config import _OPERATORS
from .results import Submission, WindowResult

__all__ = ["Prepared", "Writes", "check_tie", "fan_out", "one_instant"]

_frozen = MappingProxyType
"""A submission's windows: a read-only view of a dict no one else holds (results are
immutable; a caller's change cannot reach another result)."""


def check_tie(value: int) -> int:
    """A tie-break value: an int in the signed 64-bit range, else :class:`OutOfRangeError`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise OutOfRangeError(f"a tie-break value is an int, not {value!r}")
    if not LEX_INT_MIN <= value <= LEX_INT_MAX:
        raise OutOfRangeError(f"tie-break value {value} is outside the signed 64-bit range")
    return value


@dataclass(slots=True)
class Prepared:
    """The requests of one submission call, and how to read their outcomes back."""

    members: list[Member]
    requests: list[SubmitRequest]
    owners: list[int]
    """Index into ``members`` of each request (a rehydrated member has two)."""
    window_of: dict[bytes, str]
    primary: str
    register: list[str]
    lookup: bool


class Writes:
    """Submission steps of a board: prepare, finish, rehydrate (no I/O)."""

    def __init__(self, core: PlanCore, windows: Windows) -> None:
        self.core = core
        self.windows = windows

    def _head(
        self,
        operator: Operator | None,
        at: Instant | None,
        tie: int | None,
        at_ms: int | None = None,
    ) -> tuple[Operator, int, bytes | None, WriteWindows]:
        """What every submission call checks and resolves first: the operator, the
        instant (``at_ms``, Unix ms, when the caller has it so already), the tie value and
        the windows written."""
        core = self.core
        if core.lex is not None:
            raise BoardConfigError(
                "a lexicographic board takes submit_lex(member, fields), not submit"
            )
        if tie is not None and not core.secondary:
            raise BoardConfigError("tie= needs tie_break='secondary'")
        op = core.config.operator if operator is None else operator
        if op not in _OPERATORS:
            raise BoardConfigError(f"unknown operator {op!r}; expected one of {sorted(_OPERATORS)}")
        if at_ms is None:
            at_ms = core.now_ms() if at is None else to_ms(at)
        instant = at_ms
        if core.composite is not None:
            core.check_time(instant)
        tie_bytes = None
        if core.secondary:
            tie_bytes = tie_value_bytes(check_tie(instant if tie is None else tie))
        return op, instant, tie_bytes, self.windows.write_windows(instant)

    def prepare_one(
        self,
        member: Member,
        value: float,
        operator: Operator | None,
        at: Instant | None,
        tie: int | None = None,
    ) -> tuple[SubmitRequest, WriteWindows] | None:
        """The single backend request of a one-member submission, or None when it needs
        the general path (:meth:`prepare` then :meth:`submit_steps`: a window to
        register, or a trimmed-member lookup). Raises what :meth:`prepare` raises."""
        core = self.core
        op, instant, tie_bytes, windows = self._head(operator, at, tie)
        encoded = member.encode() if member.__class__ is str else member_bytes(member)
        if value.__class__ is float and core.layout is None and isfinite(value):
            stored = value  # the common case of core.value, without its calls
        else:
            stored = core.value(value, op)
        request = SubmitRequest(
            encoded,
            stored,
            op,
            core.high_first,
            windows.targets,
            core.style,
            instant,
            core.composite,
            core.trim_to,
            tie_bytes,
        )
        if windows.register or (core.on_trimmed_lookup is not None and op != "set"):
            return None
        return request, windows

    def finish_single(
        self, member: Member, windows: WriteWindows, outcomes: tuple[SubmitOutcome, ...]
    ) -> Submission:
        """The :class:`Submission` of a :meth:`prepare_one` request (the hot path)."""
        ids = windows.ids
        if len(ids) == 1 and len(outcomes) == 1 and self.core.layout is None:
            window_id = ids[0]
            outcome = outcomes[0]
            result = _new(
                WindowResult,
                (
                    window_id,
                    outcome.score,
                    outcome.previous_score,
                    outcome.rank,
                    outcome.previous_rank,
                    outcome.changed,
                ),
            )  # :meth:`_result` inlined: plain scores need no decoding
            return _new(Submission, (member, result, _frozen({window_id: result})))
        found = {
            window_id: self._result(window_id, outcome)
            for window_id, outcome in zip(ids, outcomes, strict=True)
        }
        return _new(Submission, (member, found[windows.primary], _frozen(found)))

    def prepare(
        self,
        items: Iterable[tuple[Member, float]],
        operator: Operator | None,
        at: Instant | None,
        tie: int | None = None,
        *,
        at_ms: int | None = None,
    ) -> Prepared:
        """The requests for submitting ``items`` (validated; nothing sent yet).

        ``tie``: the tie-break value of a secondary board (default: the instant in ms).
        ``at_ms``: the instant as Unix ms, in place of ``at`` (a journal event's).
        """
        core = self.core
        op, instant, tie_bytes, windows = self._head(operator, at, tie, at_ms)
        members: list[Member] = []
        requests: list[SubmitRequest] = []
        target_tuple = windows.targets
        high_first, style, composite, keep = (
            core.high_first,
            core.style,
            core.composite,
            core.trim_to,
        )
        for member, value in items:
            requests.append(
                SubmitRequest(
                    member_bytes(member),
                    core.value(value, op),
                    op,
                    high_first,
                    target_tuple,
                    style,
                    instant,
                    composite,
                    keep,
                    tie_bytes,
                )
            )
            members.append(member)
        lookup = core.on_trimmed_lookup is not None and op != "set" and bool(requests)
        return Prepared(
            members,
            requests,
            list(range(len(requests))),
            windows.window_of,
            windows.primary,
            windows.register,
            lookup,
        )

    def _result(self, window_id: str, outcome: SubmitOutcome) -> WindowResult:
        previous = outcome.previous_score
        core = self.core
        if core.layout is None:
            return _new(
                WindowResult,
                (
                    window_id,
                    outcome.score,
                    previous,
                    outcome.rank,
                    outcome.previous_rank,
                    outcome.changed,
                ),
            )
        return WindowResult(
            window_id,
            core.score_out(outcome.score),
            None if previous is None else core.score_out(previous),
            outcome.rank,
            outcome.previous_rank,
            outcome.changed,
        )

    def finish(
        self, prepared: Prepared, outcomes: Sequence[tuple[SubmitOutcome, ...]]
    ) -> list[Submission]:
        """Turn the backend's outcomes into one :class:`Submission` per submitted member."""
        self.windows.register(prepared.register)
        by_member: list[dict[str, WindowResult]] = [{} for _ in prepared.members]
        window_of = prepared.window_of
        for request, owner, results in zip(
            prepared.requests, prepared.owners, outcomes, strict=True
        ):
            found = by_member[owner]
            for target, outcome in zip(request.targets, results, strict=True):
                window_id = window_of[target.key]
                found[window_id] = self._result(window_id, outcome)
        primary = prepared.primary
        return [
            Submission(member, found[primary], _frozen(found))
            for member, found in zip(prepared.members, by_member, strict=True)
        ]

    def _rehydrate(self, prepared: Prepared, present: Sequence[float | None]) -> None:
        """Split the requests of absent members: the primary window starts from the hook's
        historical score, the other windows get the submission as it was."""
        core = self.core
        hook = core.on_trimmed_lookup
        assert hook is not None
        primary_key = core.keys.window(prepared.primary)
        requests: list[SubmitRequest] = []
        owners: list[int] = []
        for owner, request in zip(prepared.owners, prepared.requests, strict=True):
            historical = None if present[owner] is not None else hook(prepared.members[owner])
            if historical is None:
                requests.append(request)
                owners.append(owner)
                continue
            start = core.value(historical, "set")
            value = request.value
            operator: Operator
            if request.operator == "incr":
                operator, value = "incr", incremented(start, value)
            elif request.operator == "decr":
                operator, value = "incr", incremented(start, -value)
            else:  # best
                better = value > start if core.high_first else value < start
                operator, value = "best", value if better else start
            first = [t for t in request.targets if t.key == primary_key]
            rest = tuple(t for t in request.targets if t.key != primary_key)
            requests.append(
                SubmitRequest(
                    request.member, value, operator, request.high_first, tuple(first),
                    request.style, request.now_ms, request.composite, request.keep,
                    request.tie,
                )
            )  # fmt: skip
            owners.append(owner)
            if rest:
                request.targets = rest
                requests.append(request)
                owners.append(owner)
        prepared.requests, prepared.owners = requests, owners

    def submit_steps(self, prepared: Prepared) -> Steps[list[Submission]]:
        """The general submission: rehydration lookup, one atomic backend call for every
        request, then the registration of new windows.

        The registry is written after the submission succeeded, so a refused submission
        (a bad ``incr`` result, a key of another type) changes nothing at all. A window
        whose registration is then lost (the connection drops in between) is still
        cleared by its TTL; the all-time and current windows are always cleared."""
        if prepared.lookup:
            primary = self.windows.target(prepared.primary)
            members = [request.member for request in prepared.requests]
            present: list[float | None] = yield ("scores", (primary.key, members))
            self._rehydrate(prepared, present)
        if len(prepared.requests) == 1:
            outcome = yield ("submit", (prepared.requests[0],))
            outcomes = [outcome]
        else:
            outcomes = yield ("submit_batch", (prepared.requests,))
        if prepared.register:
            yield ("set_add", (self.core.registry_key, [w.encode() for w in prepared.register]))
        return self.finish(prepared, outcomes)


def one_instant(plans: Sequence[Any], at: Instant | None) -> Instant | None:
    """The instant of a fan-out: ``at``, else the first board's now (None: no boards)."""
    if at is not None or not plans:
        return at
    return from_ms(plans[0].core.now_ms())


def fan_out(
    boards: Sequence[Writes],
    member: Member,
    score: float,
    operator: Operator | None,
    at: Instant | None,
) -> list[Steps[list[Submission]]]:
    """The submission of one score to each of ``boards``: its steps, per board, prepared
    (every argument checked, nothing sent yet).

    One instant is used for every board (``at``, else the first board's now), so the
    windows agree. Every board checks the arguments before any board writes: a value one
    board refuses (a bad operator, a score outside its time tie-break budget) changes no
    board.
    """
    if not boards:
        return []
    when: Instant = at if at is not None else from_ms(boards[0].core.now_ms())
    prepared = [board.prepare(((member, score),), operator, when) for board in boards]
    return [board.submit_steps(ready) for board, ready in zip(boards, prepared, strict=True)]
