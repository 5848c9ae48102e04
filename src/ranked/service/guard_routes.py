"""The write guard in the service (docs/guard.md): per-board guard settings, the guarded
submission, and the moderation endpoints (pending list, promote, reject, bans, purge,
audit).

A board's guard settings are kept in the board's metadata under ``"guard"`` (journaled
with the board, so a restart finds them) and set by ``PUT /v1/boards/{board}/guard``. On a
board with a guard, ``POST /v1/boards/{board}/scores`` goes through it: a ``read``-scope
key is a client (every layer applies; it may submit only to a guarded board that is not
``trusted_only``), a ``write``- or ``admin``-scope key a trusted server identity. The
route's handler calls :meth:`Guards.submit` first and answers its verdict: 200 (accepted,
with ``RateLimit`` headers when a limit ran), 202 (held: the pending id), or a problem
(429 with ``Retry-After`` and the IETF headers for a rate limit). Batches and multi-board
submissions are refused on guarded boards (409 ``guarded-board``): each score must be
judged alone.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Annotated, Any, Final, Literal

import msgspec

from ..core._time import UNIX_EPOCH
from ..errors import GuardConfigError, PendingNotFoundError
from ..guard import AsyncGuard, GuardConfig, PendingEntry, Secret, Verdict
from ..leaderboard import AsyncLeaderboard
from ..ratelimit import Decision, Policy, client_ip, forwarded_ip, problem_details
from ..ratelimit.headers import policy_value, reset_seconds, sf_string
from .convert import member as path_member
from .convert import query, submitted
from .http import HTTPProblem, Request, Response, Route, json_response
from .keys import Scope
from .problems import PROBLEM_TYPES
from .registry import Boards
from .schemas import Member, Reason, ScoreBody, SubmitResult

__all__ = ["GUARD_PROBLEMS", "Guards", "guard_routes"]

_KEY: Final = "guard"

GUARD_PROBLEMS: Final = {
    "banned": "The member is banned from this board.",
    "untrusted": "The board takes scores from trusted writers (write-scope keys) only.",
    "out-of-bounds": "The score is outside the board's bounds.",
    "missing-signature": "The board takes signed scores only (client_time, nonce, signature).",
    "bad-signature": "The signature does not match the submission.",
    "clock-skew": "The client time is too far from the server's.",
    "rate-limited": "Too many submissions for this member (see Retry-After).",
    "rate-limited-ip": "Too many submissions from this address (see Retry-After).",
    "replayed-nonce": "The nonce was used before.",
    "velocity-step": "The score changed more than one submission allows.",
    "velocity-span": "The score changed more than the time span allows.",
    "guarded-board": "A guarded board takes one score at a time (POST .../scores).",
    "no-guard": "The board has no guard.",
    "unknown-pending": "No pending submission with that id.",
    "invalid-guard": "The guard refuses this configuration.",
}
"""The problem types of the guard's refusals (merged into the service's list)."""

PROBLEM_TYPES.update(GUARD_PROBLEMS)  # the API page and the problems' titles list them too

_STATUS: Final = {
    "banned": 403,
    "untrusted": 403,
    "operator": 403,
    "bad-signature": 403,
    "missing-signature": 422,
    "out-of-bounds": 422,
    "clock-skew": 422,
    "velocity-step": 422,
    "velocity-span": 422,
    "replayed-nonce": 409,
    "rate-limited": 429,
    "rate-limited-ip": 429,
}

Hex = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-fA-F]{32,256}$")]
Nonce = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.:~+/=-]{8,128}$")]
Positive = Annotated[float, msgspec.Meta(gt=0)]


class SecretSpec(msgspec.Struct, forbid_unknown_fields=True):
    key: Hex
    """The HMAC key in hex (at least 16 bytes)."""
    until: Annotated[datetime, msgspec.Meta(tz=True)] | None = None
    """The end of its grace period (a previous secret); none: no end."""


class LimitSpec(msgspec.Struct, forbid_unknown_fields=True):
    limit: Annotated[int, msgspec.Meta(ge=1, le=1_000_000_000)]
    window: Annotated[float, msgspec.Meta(gt=0, le=86_400 * 366)]
    """Seconds."""
    algorithm: Literal["fixed_window", "sliding_log", "sliding_counter", "token_bucket", "gcra"] = (
        "sliding_log"
    )
    burst: Annotated[int, msgspec.Meta(ge=1, le=1_000_000_000)] | None = None


class GuardSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=False):
    """A board's write guard (docs/guard.md); every layer off unless set."""

    trusted_only: bool = False
    min_score: float | None = None
    max_score: float | None = None
    secrets: Annotated[list[SecretSpec], msgspec.Meta(max_length=8)] = msgspec.field(
        default_factory=list
    )
    skew: Annotated[float, msgspec.Meta(gt=0, le=86_400)] = 30.0
    player_limit: LimitSpec | None = None
    ip_limit: LimitSpec | None = None
    max_step: Positive | None = None
    max_change: Positive | None = None
    change_span: Positive | None = None
    z_threshold: Positive | None = None
    z_min_history: Annotated[int, msgspec.Meta(ge=2, le=1_000_000)] = 10
    pending_rank: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] | None = None
    webhook: Annotated[str, msgspec.Meta(pattern=r"^https?://\S{1,2000}$")] | None = None
    webhook_secret: Annotated[str, msgspec.Meta(min_length=16, max_length=256)] | None = None
    """Signs each POST to the webhook (``X-Ranked-Signature``); shown as its id."""
    audit_accepted: bool = True
    trusted_proxy_hops: Annotated[int, msgspec.Meta(ge=0, le=10)] = 0
    """0: the client IP is the connection's peer; n: the n-th address from the right of
    ``X-Forwarded-For`` (the service is behind n proxies you run)."""


