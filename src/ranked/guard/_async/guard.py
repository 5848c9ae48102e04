"""``AsyncGuard``: the write guard on any asyncio board; the source of the blocking
``Guard`` (``_sync/guard.py``, generated from this file).

A guarded submission runs the cheap checks in the process first (trusted-only, bounds,
the HMAC, the clock skew: no I/O), then every stateful layer in one atomic backend step
(ban list, rate limits, nonce, velocity, z-score, pending tier: one Lua script on Redis,
its twin under the lock on memory; see :mod:`.._procedures`), then, when accepted, the
board's own submission (one more step, the board's). A refused submission writes nothing
to the board and records no nonce. Verdicts go to the board's journal, in its audit
stream (:mod:`.._audit`).
"""

from __future__ import annotations

import contextlib
import json
import math
import secrets
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from ...backends.base import AsyncBackend
from ...backends.generic import HASH_GET, HASH_SET, SET_ADD, SET_MEMBERS, SET_REMOVE
from ...backends.procedure import AsyncBound, Operation
from ...errors import GuardArgumentError, GuardConfigError, PendingNotFoundError
from ...journal.aio import AsyncAppender
from ...journal.events import NewEvent
from ...journal.store import JournalStore
from ...leaderboard import AsyncLeaderboard
from ...ratelimit import Decision
from ...ratelimit.keys import SUFFIXES
from .. import _procedures as steps
from .._audit import Restored as _Restored
from .._audit import accepted_note, verdict_event, verdicts
from .._hooks import acall_validator, apost_webhook, record_now, validate_later, wait_tasks
from .._keys import GuardKeys, member_bytes
from .._native import Front
from ..config import GuardConfig
from ..signing import check_nonce, verifier
from ..verdict import REASONS, AuditRecord, PendingEntry, Verdict, accepted

__all__ = ["AsyncGuard", "Validator"]

Validator = Callable[[PendingEntry], Any]
"""A held submission -> True (promote), False or a str (reject, the str the reason), None
(leave it pending); may be a coroutine function on the asyncio guard."""

TRUSTED_SCOPES = frozenset(("write", "admin"))
"""The key scopes of trusted writers (server identities)."""


class _Board:
    """One board's guard state: its keys and its bound steps (bound once)."""

    __slots__ = (
        "args_of",
        "ban",
        "banned",
        "check",
        "claim",
        "front",
        "keys",
        "keys_of",
        "list",
        "read_hash",
        "restored",
        "steps",
        "unban",
        "window_key",
        "write_hash",
    )

    def __init__(self, backend: AsyncBackend, board: AsyncLeaderboard, config: GuardConfig):
        self.keys = GuardKeys(board.name, board.config.namespace)
        self.steps = _Steps(board, config, self.keys)
        self.keys_of = self.steps.keys_of
        self.args_of = self.steps.args_of
        self.front = self.steps.front
        self.window_key = self.steps.window_key
        operation = steps.check_operation(config.player_limit, config.ip_limit)
        self.check: AsyncBound[steps.Checked] = backend.bind(operation)
        self.claim: AsyncBound[bytes | None] = backend.bind(steps.claim_operation())
        self.list: AsyncBound[dict[bytes, bytes]] = backend.bind(Operation.raw(steps.PENDING))
        self.ban: AsyncBound[int] = backend.bind(SET_ADD)
        self.unban: AsyncBound[int] = backend.bind(SET_REMOVE)
        self.banned: AsyncBound[set[bytes]] = backend.bind(SET_MEMBERS)
        self.read_hash: AsyncBound[list[bytes | None]] = backend.bind(HASH_GET)
        self.write_hash: AsyncBound[None] = backend.bind(HASH_SET)
        self.restored = False
        """Whether this guard has seen the board's state restored (see ``restore``)."""


_CACHED_MEMBERS = 4096


