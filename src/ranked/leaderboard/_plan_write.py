"""Submissions: validate and build requests, read outcomes back, rehydrate trimmed members."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import isfinite
from types import MappingProxyType

from ..core._time import Instant
from ..core.lex import LEX_INT_MAX, LEX_INT_MIN
from ..core.models import Member
from ..errors import BoardConfigError, OutOfRangeError, WindowError
from ._plan_core import (
    PlanCore,
    Steps,
    WriteWindows,
    _new,
    from_ms,
    member_bytes,
    to_ms,
)
from ._plan_ties import tie_value_bytes
from ._requests import Operator, SubmitOutcome, SubmitRequest, Target, incremented
from .config import _OPERATORS
from .results import Submission, WindowResult

__all__ = ["Prepared", "WritePlan", "check_tie"]

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


class WritePlan(PlanCore):
    """Submission steps of a board: prepare, finish, rehydrate."""

    # -- submissions --------------------------------------------------------------------

    def is_registered(self, window_id: str) -> bool:
        """Whether this board has put ``window_id`` in its registry (since the last clear)."""
        return window_id in self._registered

    def write_windows(self, instant: int) -> WriteWindows:
        """The targets a submission at ``instant`` writes (with TTLs), the window id of
        each, the windows to register, and the primary window id; cached (see
        :class:`WriteWindows`), as windows only change at their boundaries."""
        cached = self._write_cache
        deadline = self.deadline_ms
        if (
            cached is not None
            and cached.low <= instant < cached.high
            and cached.deadline == deadline
            and not cached.register
        ):
            if cached.now is None:
                return cached
            backend_now = self.backend_now_ms()
            if cached.now == backend_now:
                return cached
        else:
            backend_now = self.backend_now_ms()
        targets: list[Target] = []
        ids: list[str] = []
        window_of: dict[bytes, str] = {}
        register: list[str] = []
        timed = deadline is not None
        for slot in self._slots_at(instant):
            target = slot.target
            ttl: int | None = None
            if slot.end_ms is not None:
                timed = True
                ttl = slot.end_ms + self.retention_ms - backend_now
                if ttl <= 0:
                    continue  # past its retention: the key is (or is about to be) gone
            if deadline is not None:
                ttl = max(1, min(deadline - backend_now, ttl if ttl is not None else 1 << 62))
            if ttl is not None:
                target = Target(
                    target.key, target.dense_key, target.counts_key, ttl, target.ties_key
                )
            targets.append(target)
            ids.append(slot.window_id)
            window_of[target.key] = slot.window_id
            if slot.window_id not in self._registered:
                register.append(slot.window_id)
        if not targets:
            raise WindowError(
                f"every window of {from_ms(instant).isoformat()} is past its retention; "
                "nothing would be written"
            )
        primary = self._default_id(instant)
        if self.keys.window(primary) not in window_of:
            primary = ids[0]
        assert self._slots is not None  # filled by _slots_at above
        low, high = self._slots[0], self._slots[1]
        found = WriteWindows(
            low,
            high,
            backend_now if timed else None,
            deadline,
            tuple(targets),
            tuple(ids),
            window_of,
            register,
            primary,
        )
        self._write_cache = found
        return found

    def window_targets(self, instant: int) -> tuple[list[Target], dict[bytes, str], list[str], str]:
        """:meth:`write_windows` as (targets, window id per key, to register, primary)."""
        found = self.write_windows(instant)
        return list(found.targets), found.window_of, found.register, found.primary

    def _head(
        self, operator: Operator | None, at: Instant | None, tie: int | None
    ) -> tuple[Operator, int, bytes | None, WriteWindows]:
        """What every submission call checks and resolves first: the operator, the
        instant, the tie value and the windows written."""
        if self.lex is not None:
            raise BoardConfigError(
                "a lexicographic board takes submit_lex(member, fields), not submit"
            )
        if tie is not None and not self.secondary:
            raise BoardConfigError("tie= needs tie_break='secondary'")
        op = self.config.operator if operator is None else operator
        if op not in _OPERATORS:
            raise BoardConfigError(f"unknown operator {op!r}; expected one of {sorted(_OPERATORS)}")
        instant = self.now_ms() if at is None else to_ms(at)
        if self.composite is not None:
            self._check_time(instant)
        tie_bytes = None
        if self.secondary:
            tie_bytes = tie_value_bytes(check_tie(instant if tie is None else tie))
        return op, instant, tie_bytes, self.write_windows(instant)

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
        op, instant, tie_bytes, windows = self._head(operator, at, tie)
        encoded = member.encode() if member.__class__ is str else member_bytes(member)
        if value.__class__ is float and self.layout is None and isfinite(value):
            stored = value  # the common case of _value, without its calls
        else:
            stored = self._value(value, op)
        request = SubmitRequest(
            encoded,
            stored,
            op,
            self.high_first,
            windows.targets,
            self.style,
            instant,
            self.composite,
            self.trim_to,
            tie_bytes,
        )
        if windows.register or (self.on_trimmed_lookup is not None and op != "set"):
            return None
        return request, windows

    def finish_single(
        self, member: Member, windows: WriteWindows, outcomes: tuple[SubmitOutcome, ...]
    ) -> Submission:
        """The :class:`Submission` of a :meth:`prepare_one` request (the hot path)."""
        ids = windows.ids
        if len(ids) == 1 and len(outcomes) == 1 and self.layout is None:
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
    ) -> Prepared:
        """The requests for submitting ``items`` (validated; nothing sent yet).

        ``tie``: the tie-break value of a secondary board (default: the instant in ms).
        """
        op, instant, tie_bytes, windows = self._head(operator, at, tie)
        members: list[Member] = []
        requests: list[SubmitRequest] = []
        target_tuple = windows.targets
        high_first, style, composite, keep = (
            self.high_first,
            self.style,
            self.composite,
            self.trim_to,
        )
        for member, value in items:
            requests.append(
                SubmitRequest(
                    member_bytes(member),
                    self._value(value, op),
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
        lookup = self.on_trimmed_lookup is not None and op != "set" and bool(requests)
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
        if self.layout is None:
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
            self.score_out(outcome.score),
            None if previous is None else self.score_out(previous),
            outcome.rank,
            outcome.previous_rank,
            outcome.changed,
        )

    def _register(self, window_ids: list[str]) -> None:
        if window_ids:
            self._registered.update(window_ids)
            self._write_cache = None  # its register list is stale now

    def finish(
        self, prepared: Prepared, outcomes: Sequence[tuple[SubmitOutcome, ...]]
    ) -> list[Submission]:
        """Turn the backend's outcomes into one :class:`Submission` per submitted member."""
        self._register(prepared.register)
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
        hook = self.on_trimmed_lookup
        assert hook is not None
        primary_key = self.keys.window(prepared.primary)
        requests: list[SubmitRequest] = []
        owners: list[int] = []
        for owner, request in zip(prepared.owners, prepared.requests, strict=True):
            historical = None if present[owner] is not None else hook(prepared.members[owner])
            if historical is None:
                requests.append(request)
                owners.append(owner)
                continue
            start = self._value(historical, "set")
            value = request.value
            operator: Operator
            if request.operator == "incr":
                operator, value = "incr", incremented(start, value)
            elif request.operator == "decr":
                operator, value = "incr", incremented(start, -value)
            else:  # best
                better = value > start if self.high_first else value < start
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
            primary = self.target(prepared.primary)
            members = [request.member for request in prepared.requests]
            present: list[float | None] = yield ("scores", (primary.key, members))
            self._rehydrate(prepared, present)
        if len(prepared.requests) == 1:
            outcome = yield ("submit", (prepared.requests[0],))
            outcomes = [outcome]
        else:
            outcomes = yield ("submit_batch", (prepared.requests,))
        if prepared.register:
            yield ("set_add", (self.registry_key, [w.encode() for w in prepared.register]))
        return self.finish(prepared, outcomes)