class SecretOut(msgspec.Struct):
    id: str
    """The first 12 hex digits of the key's SHA-256 (the key itself is never shown)."""
    until: datetime | None


class GuardOut(msgspec.Struct):
    board: str
    settings: dict[str, Any]
    """The settings, with ``secrets`` as their ids."""


class PendingOut(msgspec.Struct):
    id: str
    member: str
    score: float
    at: datetime
    """The instant it counts at if promoted (RFC 3339, UTC, as every time the API shows;
    ``client_time`` stays the client's Unix milliseconds, as it signed them)."""
    reason: str
    client_time: int | None
    nonce: str | None
    ip: str | None
    replay: Any
    operator: str | None


class PendingList(msgspec.Struct):
    pending: list[PendingOut]


class HeldResult(msgspec.Struct):
    """A submission held for review: promoted or rejected later."""

    pending: str
    reason: str


class ReasonBody(msgspec.Struct, forbid_unknown_fields=True):
    reason: Reason


class Flag(msgspec.Struct):
    changed: bool


class BanList(msgspec.Struct):
    members: list[str]


class AuditItem(msgspec.Struct):
    seq: int
    at: datetime
    """When the verdict or action was recorded (RFC 3339, UTC)."""
    member: str | None
    action: str
    score: float | None
    actor: str | None
    reason: str | None
    detail: dict[str, Any]


class AuditOut(msgspec.Struct):
    audit: list[AuditItem]


class AuditQuery(msgspec.Struct, forbid_unknown_fields=True):
    member: Member | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 100


class UnbanQuery(msgspec.Struct, forbid_unknown_fields=True):
    reason: Reason


def _config(settings: GuardSettings) -> GuardConfig:
    """The library's configuration of ``settings``; :class:`GuardConfigError` when the
    guard or a limiter refuses it."""

    def policy(spec: LimitSpec | None, name: str) -> Policy | None:
        if spec is None:
            return None
        return Policy(spec.limit, spec.window, spec.algorithm, spec.burst, name)

    try:
        return GuardConfig(
            trusted_only=settings.trusted_only,
            min_score=settings.min_score,
            max_score=settings.max_score,
            secrets=tuple(
                Secret(bytes.fromhex(s.key), None if s.until is None else s.until.timestamp())
                for s in settings.secrets
            ),
            skew=settings.skew,
            player_limit=policy(settings.player_limit, "player"),
            ip_limit=policy(settings.ip_limit, "ip"),
            max_step=settings.max_step,
            max_change=settings.max_change,
            change_span=settings.change_span,
            z_threshold=settings.z_threshold,
            z_min_history=settings.z_min_history,
            pending_rank=settings.pending_rank,
            webhook=settings.webhook,
            webhook_secret=settings.webhook_secret,
            audit_accepted=settings.audit_accepted,
        )
    except ValueError as error:  # the limiters' and the limits' errors are ValueErrors
        raise GuardConfigError(str(error)) from None


def _utc(seconds: float) -> datetime:
    """Unix seconds as the API shows times: an aware UTC datetime (microseconds kept)."""
    return UNIX_EPOCH + timedelta(microseconds=round(seconds * 1e6))


def _entry_out(entry: PendingEntry) -> PendingOut:
    return PendingOut(
        entry.id,
        entry.member,
        entry.score,
        _utc(entry.at),
        entry.reason,
        entry.client_time,
        entry.nonce,
        entry.ip,
        entry.replay,
        entry.operator,
    )