class _Steps:
    """One board's check arguments: the static part built once, the keys of recent
    members cached (the hot path builds no key it built lately)."""

    def __init__(self, board: AsyncLeaderboard, config: GuardConfig, keys: GuardKeys) -> None:
        if config.pending_rank is not None and board.config.tie_break not in (
            "member",
            "secondary",
        ):
            # a composite or lexicographic board stores encoded scores: ZCOUNT over the
            # client's score would not give its rank
            raise GuardConfigError(
                f"pending_rank needs a board with plain scores; {board.name!r} has a"
                " composite or lexicographic tie-break"
            )
        self.config = config
        self._keys = keys
        self._tiered = config.pending_rank is not None
        # without a pending tier the step reads no window: any key of the slot stands in
        self._window: tuple[str, bytes] = ("", keys.held)
        self._members: dict[bytes, list[bytes]] = {}
        self._player_head = keys.player(b"")
        none: tuple[bytes, tuple[bytes, ...]] = (b"", ())
        player_limit, ip_limit = config.player_limit, config.ip_limit
        self._rp = none if player_limit is None else keys.limiter_parts(b"rp", player_limit)
        self._ri = none if ip_limit is None else keys.limiter_parts(b"ri", ip_limit)
        self._ips: dict[str, tuple[bytes, ...]] = {}
        span_us = 0 if config.change_span is None else round(config.change_span * 1e6)
        high = b"1" if board.config.higher_is_better else b"0"
        self._operator = board.config.operator.encode()
        player, by_ip = config.player_limit, config.ip_limit
        self._player_keys = 0 if player is None else len(SUFFIXES[player.algorithm])
        self._ip_keys = 0 if by_ip is None else len(SUFFIXES[by_ip.algorithm])
        limits = (*steps.limiter_params(player), *steps.limiter_params(by_ip))
        self._client = (
            b"" if config.max_step is None else config.max_step,
            span_us,
            b"" if config.max_change is None else config.max_change,
            b"" if config.z_threshold is None else config.z_threshold,
            config.z_min_history,
            config.pending_rank or 0,
            high,
            b"",
            b"",
        )
        self._trusted = (b"", 0, b"", b"", config.z_min_history, 0, high, b"", b"")
        self._limits = limits
        self._ttl = config.nonce_ttl_ms
        self.front = (
            None
            if Front is None or not _exact_bounds(config)
            else Front(
                verifier(config.secrets) if config.signed else None,
                config.trusted_only,
                config.min_score,
                config.max_score,
                config.skew,
                board.name,
                self._player_head,
                keys.prefix + b":n:",
                keys.held,
                keys.banned,
                None if player_limit is None else self._rp,
                None if ip_limit is None else self._ri,
                self._client,
                limits,
                self._operator,
                self._ttl,
            )
        )
        """The in-process stage of a client's common submission in one C call (see
        ``_front.c``): its keys and arguments, or None for the Python path."""

    def window_key(self, board: AsyncLeaderboard) -> bytes:
        """The pending tier's window (the primary window open now); any key of the
        slot without a tier."""
        if self._tiered:
            window_id = board.window_id()
            if window_id != self._window[0]:
                self._window = (window_id, self._keys.board.window(window_id))
        return self._window[1]

    def keys_of(
        self,
        board: AsyncLeaderboard,
        who: bytes,
        nonce: str | None,
        ip: str | None,
        trusted: bool,
    ) -> list[bytes]:
        """The check's keys: O(1) for a member seen lately."""
        keys = self._keys
        window = self.window_key(board)
        base = self._members.get(who)
        if base is None:
            base = [self._player_head + who]
            head, suffixes = self._rp
            base += [head + who + suffix for suffix in suffixes]
            if len(self._members) >= _CACHED_MEMBERS:
                self._members.clear()
            self._members[who] = base
        player = base[0]
        found = [
            player,
            player if nonce is None else keys.nonce(nonce),
            window,
            keys.held,
            keys.banned,
        ]
        if not trusted:
            found += base[1:]
            by_ip = self.config.ip_limit
            if by_ip is not None and ip is not None:
                ip_keys = self._ips.get(ip)
                if ip_keys is None:
                    head, suffixes = self._ri
                    ip_keys = tuple(head + ip.encode() + suffix for suffix in suffixes)
                    if len(self._ips) >= _CACHED_MEMBERS:
                        self._ips.clear()
                    self._ips[ip] = ip_keys
                found += ip_keys
        return found

    def args_of(
        self,
        who: bytes,
        score: float,
        use_nonce: bool,
        trusted: bool,
        has_ip: bool,
        operator: str | None,
    ) -> list[Any]:
        """The check's arguments (after the instant)."""
        if trusted:
            counts: tuple[int, int] = (0, 0)
        else:
            counts = (self._player_keys, self._ip_keys if has_ip else 0)
        return [
            who,
            score,
            self._ttl if use_nonce else 0,
            *(self._trusted if trusted else self._client),
            *counts,
            *self._limits,
            self._operator if operator is None else operator.encode(),
        ]


