"""A journaled board's writes, sans I/O: the events of each write call, and the steps that
apply an append's events to the index exactly once, in order.

Every event of a board carries ``board_seq`` (1, 2, 3, ... per board, given by the
journal). The index holds, under ``<prefix>:seq``, the ``board_seq`` of the last event
it applied, recorded atomically with that event's effect (:mod:`ranked.backends.sequenced`):

- a submission (every operator, batches too) is one atomic step: the ``submit`` script
  runs only when the index holds the event before it and records its number in the same
  script (on ``memory://`` under the same lock);
- every other write (remove, clear, member data, friends, metadata, expiry, lex writes) is
  idempotent, made of several steps: the index's number is read first, the steps run,
  then the number is recorded. A crash in between replays the whole call: the same
  result.

An append whose events the index already holds answers :data:`APPLIED`; an index that
lacks earlier events answers a :class:`~ranked.backends.sequenced.Gap` naming the last
one it holds (the board applies the missing events from the journal first, then this
append again).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Final, cast

from ..backends.sequenced import APPLIED, Applied, Gap
from ..core._time import UNIX_EPOCH
from ..core.models import Member
from ..core.windows import WindowKind
from ..engine import _skiplist_snapshot as snapshot_format
from ..journal.events import Event, NewEvent
from ..journal.store import JournalStore
from ._config_json import to_json
from ._journal_events import (
    SUBMITS,
    Decoded,
    decode,
    friends_value,
    json_value,
    lex_value,
    submit_event,
)
from ._plan import BoardPlan
from ._plan_core import Steps, from_ms, member_bytes, to_ms
from ._plan_lex import LexFields
from ._plan_write import Prepared
from ._requests import Operator, SubmitRequest
from .results import HistoryEntry

__all__ = ["APPLIED", "Gap", "Journaling"]

_SEQUENCED: Final = {"submit": "submit_seq", "submit_batch": "submit_batch_seq"}
"""The steps that apply a submission, and their sequenced twins."""


def _key(key: str | None, index: int, count: int) -> str | None:
    """The idempotency key of event ``index`` of an append of ``count`` events."""
    if key is None or count == 1:
        return key
    return f"{key}#{index}"


class Journaling:
    """The journal side of one board's plan (no I/O)."""

    def __init__(self, plan: BoardPlan, store: JournalStore | None = None) -> None:
        self.plan = plan
        self.store = store
        self.applying = 0
        """The ``board_seq`` of the event being applied (applies run one at a time)."""
        core = plan.core
        self.board: str = core.config.name
        self.seq_key: bytes = core.keys.prefix + b":seq"
        self.prefix: bytes = core.keys.prefix

    # -- the events of each write call (arguments checked; nothing written) ---------------

    def submit(
        self,
        items: Iterable[tuple[Member, float]],
        operator: Operator | None,
        at: Any,
        tie: int | None,
        key: str | None,
        actor: str | None = None,
        reason: str | None = None,
    ) -> tuple[list[NewEvent], Prepared]:
        """The events of a submission call and its prepared requests (the live write
        applies them without preparing again). ``actor`` / ``reason`` go in every event
        (notes for readers of the journal; replay ignores them)."""
        core = self.plan.core
        pairs = list(items)
        at_ms = core.now_ms() if at is None else to_ms(at)
        op = core.config.operator if operator is None else operator
        prepared: Prepared = self.plan.writes.prepare(pairs, op, None, tie, at_ms=at_ms)
        count = len(pairs)
        events = [
            submit_event(
                self.board,
                request.member,
                score,
                op,
                at_ms,
                tie,
                _key(key, i, count),
                count if i == 0 else 1,
                actor,
                reason,
            )
            for i, (request, (_member, score)) in enumerate(
                zip(prepared.requests, pairs, strict=True)
            )
        ]
        return events, prepared

    def event(
        self,
        operation: str,
        member: Member | None = None,
        value: bytes = b"",
        key: str | None = None,
        actor: str | None = None,
        reason: str | None = None,
    ) -> NewEvent:
        """The event of one call that is not a submission."""
        return NewEvent(
            board=self.board,
            operation=operation,
            member=None if member is None else member_bytes(member),
            value=value,
            at_us=self.plan.core.now_ms() * 1000,
            key=key,
            actor=actor,
            reason=reason,
        )

    def config_event(self) -> NewEvent:
        """The event recording the board's configuration (see :mod:`._config_json`)."""
        return self.event("config", None, json_value(to_json(self.plan.core.config)))

    def lex_event(
        self, member: Member, fields: LexFields, operator: Operator | None, at: Any
    ) -> NewEvent:
        core = self.plan.core
        op = core.config.operator if operator is None else operator
        at_ms = core.now_ms() if at is None else to_ms(at)
        values = fields if isinstance(fields, int) else list(fields)
        return NewEvent(
            board=self.board,
            operation="lex",
            member=member_bytes(member),
            value=lex_value(values, op),
            at_us=at_ms * 1000,
        )

    @staticmethod
    def friends(friends: Iterable[Member]) -> bytes:
        return friends_value(member_bytes(friend) for friend in friends)

    @staticmethod
    def json(value: Mapping[str, Any] | None) -> bytes:
        return json_value(value)

    @staticmethod
    def checked(steps: Steps[Any]) -> None:
        """Run a call's plan up to its first step (every argument is checked there),
        then drop it: a bad argument raises before anything is journaled."""
        try:
            next(steps)
        except StopIteration:
            pass
        finally:
            steps.close()

    def can_rehydrate(self) -> bool:
        """True when the journal can fill the board's trim hook: a board with ``keep``,
        whose primary window is all-time and whose scores are plain."""
        core = self.plan.core
        config = core.config
        return (
            self.store is not None
            and config.keep is not None
            and config.windows.kinds[:1] == (WindowKind.ALL_TIME,)
            and core.lex is None
            and core.composite is None
        )

    def trimmed_score(self, member: Member) -> float | None:
        """The trim hook filled from the journal: the member's all-time score as the
        journal had it before the event being applied (its submissions folded in order
        since the last clear and its last removal), None when it has none. One read of
        the member's events (``JournalStore.member_events``: its cost is the store's)."""
        store = self.store
        assert store is not None
        before = self.applying
        since = store.last_clear(self.board, before)
        high_first = self.plan.core.high_first
        score: float | None = None
        for event in store.member_events(self.board, member_bytes(member)):
            if event.board_seq >= before:
                break
            if event.board_seq < since:
                continue
            operation, value = event.operation, event.score
            if operation == "remove":
                score = None
            elif value is None:
                continue
            elif operation == "incr":
                score = (0.0 if score is None else score) + value
            elif operation == "decr":
                score = (0.0 if score is None else score) - value
            elif operation == "set" or score is None:
                score = value
            elif operation == "best":
                score = max(score, value) if high_first else min(score, value)
        return score

    def history(self, member: Member, limit: int | None) -> list[HistoryEntry]:
        """The member's journaled writes, oldest first (at most ``limit``)."""
        store = self.store
        assert store is not None
        events = store.member_events(self.board, member_bytes(member), limit)
        return [
            HistoryEntry(
                e.seq,
                UNIX_EPOCH + timedelta(microseconds=e.at_us),
                e.operation,
                e.score,
                e.key,
                e.actor,
                e.reason,
            )
            for e in events
        ]

    def bulk_load(self) -> Steps[int | None]:
        """Rebuild the board in an index that holds nothing of it by the engine's bulk
        load: its scores folded by the journal store, then loaded in one step with the
        number of the last event folded. For a board whose only window is all-time,
        ordered by member on ties, with no trim, no lex or composite scores, and whose
        events are all of one fold (see ``JournalStore.aggregate_scores``); the number
        loaded, or None when the board needs a replay (the backend has no bulk load:
        Redis)."""
        core = self.plan.core
        config = core.config
        plain = (
            config.windows.kinds == (WindowKind.ALL_TIME,)
            and not config.windows.seasons
            and config.tie_break == "member"
            and config.keep is None
            and core.on_trimmed_lookup is None
        )
        if not plain or self.store is None:
            return None
        folded = self.store.aggregate_scores(self.board, core.high_first)
        if folded is None:
            return None
        last, pairs = folded
        yield ("load_sorted", (core.keys.window("all"), self.seq_key, b"%d" % last, pairs))
        return last

    # -- archives of closed windows ---------------------------------------------------------

    @staticmethod
    def archive_key(window_id: str) -> str:
        """The idempotency key of a window's archive event (a window is archived once)."""
        return f"archive:{window_id}"

    def closed_windows(self, registered: Iterable[bytes], now_ms: int) -> list[str]:
        """The registered windows of this board that have ended at ``now_ms``."""
        plan = self.plan.windows.kept
        closed = []
        for raw in sorted(registered):
            window_id = raw.decode()
            if window_id == "all":
                continue
            window = plan.window_for_id(window_id)
            if window.is_closed(from_ms(now_ms)):
                closed.append(window_id)
        return closed

    def archive_steps(self, window_id: str) -> Steps[NewEvent | None]:
        """Read a closed window's final standings and make its archive event: ``value``
        the standings as an engine snapshot (ascending (score, member) pairs), None when
        the window holds nothing (its key expired, or it was never written)."""
        core = self.plan.core
        target = self.plan.windows.target(window_id)
        size: int = yield ("count", (target.key,))
        if not size:
            return None
        rows: list[Any] = yield ("page", (target, 0, size - 1, False, core.style))
        pairs = [(row[0], row[1]) for row in rows]
        return NewEvent(
            board=self.board,
            operation="archive",
            value=snapshot_format.encode(len(pairs), pairs),
            at_us=core.now_ms() * 1000,
            key=self.archive_key(window_id),
        )

    def archived_pairs(self, window_id: str) -> list[tuple[bytes, float]] | None:
        """A window's archived standings (ascending pairs), None when it has no archive;
        without the members removed since it was archived (a removal takes a member off
        every window, a closed one too)."""
        store = self.store
        assert store is not None
        event = store.event_by_key(self.board, self.archive_key(window_id))
        if event is None:
            return None
        pairs: list[tuple[bytes, float]] = snapshot_format.decode(event.value)
        removed = store.removed_after(self.board, event.seq)
        return [pair for pair in pairs if pair[0] not in removed] if removed else pairs

    # -- rebuilding one window ------------------------------------------------------------

    def window_events(self, window_id: str) -> Callable[[Event], bool] | None:
        """Which events can change window ``window_id`` (None: every event, all-time):
        those at or after its start, and of those, submissions only before its end (a
        submission counts in the windows of its instant; a removal or a clear later on
        still changes the window)."""
        window = self.plan.windows.kept.window_for_id(window_id)
        if window.start is None or window.end is None:
            return None
        start_us, end_us = to_ms(window.start) * 1000, to_ms(window.end) * 1000

        def select(event: Event) -> bool:
            if event.at_us < start_us:
                return False
            return event.at_us < end_us or event.operation not in SUBMITS

        return select

    def window_keys(self, window_id: str, staging: Journaling) -> list[tuple[bytes, bytes]]:
        """The keys of window ``window_id`` as (``staging``'s, this board's) pairs."""
        ours, theirs = self.plan.core.keys, staging.plan.core.keys
        return [
            (theirs.window(window_id), ours.window(window_id)),
            (theirs.dense(window_id), ours.dense(window_id)),
            (theirs.dense_counts(window_id), ours.dense_counts(window_id)),
            (theirs.ties(window_id), ours.ties(window_id)),
        ]

    def reset(self) -> Steps[None]:
        """Delete the board from the index, with the number of the last event applied."""
        yield from self.plan.life.clear()
        yield ("delete", ([self.seq_key],))

    # -- applying -------------------------------------------------------------------------

    def apply(self, records: Sequence[Event], prepared: Prepared | None = None) -> Steps[Any]:
        """Apply the events of one append (in ``board_seq`` order) to the index: the
        call's result, :data:`APPLIED` when the index holds them already, or a
        :class:`Gap` when it lacks earlier events. ``prepared``: the live call's requests
        (else prepared from the events, with the same arguments)."""
        first = records[0]
        after, last = first.board_seq - 1, records[-1].board_seq
        self.applying = first.board_seq
        call = decode(first)
        if call.operation in SUBMITS:
            if prepared is None:
                calls = [decode(record) for record in records]
                items = [(_member(c), c.score) for c in calls]
                operator = cast(Operator, call.operation)
                prepared = self.plan.writes.prepare(
                    cast(list[tuple[Member, float]], items),
                    operator,
                    None,
                    call.tie,
                    at_ms=call.at_ms,
                )
            return (
                yield from self._sequenced(self.plan.writes.submit_steps(prepared), after, last)
            )
        return (yield from self._recorded(self._call(call), after, last))

    def direct(
        self, records: Sequence[Event], prepared: Prepared | None
    ) -> tuple[bytes, int, int, SubmitRequest] | None:
        """The arguments of the one sequenced ``submit`` step that applies a live
        submission of one member with nothing else to do (no window to register, no
        trimmed-member lookup): the hot path, without a plan to drive; None otherwise."""
        if prepared is None or len(prepared.requests) != 1 or prepared.register or prepared.lookup:
            return None
        first = records[0]
        return self.seq_key, first.board_seq - 1, first.board_seq, prepared.requests[0]

    def finish_direct(self, prepared: Prepared | None, answer: Any) -> Any:
        """The result of a :meth:`direct` step's answer (APPLIED and Gap as they are)."""
        if isinstance(answer, Applied | Gap):
            return answer
        assert prepared is not None
        return self.plan.writes.finish(prepared, [answer])

    def _call(self, call: Decoded) -> Steps[Any]:
        """The plan of a call that is not a submission."""
        plan, payload = self.plan, call.payload
        member = b"" if call.member is None else call.member
        operation = call.operation
        if operation == "lex":
            fields, operator = payload
            return plan.lex.submit_steps(((member, fields),), operator, from_ms(call.at_ms))
        if operation == "remove":
            return plan.life.remove(member)
        if operation == "clear":
            return plan.life.clear()
        if operation == "expire":
            return plan.life.expire_at(payload)
        if operation == "member_data":
            return plan.social.set_member_data(member, payload["name"], payload["meta"])
        if operation == "friends_add":
            return plan.social.add_friends(member, payload)
        if operation == "friends_remove":
            return plan.social.remove_friends(member, payload)
        if operation == "metadata":
            return plan.social.set_metadata(payload)
        if operation == "metadata_merge":
            return plan.social.merge_metadata(payload)
        return _nothing()  # config, archive: recorded, not applied

    def _sequenced(self, steps: Steps[Any], after: int, last: int) -> Steps[Any]:
        """``steps`` with their one submission step run sequenced (atomic with the
        index's record of ``last``)."""
        try:
            name, args = next(steps)
            while True:
                twin = _SEQUENCED.get(name)
                if twin is None:
                    answer = yield (name, args)
                else:
                    answer = yield (twin, (self.seq_key, after, last, *args))
                    if isinstance(answer, Applied):
                        steps.close()
                        return APPLIED
                    if isinstance(answer, Gap):
                        steps.close()
                        return answer
                name, args = steps.send(answer)
        except StopIteration as done:
            return done.value

    def _recorded(self, steps: Steps[Any], after: int, last: int) -> Steps[Any]:
        """An idempotent call's ``steps`` between a check and a record of the index's
        number."""
        applied: int = yield ("read_seq", (self.seq_key,))
        if applied >= last:
            steps.close()
            return APPLIED
        if applied != after:
            steps.close()
            return Gap(applied)
        result = yield from steps
        yield ("record_seq", (self.seq_key, after, last))
        return result


def _member(call: Decoded) -> bytes:
    assert call.member is not None, call
    return call.member


def _nothing() -> Steps[None]:
    return None
    yield  # a generator that yields no step