class _PolicyHeaders:
    """One policy's header parts: its ``RateLimit-Policy`` header and ``RateLimit`` item's
    head, made once, and the last allowed decision's ``(remaining, reset_after)`` with its
    ``RateLimit`` header, kept while the decisions repeat it (a client well under its
    limit gets the same remaining quota and reset time on every request)."""

    __slots__ = ("head", "last", "policy", "policy_header")

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.policy_header = (b"ratelimit-policy", policy_value([policy]).encode())
        self.head = sf_string(policy.name) + ";r="
        self.last: tuple[tuple[int, float], tuple[bytes, bytes]] | None = None

    def item(self, remaining: int, t: int) -> tuple[bytes, bytes]:
        """The ``RateLimit`` header of one decision of this policy (``ratelimit_value``'s
        item): its remaining quota and its ``t``."""
        return (b"ratelimit", f"{self.head}{remaining};t={t}".encode())


_POLICY_HEADERS: dict[int, _PolicyHeaders] = {}
"""Each policy's header parts (at most 1,024 kept), by the policy object's id: a policy
hashes all its fields, and the guard's decisions carry the same policy object every time
(the entry keeps it alive, so its id is not reused while the entry stands)."""


def _limit_headers(limit: Decision) -> list[tuple[bytes, bytes]]:
    """``rate_limit_headers([limit], style="ietf")`` as raw header pairs: the same pairs in
    the same order (``ratelimit_value``'s item for one decision), the policy's parts made
    once per policy."""
    policy = limit.policy
    known = _POLICY_HEADERS.get(id(policy))
    if known is None or known.policy is not policy:
        if len(_POLICY_HEADERS) >= 1024:
            _POLICY_HEADERS.clear()
        known = _POLICY_HEADERS[id(policy)] = _PolicyHeaders(policy)
    if limit.allowed:
        seen = (limit.remaining, limit.reset_after)
        last = known.last
        if last is None or last[0] != seen:
            last = known.last = (seen, known.item(seen[0], reset_seconds(limit)))
        return [known.policy_header, last[1]]
    t = reset_seconds(limit)  # retry_after_seconds of one decision: its t when denied
    return [known.policy_header, known.item(limit.remaining, t), (b"retry-after", str(t).encode())]


def _actor(request: Request) -> str:
    return f"key:{request.key.id}" if request.key is not None else "anonymous"


class _Guarded:
    __slots__ = ("guard", "identity", "settings")

    def __init__(self, settings: GuardSettings) -> None:
        self.settings = settings
        self.guard = AsyncGuard(_config(settings))
        hops = settings.trusted_proxy_hops
        self.identity = client_ip if hops == 0 else forwarded_ip(hops)


class _Unread:
    """The type of :data:`_UNREAD`."""


_UNREAD: Final = _Unread()
"""A board whose guard setting was not read yet."""