class _Sent(NamedTuple):
    """What the writer sent with a submission, as the verdict's records keep it."""

    member: str | bytes
    score: float
    client_time: int | None
    nonce: str | None
    ip: str | None
    key_scope: str | None
    payload: str | None
    """The replay payload as JSON text."""
    operator: str | None


def _exact_bounds(config: GuardConfig) -> bool:
    """Whether the bounds compare as doubles exactly as given (what the C stage does)."""
    return all(b is None or float(b) == b for b in (config.min_score, config.max_score))


def _detail(
    ip: str | None, scope: str | None, nonce: str | None, z: float | None, rank: int | None
) -> dict[str, Any]:
    """A verdict's detail for its journal record (the keys :func:`accepted_note` writes)."""
    return {"ip": ip, "scope": scope, "nonce": nonce, "z": z, "rank": rank}


def _tightest(checked: steps.Checked) -> Decision | None:
    """The rate-limit decision a verdict carries: the one that refused, else the one with
    the fewest remaining (the member's on a tie), None when no limit ran."""
    player, by_ip = checked.player, checked.ip
    if by_ip is None or (player is not None and not player.allowed):
        return player
    if player is None or not by_ip.allowed or by_ip.remaining < player.remaining:
        return by_ip
    return player


def _rejected(reason: str, message: str | None = None, **rest: Any) -> Verdict:
    return Verdict("rejected", reason, message or REASONS[reason], **rest)


def _check_score(score: object) -> float:
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise GuardArgumentError(f"score must be a number, not {type(score).__name__}")
    try:
        value = float(score)
    except OverflowError:  # an int past the doubles
        raise GuardArgumentError("score must be a finite number, not an int this large") from None
    if not math.isfinite(value):
        raise GuardArgumentError(f"score must be finite, not {score!r}")
    return value