class Guards:
    """The guards of one service's boards, read from each board's metadata once."""

    def __init__(self, boards: Boards) -> None:
        self.boards = boards
        self._guards: dict[str, tuple[AsyncLeaderboard, _Guarded | None]] = {}

    def known(self, board: AsyncLeaderboard) -> _Guarded | _Unread | None:
        """The board's guard as last read (None: none), or :data:`_UNREAD` when its
        metadata was not read yet for this opening of the board. No I/O."""
        known = self._guards.get(board.name)
        return known[1] if known is not None and known[0] is board else _UNREAD

    async def get(self, board: AsyncLeaderboard) -> _Guarded | None:
        """The board's guard (None: none). Read from its metadata on first use, and again
        when the registry opened the board anew (its settings changed)."""
        known = self.known(board)
        if not isinstance(known, _Unread):
            return known
        raw = (await board.metadata()).get(_KEY)
        found = None
        if raw is not None:
            try:
                found = _Guarded(msgspec.convert(raw, GuardSettings))
            except (msgspec.ValidationError, GuardConfigError):
                found = None  # refused when it was set: cannot happen unless edited by hand
        self._guards[board.name] = (board, found)
        return found

    async def set(self, board: AsyncLeaderboard, settings: GuardSettings | None) -> None:
        guarded = None if settings is None else _Guarded(settings)  # refuses a bad one first
        value = None if settings is None else msgspec.to_builtins(settings)
        await board.merge_metadata({_KEY: value})
        self._guards[board.name] = (board, guarded)

    async def required(self, request: Request) -> tuple[AsyncLeaderboard, AsyncGuard]:
        board = self.boards.get(request.params["board"])
        guarded = await self.get(board)
        if guarded is None:
            raise HTTPProblem(404, "no-guard", f"board {board.name!r} has no guard")
        return board, guarded.guard

    # -- the hook of the submit route ---------------------------------------------------

    async def submit(
        self, request: Request, board: AsyncLeaderboard, body: ScoreBody
    ) -> tuple[Any, Response] | None:
        """The verdict of a guarded board: (the board's Submission or None, the answer).
        None for a board without a guard (the route submits as it always did); a
        ``read``-scope key may not submit there (403)."""
        guarded = self.known(board)  # the hot path: no coroutine
        if isinstance(guarded, _Unread):
            guarded = await self.get(board)
        key = request.key
        scope = None if key is None else key.scope
        if guarded is None:
            if scope is None or not scope.allows(Scope.WRITE):
                raise HTTPProblem(
                    403,
                    "forbidden",
                    "this operation needs a key of scope write on a board without a guard"
                    f" (this one is {scope.value if scope else 'none'})",
                )
            return None
        verdict: Verdict = await guarded.guard.submit(
            board,
            body.member,
            body.score,
            client_time=body.client_time,
            nonce=body.nonce,
            signature=body.signature,
            ip=guarded.identity(request.scope),
            key_scope=None if scope is None else scope._value_,  # .value is a descriptor call
            replay=body.replay,
            operator=body.operator,
            actor=_actor(request),
        )
        limit = verdict.limit
        headers = [] if limit is None else _limit_headers(limit)
        if verdict.submission is not None:  # accepted
            answer = json_response(submitted(verdict.submission))
            answer.headers = headers
            return verdict.submission, answer
        if verdict.pending:
            assert verdict.pending_id is not None and verdict.reason is not None
            answer = json_response(HeldResult(verdict.pending_id, verdict.reason), 202)
            answer.headers = headers
            return None, answer
        reason = verdict.reason or "rejected"
        status = _STATUS.get(reason, 422)
        problem = HTTPProblem(status, reason, verdict.message or reason, headers=headers)
        if status == 429 and limit is not None:
            problem.detail = str(problem_details([limit]).get("detail") or problem.detail)
        raise problem

    async def refuse_batch(self, board: AsyncLeaderboard) -> None:
        """409 on a guarded board: its scores are judged one at a time."""
        if await self.get(board) is not None:
            raise HTTPProblem(
                409,
                "guarded-board",
                f"board {board.name!r} has a write guard: submit one score at a time",
            )


def guard_routes(guards: Guards) -> list[Route]:
    """The guard's routes (admin scope)."""
    h = _Handlers(guards)
    b = "/v1/boards/{board}"
    A = Scope.ADMIN
    return [
        Route("PUT", b + "/guard", h.put, A, "Set a board's write guard", body=GuardSettings,
              response=GuardOut, tag="guard",
              answers=((201, "Created: the board had no guard", GuardOut),)),
        Route("GET", b + "/guard", h.get, A, "A board's write guard", response=GuardOut,
              tag="guard"),
        Route("DELETE", b + "/guard", h.delete, A, "Remove a board's write guard",
              response=Flag, tag="guard", problems=(404,)),
        Route("GET", b + "/pending", h.pending, A, "The submissions held for review",
              response=PendingList, tag="guard"),
        Route("POST", b + "/pending/{id}/promote", h.promote, A,
              "Apply a held submission with its original instant", response=SubmitResult,
              tag="guard"),
        Route("POST", b + "/pending/{id}/reject", h.reject, A, "Drop a held submission",
              body=ReasonBody, response=PendingOut, tag="guard"),
        Route("GET", b + "/bans", h.bans, A, "The banned members", response=BanList,
              tag="guard"),
        Route("PUT", b + "/bans/{member}", h.ban, A, "Ban a member (audited)",
              body=ReasonBody, response=Flag, tag="guard"),
        Route("DELETE", b + "/bans/{member}", h.unban, A, "Lift a ban (audited)",
              query=UnbanQuery, response=Flag, tag="guard"),
        Route("POST", b + "/members/{member}/purge", h.purge, A,
              "Remove a member's scores from every window and its held ones (audited)",
              body=ReasonBody, response=Flag, tag="guard"),
        Route("GET", b + "/audit", h.audit, A, "The guard's journaled verdicts",
              query=AuditQuery, response=AuditOut, tag="guard"),
    ]  # fmt: skip


_DECODERS: dict[type, msgspec.json.Decoder[Any]] = {}


async def _body(request: Request, kind: type[Any]) -> Any:
    from .convert import field_of

    decoder = _DECODERS.get(kind)
    if decoder is None:
        decoder = _DECODERS[kind] = msgspec.json.Decoder(kind)
    raw = await request.body()
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as error:
        raise HTTPProblem(422, "invalid-body", str(error), field_of(error)) from None
    except msgspec.DecodeError as error:
        raise HTTPProblem(400, "malformed-json", f"the body is not JSON: {error}") from None


def _out(name: str, settings: GuardSettings) -> GuardOut:
    data = msgspec.to_builtins(settings)
    data["secrets"] = [
        msgspec.to_builtins(SecretOut(_secret_id(bytes.fromhex(s.key)), s.until))
        for s in settings.secrets
    ]
    if settings.webhook_secret is not None:
        data["webhook_secret"] = _secret_id(settings.webhook_secret.encode())
    return GuardOut(name, data)


def _secret_id(key: bytes) -> str:
    """What a secret is shown as: the first 12 hex digits of its SHA-256."""
    return hashlib.sha256(key).hexdigest()[:12]


class _Handlers:
    def __init__(self, guards: Guards) -> None:
        self.guards = guards

    async def put(self, request: Request) -> Response:
        board = self.guards.boards.get(request.params["board"])
        settings: GuardSettings = await _body(request, GuardSettings)
        had = await self.guards.get(board) is not None
        try:
            await self.guards.set(board, settings)
        except (GuardConfigError, ValueError) as error:
            raise HTTPProblem(422, "invalid-guard", str(error)) from None
        return json_response(_out(board.name, settings), 200 if had else 201)

    async def get(self, request: Request) -> Response:
        board = self.guards.boards.get(request.params["board"])
        guarded = await self.guards.get(board)
        if guarded is None:
            raise HTTPProblem(404, "no-guard", f"board {board.name!r} has no guard")
        return json_response(_out(board.name, guarded.settings))

    async def delete(self, request: Request) -> Response:
        board = self.guards.boards.get(request.params["board"])
        if await self.guards.get(board) is None:  # as GET: 404 (and as notifications)
            raise HTTPProblem(404, "no-guard", f"board {board.name!r} has no guard")
        await self.guards.set(board, None)
        return json_response(Flag(True))

    async def pending(self, request: Request) -> Response:
        board, guard = await self.guards.required(request)
        found = await guard.pending(board)
        return json_response(PendingList([_entry_out(e) for e in found]))

    async def promote(self, request: Request) -> Response:
        board, guard = await self.guards.required(request)
        try:
            verdict = await guard.promote(board, request.params["id"], by=_actor(request))
        except PendingNotFoundError as error:
            raise HTTPProblem(404, "unknown-pending", str(error), "id") from None
        assert verdict.submission is not None
        return json_response(submitted(verdict.submission))

    async def reject(self, request: Request) -> Response:
        board, guard = await self.guards.required(request)
        body: ReasonBody = await _body(request, ReasonBody)
        try:
            entry = await guard.reject(
                board, request.params["id"], by=_actor(request), reason=body.reason
            )
        except PendingNotFoundError as error:
            raise HTTPProblem(404, "unknown-pending", str(error), "id") from None
        return json_response(_entry_out(entry))

    async def bans(self, request: Request) -> Response:
        board, guard = await self.guards.required(request)
        return json_response(BanList(await guard.banned(board)))

    async def ban(self, request: Request) -> Response:
        board, guard = await self.guards.required(request)
        body: ReasonBody = await _body(request, ReasonBody)
        name = path_member(request.params["member"])
        added = await guard.ban(board, name, by=_actor(request), reason=body.reason)
        return json_response(Flag(added))

    async def unban(self, request: Request) -> Response:
        board, guard = await self.guards.required(request)
        reason = query(request.query, UnbanQuery).reason
        name = path_member(request.params["member"])
        removed = await guard.unban(board, name, by=_actor(request), reason=reason)
        return json_response(Flag(removed))

    async def purge(self, request: Request) -> Response:
        board, guard = await self.guards.required(request)
        body: ReasonBody = await _body(request, ReasonBody)
        name = path_member(request.params["member"])
        removed = await guard.remove_everywhere(board, name, by=_actor(request), reason=body.reason)
        return json_response(Flag(removed))

    async def audit(self, request: Request) -> Response:
        board, guard = await self.guards.required(request)
        asked = query(request.query, AuditQuery)
        found = guard.audit(board, asked.member, limit=asked.limit)
        return json_response(
            AuditOut(
                [
                    AuditItem(
                        r.seq,
                        _utc(r.at),
                        r.member,
                        r.action,
                        r.score,
                        r.actor,
                        r.reason,
                        r.detail,
                    )
                    for r in found
                ]
            )
        )