class AsyncGuard:
    """A board's write guard (see :class:`~ranked.guard.GuardConfig` for the layers).

    One guard serves any number of boards with one configuration (the service keeps one
    per board). ``clock``: Unix seconds for the skew window, the instants of held
    submissions and every stateful layer (None: the system clock in the process, and
    the backend's clock in the step: on Redis the server's ``TIME``). ``validator``:
    called for every held submission (see :data:`Validator`); with
    ``config.webhook`` the webhook is asked when there is no validator.
    """

    def __init__(
        self,
        config: GuardConfig,
        *,
        clock: Callable[[], float] | None = None,
        validator: Validator | None = None,
    ) -> None:
        if not isinstance(config, GuardConfig):
            raise GuardConfigError(f"config must be a GuardConfig, not {type(config).__name__}")
        if validator is not None and not callable(validator):
            raise GuardConfigError("validator must be callable or None")
        self.config = config
        self._clock = clock
        self.validator = validator
        self._verify = verifier(config.secrets)
        self._boards: dict[tuple[int, str], _Board] = {}
        self._last: tuple[AsyncLeaderboard, _Board] | None = None
        self._appenders: dict[int, AsyncAppender] = {}
        self._tasks: set[Any] = set()
        """Verdict events waiting for this turn's hand-over, per journal store."""

    # -- the pipeline ---------------------------------------------------------------------

    async def submit(
        self,
        board: AsyncLeaderboard,
        member: str | bytes,
        score: float,
        *,
        client_time: int | None = None,
        nonce: str | None = None,
        signature: str | None = None,
        ip: str | None = None,
        key_scope: str | None = None,
        replay: Any = None,
        operator: str | None = None,
        actor: str | None = None,
    ) -> Verdict:
        """Judge one submission, and apply it to ``board`` when accepted.

        ``client_time`` (Unix ms), ``nonce`` and ``signature`` (:func:`~ranked.guard.sign`)
        are required when the configuration has secrets and the writer is not trusted;
        ``key_scope``: ``write`` / ``admin`` is a trusted writer (a server identity),
        anything else (``read``, None) a client; ``ip``: the client's address for the
        per-IP limit; ``replay``: any JSON value the client attaches (kept with a held
        submission for the validator); ``actor``: who, for the journal.

        Cheap checks in the process, then one atomic backend step, then the board's
        submission: two steps for an accepted write (one Redis script each), two for a
        held one (the check, then the step storing the entry), one for one the step
        refuses, none for one a cheap check refuses. Bad arguments raise
        :class:`~ranked.errors.GuardArgumentError` before anything is checked.
        """
        now = self._now()  # read once: the C stage and the Python path judge one instant
        state: _Board | None = None
        found: tuple[bytes, float, list[bytes], list[Any]] | None = None
        if operator is None and replay is None:
            # a client's common submission: its in-process stage in one C call, which
            # hands back the step's keys and arguments when every cheap layer passes; a
            # board the guard refuses is the Python path's to refuse, where it always was
            try:  # not contextlib.suppress: this is the hot path
                state = self._board(board)
            except (GuardArgumentError, GuardConfigError):
                state = None
            if state is not None and state.front is not None:
                window = state.window_key(board)
                found = state.front(
                    member, score, client_time, nonce, signature, ip, key_scope, now, window
                )
        sent: _Sent | None = None
        if state is not None and found is not None:
            who, value, keys, args = found
        else:
            prepared = self._prepared(
                board, member, score, client_time, nonce, signature, ip, key_scope, replay,
                operator, actor, now,
            )  # fmt: skip
            if isinstance(prepared, Verdict):
                return prepared
            state, sent, who, value, keys, args = prepared
        # -- the stateful layers: one atomic step -----------------------------------------
        if not state.restored:
            await self.restore(board)
        checked = await state.check(keys, args, self._now_us())
        if checked.code:
            if sent is None:
                sent = _Sent(member, score, client_time, nonce, ip, key_scope, None, None)
            return await self._refused(board, state, sent, who, value, checked, now, actor)
        note = None
        if self.config.audit_accepted and board.journal_store is not None:
            # the verdict rides in the board's own submission event: no row of its own
            note = accepted_note(ip, key_scope, nonce, checked.zscore, checked.rank)
        result = await board.submit(
            member,
            score,
            operator=operator,  # type: ignore[arg-type]
            actor=actor if note is not None else None,
            reason=note,
        )
        return accepted(result, _tightest(checked), checked.zscore)

    def _prepared(
        self,
        board: AsyncLeaderboard,
        member: str | bytes,
        score: float,
        client_time: int | None,
        nonce: str | None,
        signature: str | None,
        ip: str | None,
        key_scope: str | None,
        replay: Any,
        operator: str | None,
        actor: str | None,
        now: float,
    ) -> Verdict | tuple[_Board, _Sent, bytes, float, list[bytes], list[Any]]:
        """The Python path of a submission: its arguments checked, then the cheap layers
        (the verdict of one that refuses it, journaled), else the step's keys and
        arguments."""
        config = self.config
        who = member_bytes(member) if isinstance(member, (str, bytes)) else None
        if not who:
            raise GuardArgumentError("member must be a non-empty str or bytes")
        value = _check_score(score)
        if client_time is not None and (
            isinstance(client_time, bool) or not isinstance(client_time, int)
        ):
            raise GuardArgumentError("client_time must be an int (Unix ms)")
        if nonce is not None:
            check_nonce(nonce)
        if ip is not None and (not isinstance(ip, str) or not 0 < len(ip) <= 64):
            raise GuardArgumentError("ip must be a str of at most 64 characters")
        if operator is not None and operator not in ("best", "set", "incr", "decr"):
            raise GuardArgumentError(f"unknown operator {operator!r}")
        payload = None
        if replay is not None:
            try:
                payload = json.dumps(replay, separators=(",", ":"))
            except (TypeError, ValueError) as error:
                raise GuardArgumentError(f"replay must be a JSON value: {error}") from None
        trusted = key_scope in TRUSTED_SCOPES
        # -- cheap checks: no I/O -----------------------------------------------------
        verdict: Verdict | None = None
        if config.trusted_only and not trusted:
            verdict = _rejected("untrusted")
        elif not trusted and operator not in (None, board.config.operator):
            # a client's incr on a best board would move the score past every bound and
            # cap, judged on the increment: clients write the board's operator only
            verdict = _rejected("operator")
        elif (config.min_score is not None and value < config.min_score) or (
            config.max_score is not None and value > config.max_score
        ):
            verdict = _rejected("out-of-bounds")
        elif config.signed and not trusted:
            verdict = self._signature(board.name, member, score, client_time, nonce, signature, now)
        if verdict is not None:
            detail: dict[str, Any] = {"ip": ip, "scope": key_scope, "nonce": nonce}
            self._record(board, "rejected", who, value, now, actor, verdict.reason, detail)
            return verdict
        state = self._board(board)
        use_nonce = nonce is not None and config.signed and not trusted
        keys = state.keys_of(board, who, nonce if use_nonce else None, ip, trusted)
        args = state.args_of(who, value, use_nonce, trusted, ip is not None, operator)
        sent = _Sent(member, score, client_time, nonce, ip, key_scope, payload, operator)
        return state, sent, who, value, keys, args

    async def _refused(
        self,
        board: AsyncLeaderboard,
        state: _Board,
        sent: _Sent,
        who: bytes,
        value: float,
        checked: steps.Checked,
        now: float,
        actor: str | None,
    ) -> Verdict:
        """The verdict of a submission the step refused (rejected) or held (stored on the
        pending list: one more step, rare)."""
        member, score, client_time, nonce, ip, key_scope, payload, operator = sent
        limit = _tightest(checked)
        if checked.code == 1:
            detail = _detail(ip, key_scope, nonce, checked.zscore, checked.rank)
            self._record(board, "rejected", who, value, now, actor, checked.reason, detail)
            return _rejected(checked.reason, limit=limit, zscore=checked.zscore)
        detail = _detail(ip, key_scope, nonce, checked.zscore, checked.rank)
        pending_id = secrets.token_hex(8)
        entry = {
            "member": member if isinstance(member, str) else None,
            "member_hex": who.hex() if isinstance(member, bytes) else None,
            "score": score,
            "at": now,
            "client_time": client_time,
            "nonce": nonce,
            "ip": ip,
            "replay": payload,
            "operator": operator,
        }
        text = (checked.reason + "|" + json.dumps(entry, separators=(",", ":"))).encode()
        await state.write_hash(state.keys.held, {pending_id.encode(): text}, None)
        detail["id"] = pending_id
        detail["entry"] = entry
        self._record(board, "held", who, value, now, actor, checked.reason, detail)
        self._validate_later(board, _parse(board.name, pending_id, text))
        return Verdict(
            "pending",
            checked.reason,
            REASONS[checked.reason],
            pending_id,
            limit=limit,
            zscore=checked.zscore,
        )

    def _signature(
        self,
        board: str,
        member: str | bytes,
        score: float,
        client_time: int | None,
        nonce: str | None,
        signature: str | None,
        now: float,
    ) -> Verdict | None:
        """The HMAC and skew layers' refusal, or None."""
        if client_time is None or nonce is None or signature is None:
            return _rejected("missing-signature")
        if not self._verify(now, board, member, score, client_time, nonce, signature):
            return _rejected("bad-signature")
        if abs(now - client_time / 1000) > self.config.skew:
            return _rejected("clock-skew")
        return None

    # -- pending submissions --------------------------------------------------------------

    async def pending(self, board: AsyncLeaderboard) -> list[PendingEntry]:
        """The board's held submissions, oldest first. One step: O(pending)."""
        state = await self._ready(board)
        found = await state.list((state.keys.held,), ())
        entries = [_parse(board.name, key.decode(), text) for key, text in found.items()]
        return sorted(entries, key=lambda e: (e.at, e.id))

    async def promote(self, board: AsyncLeaderboard, pending_id: str, *, by: str) -> Verdict:
        """Apply a held submission to ``board`` with its original instant (the board's
        ``submit(at=...)``), and count its score in the member's history: one step takes
        it off the pending list (two moderators cannot both apply it), one step writes
        it. :class:`~ranked.errors.PendingNotFoundError` when there is no such entry."""
        entry = await self._claim(board, pending_id, promote=True)
        result = await board.submit(
            _member_of(entry),
            entry.score,
            operator=entry.operator,  # type: ignore[arg-type]
            at=entry.at,
        )
        await self._journal(
            board,
            "promoted",
            member_bytes(_member_of(entry)),
            entry.score,
            self._now(),
            by,
            entry.reason,
            {"id": pending_id},
        )
        return Verdict("accepted", submission=result)

    async def reject(
        self, board: AsyncLeaderboard, pending_id: str, *, by: str, reason: str
    ) -> PendingEntry:
        """Drop a held submission (journaled with who and why); the entry it was."""
        entry = await self._claim(board, pending_id, promote=False)
        await self._journal(
            board,
            "dismissed",
            member_bytes(_member_of(entry)),
            entry.score,
            self._now(),
            by,
            reason,
            {"id": pending_id},
        )
        return entry

    async def _claim(self, board: AsyncLeaderboard, pending_id: str, promote: bool) -> PendingEntry:
        if not isinstance(pending_id, str) or not pending_id:
            raise GuardArgumentError("a pending id is a non-empty str")
        state = await self._ready(board)
        held = (await state.list((state.keys.held,), ())).get(pending_id.encode())
        if held is None:
            raise PendingNotFoundError(f"no pending submission {pending_id!r} on {board.name!r}")
        entry = _parse(board.name, pending_id, held)
        player = state.keys.player(member_bytes(_member_of(entry)))
        taken = await state.claim(
            (state.keys.held, player),
            (pending_id.encode(), b"1" if promote else b"0", entry.score),
            self._now_us(),
        )
        if taken is None:  # taken by another moderator meanwhile
            raise PendingNotFoundError(f"no pending submission {pending_id!r} on {board.name!r}")
        return entry

    async def drain(self) -> None:
        """Wait until every validator started so far has answered (tests, shutdown)."""
        await wait_tasks(self._tasks)

    def _validate_later(self, board: AsyncLeaderboard, entry: PendingEntry) -> None:
        if self.validator is None and self.config.webhook is None:
            return
        validate_later(self._tasks, lambda: self._validate(board, entry))

    async def _validate(self, board: AsyncLeaderboard, entry: PendingEntry) -> None:
        """Ask the validator (else the webhook) about a held submission, then promote or
        reject it; an answer of None, or a failure, leaves it pending."""
        try:
            if self.validator is not None:
                answer = await acall_validator(self.validator, entry)
                by = "validator"
            else:
                config = self.config
                assert config.webhook is not None
                answer = _webhook_answer(
                    await apost_webhook(config.webhook, entry, config.webhook_secret)
                )
                by = "webhook"
            if answer is True:
                await self.promote(board, entry.id, by=by)
            elif answer is False or isinstance(answer, str):
                reason = answer if isinstance(answer, str) else "refused by the " + by
                await self.reject(board, entry.id, by=by, reason=reason)
        except PendingNotFoundError:
            pass  # a moderator was faster

    # -- the ban list ---------------------------------------------------------------------

    async def ban(
        self, board: AsyncLeaderboard, member: str | bytes, *, by: str, reason: str
    ) -> bool:
        """Refuse ``member``'s future writes to ``board`` (journaled); True if newly banned.
        Its scores stay: see :meth:`remove_everywhere`."""
        who = _who(member)
        state = await self._ready(board)
        added = bool(await state.ban(state.keys.banned, [who]))
        await self._journal(board, "banned", who, None, self._now(), by, reason, {})
        return added

    async def unban(
        self, board: AsyncLeaderboard, member: str | bytes, *, by: str, reason: str
    ) -> bool:
        """Lift a ban (journaled); True if the member was banned."""
        who = _who(member)
        state = await self._ready(board)
        removed = bool(await state.unban(state.keys.banned, [who]))
        await self._journal(board, "unbanned", who, None, self._now(), by, reason, {})
        return removed

    async def banned(self, board: AsyncLeaderboard) -> list[str]:
        """The board's banned members, sorted."""
        state = await self._ready(board)
        found = await state.banned(state.keys.banned)
        return sorted(m.decode("utf-8", "surrogateescape") for m in found)

    async def remove_everywhere(
        self, board: AsyncLeaderboard, member: str | bytes, *, by: str, reason: str
    ) -> bool:
        """Remove ``member``'s scores from every window of ``board`` (the board's
        ``remove``, journaled on the board with who and why, and in the audit stream),
        and drop its pending submissions. True if anything was removed."""
        who = _who(member)
        removed = await board.remove(member, actor=by, reason=reason)
        for entry in await self.pending(board):
            if member_bytes(_member_of(entry)) == who:
                with contextlib.suppress(PendingNotFoundError):  # a moderator was faster
                    await self.reject(board, entry.id, by=by, reason=reason)
        await self._journal(board, "removed", who, None, self._now(), by, reason, {})
        return removed

    # -- restoring the guard's state -------------------------------------------------------

    async def restore(self, board: AsyncLeaderboard) -> bool:
        """Rebuild the board's guard state from its audit stream when the store holds none
        (an embedded ``memory://`` store after a restart, a Redis that lost its data):
        bans, held submissions, the nonces still inside their window, and each member's
        history (from the accepted and promoted scores; with ``audit_accepted``). Done
        once per board and guard, on first use; True when it restored. Reads the whole
        audit stream and the board's own stream (the accepted verdicts ride in its
        submission events): O(events). The rate limits start afresh. Two guards restoring
        one empty store at once may count a history twice (the z-score then judges a
        little more leniently); the marker key makes a third restore a no-op."""
        state = self._board(board)
        if state.restored:
            return False
        keys = state.keys
        (mark,) = await state.read_hash(keys.marker, [b"at"])
        state.restored = True
        if mark is not None:
            return False
        store = board.journal_store
        now = self._now()
        restored = _Restored()
        if store is not None:
            store.flush()
            for found in verdicts(store, board.name):
                restored.add(found)
        if restored.bans:
            await state.ban(keys.banned, sorted(restored.bans))
        if restored.held:
            await state.write_hash(keys.held, restored.held, None)
        ttl_ms = self.config.nonce_ttl_ms
        for nonce, at in restored.nonces.items():
            left = round((at - now) * 1000) + ttl_ms
            if left > 0:
                await state.write_hash(keys.nonce(nonce), {b"restored": b"1"}, left)
        for member, fields in restored.stats.items():
            await state.write_hash(keys.player(member), fields, None)
        await state.write_hash(keys.marker, {b"at": repr(now).encode()}, None)
        return True

    async def _ready(self, board: AsyncLeaderboard) -> _Board:
        state = self._board(board)
        if not state.restored:
            await self.restore(board)
        return state

    # -- the audit ------------------------------------------------------------------------

    def audit(
        self, board: AsyncLeaderboard, member: str | bytes | None = None, *, limit: int = 100
    ) -> list[AuditRecord]:
        """The board's newest journaled verdicts (of ``member`` only, if given), oldest
        first, at most ``limit``. Reads the board's audit stream and, for the accepted
        verdicts, the board's own submission events (see :mod:`.._audit`): O(events of
        the board, or of the member). [] for a board without a journal."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise GuardArgumentError(f"limit must be a positive int, not {limit!r}")
        store = board.journal_store
        if store is None:
            return []
        store.flush()  # the verdicts handed over behind their answers
        who = None if member is None else _who(member)
        return verdicts(store, board.name, who)[-limit:]

    # -- helpers --------------------------------------------------------------------------

    def _board(self, board: AsyncLeaderboard) -> _Board:
        last = self._last
        if last is not None and last[0] is board:
            return last[1]  # a guard mostly serves one board
        if not isinstance(board, AsyncLeaderboard):
            raise GuardArgumentError(
                f"board must be an AsyncLeaderboard, not {type(board).__name__}"
            )
        key = (id(board.backend), board.name)
        state = self._boards.get(key)
        if state is None:
            state = self._boards[key] = _Board(board.backend, board, self.config)
        self._last = (board, state)
        return state

    def _now(self) -> float:
        return time.time() if self._clock is None else self._clock()

    def _now_us(self) -> int | None:
        return None if self._clock is None else round(self._clock() * 1e6)

    async def _journal(
        self,
        board: AsyncLeaderboard,
        action: str,
        member: bytes | None,
        score: float | None,
        now: float,
        actor: str | None,
        reason: str | None,
        detail: dict[str, Any],
    ) -> None:
        store = board.journal_store
        if store is not None:
            event = _verdict(board, action, member, score, now, actor, reason, detail)
            await self._appender(store).append([event])

    def _record(
        self,
        board: AsyncLeaderboard,
        action: str,
        member: bytes | None,
        score: float | None,
        now: float,
        actor: str | None,
        reason: str | None,
        detail: dict[str, Any],
    ) -> None:
        """Journal a submission's verdict behind its answer: handed to the journal's
        committer without waiting (it goes with the next group commit; :meth:`audit`
        and :meth:`restore` flush first). A verdict lost in a crash loses no score."""
        store = board.journal_store
        if store is not None:
            event = _verdict(board, action, member, score, now, actor, reason, detail)
            record_now(store, event)

    def _appender(self, store: JournalStore) -> AsyncAppender:
        appender = self._appenders.get(id(store))
        if appender is None:
            appender = self._appenders[id(store)] = AsyncAppender(store)
        return appender


def _who(member: str | bytes) -> bytes:
    if not isinstance(member, str | bytes) or not member:
        raise GuardArgumentError("member must be a non-empty str or bytes")
    return member_bytes(member)


def _member_of(entry: PendingEntry) -> str | bytes:
    return entry.member


def _parse(board: str, pending_id: str, text: bytes) -> PendingEntry:
    reason, _, body = text.partition(b"|")
    data = json.loads(body)
    member = data["member"]
    if member is None:
        member = bytes.fromhex(data["member_hex"]).decode("utf-8", "surrogateescape")
    replay = data.get("replay")
    return PendingEntry(
        pending_id,
        board,
        member,
        data["score"],
        data["at"],
        reason.decode(),
        data.get("client_time"),
        data.get("nonce"),
        data.get("ip"),
        None if replay is None else json.loads(replay),
        data.get("operator"),
    )


def _webhook_answer(answer: Any) -> Any:
    """A webhook's JSON answer: ``{"promote": true}``, ``{"reject": "why"}`` or anything
    else (left pending)."""
    if isinstance(answer, dict):
        if answer.get("promote") is True:
            return True
        why = answer.get("reject")
        if isinstance(why, str) and why:
            return why
        if why is True:
            return False
    return None


def _verdict(
    board: AsyncLeaderboard,
    action: str,
    member: bytes | None,
    score: float | None,
    now: float,
    actor: str | None,
    reason: str | None,
    detail: dict[str, Any],
) -> NewEvent:
    """The journal event of one verdict on ``board`` at ``now`` (Unix seconds), with the
    detail's fields that are set."""
    return verdict_event(
        board.name,
        action,
        member,
        score,
        round(now * 1e6),
        actor=actor,
        reason=reason,
        detail={k: v for k, v in detail.items() if v is not None},
    )
