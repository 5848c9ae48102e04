"""``RateLimitMiddleware``: rate limits for any ASGI 3 application, no framework needed.

HTTP requests only: websocket and lifespan scopes go to the app untouched. Each request
is charged to every limiter in order until one denies (:func:`.decorator.acheck`). Allowed:
the app runs and its ``http.response.start`` gains the rate-limit headers. Denied: the app
does not run; the client gets 429 with an RFC 9457 ``quota-exceeded`` problem body,
the headers and ``Retry-After``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final, Literal, get_args

from ..errors import BackendUnavailableError
from .decorator import Limiter, acheck, as_async_hit
from .headers import (
    TEMPORARY_REDUCED_CAPACITY,
    HeaderStyle,
    ResetStyle,
    check_policy_names,
    epoch_now,
    problem_json,
    rate_limit_headers,
)
from .policy import RateLimitConfigError

__all__ = [
    "ASGIApp",
    "FailMode",
    "RateLimitMiddleware",
    "Receive",
    "Scope",
    "Send",
    "client_ip",
    "forwarded_ip",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

FailMode = Literal["open", "closed"]
"""When the backend is unreachable: ``open`` lets requests through unlimited (and
without rate-limit headers); ``closed`` answers 503."""

UNKNOWN_CLIENT: Final = "unknown"
_log = logging.getLogger("ranked.ratelimit")


def client_ip(scope: Scope) -> str:
    """The default identity: the peer address the server saw (``scope["client"]``).

    Never ``X-Forwarded-For``, which any client can forge; behind a proxy use
    :func:`forwarded_ip`. Without a peer address (a Unix socket) every request shares the
    identity ``"unknown"``: limited together rather than not at all.
    """
    client = scope.get("client")
    return str(client[0]) if client else UNKNOWN_CLIENT


def forwarded_ip(trusted_hops: int = 1) -> Callable[[Scope], str]:
    """An identity function for an app behind ``trusted_hops`` proxies that each append
    the address they saw to ``X-Forwarded-For``.

    It takes the ``trusted_hops``-th address from the right: the one your outermost trusted
    proxy received the connection from. Addresses further left were written by the client
    and are ignored. Falls back to :func:`client_ip` when the header is missing or shorter.
    """
    if isinstance(trusted_hops, bool) or not isinstance(trusted_hops, int) or trusted_hops < 1:
        raise RateLimitConfigError(f"trusted_hops must be a positive integer: {trusted_hops!r}")

    def identity(scope: Scope) -> str:
        hops: list[str] = []
        for name, value in scope.get("headers", ()):
            if name.lower() == b"x-forwarded-for":
                hops.extend(part.strip() for part in value.decode("latin-1").split(","))
        hops = [hop for hop in hops if hop]
        return hops[-trusted_hops] if len(hops) >= trusted_hops else client_ip(scope)

    return identity


def _encode(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]


class RateLimitMiddleware:
    """Wrap ``app`` so every HTTP request passes ``limiters`` first.

    - ``limiters``: one limiter or several (``RateLimiter`` or ``AsyncRateLimiter``),
      checked in order; put the most often binding one first.
    - ``key(scope) -> str | None``: the identity (default :func:`client_ip`); None exempts.
    - ``cost``: units per request, or ``cost(scope) -> int``.
    - ``exempt(scope) -> bool``: True skips limiting (health checks, static files).
    - ``headers``: ``"both"`` (default), ``"ietf"``, ``"legacy"`` or None; ``Retry-After``
      is sent on every 429 whatever this says.
    - ``reset``: ``X-RateLimit-Reset`` as ``"delta"`` seconds (default) or ``"epoch"``.
    - ``on_unavailable``: ``"open"`` (default) or ``"closed"``, see :data:`FailMode`.
    - ``offload``: run blocking limiters in a worker thread (for a blocking Redis client on
      a busy loop); default inline, right for ``memory://`` (microseconds per decision).
    - ``clock``: Unix seconds, for ``reset="epoch"``; read before the request is charged,
      so a reading outside :mod:`ranked.core.limits`' instants raises ``OutOfRangeError``
      having charged nothing.
    """

    def __init__(
        self,
        app: ASGIApp,
        limiters: Limiter | Sequence[Limiter],
        *,
        key: Callable[[Scope], str | None] = client_ip,
        cost: int | Callable[[Scope], int] = 1,
        exempt: Callable[[Scope], bool] | None = None,
        headers: HeaderStyle | None = "both",
        reset: ResetStyle = "delta",
        on_unavailable: FailMode = "open",
        offload: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        chain = tuple(limiters) if isinstance(limiters, Sequence) else (limiters,)
        if not chain:
            raise RateLimitConfigError("RateLimitMiddleware needs at least one limiter")
        if headers is not None and headers not in get_args(HeaderStyle):
            raise RateLimitConfigError(f"headers must be both, ietf, legacy or None: {headers!r}")
        if reset not in get_args(ResetStyle):
            raise RateLimitConfigError(f"reset must be delta or epoch, not {reset!r}")
        if on_unavailable not in get_args(FailMode):
            raise RateLimitConfigError(f"on_unavailable must be open or closed: {on_unavailable!r}")
        if not callable(cost) and (isinstance(cost, bool) or not isinstance(cost, int)):
            raise RateLimitConfigError(f"cost must be an int or a function, not {cost!r}")
        self.app = app
        self.limiters = chain
        self.policies = [limiter.policy for limiter in chain]
        check_policy_names(self.policies)
        self._hits = [as_async_hit(limiter, offload=offload) for limiter in chain]
        self.key = key
        self.cost = cost
        self.exempt = exempt
        self.headers = headers
        self.reset = reset
        self.on_unavailable = on_unavailable
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (self.exempt is not None and self.exempt(scope)):
            await self.app(scope, receive, send)
            return
        identity = self.key(scope)
        if identity is None:
            await self.app(scope, receive, send)
            return
        units = self.cost(scope) if callable(self.cost) else self.cost
        clock = self.clock
        if self.reset == "epoch" and self.headers in ("both", "legacy"):
            now = epoch_now(clock)  # checked before any limiter is charged
            clock = lambda: now  # noqa: E731 - the reading the headers then use
        try:
            decisions = await acheck(self.limiters, self._hits, identity, units)
        except BackendUnavailableError as error:
            if self.on_unavailable == "open":
                _log.warning("rate limiter unavailable, request let through: %s", error)
                await self.app(scope, receive, send)
                return
            _log.warning("rate limiter unavailable, request refused: %s", error)
            body = problem_json(
                [], problem_type=TEMPORARY_REDUCED_CAPACITY, status=503, policies=self.policies
            )
            await _respond(send, 503, body, [])
            return
        response_headers = _encode(
            rate_limit_headers(
                decisions,
                style=self.headers,
                reset=self.reset,
                policies=self.policies,
                clock=clock,
            )
        )
        if not decisions[-1].allowed:
            await _respond(send, 429, problem_json(decisions), response_headers)
            return
        await self.app(scope, receive, _injecting(send, response_headers))


def _injecting(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    """``send`` with ``extra`` added to the response start; a header the app set itself
    wins over ours (it knows better, and a field must not appear twice)."""

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start" and extra:
            own = list(message.get("headers", ()))
            present = {bytes(name).lower() for name, _ in own}
            message = dict(message)
            message["headers"] = own + [pair for pair in extra if pair[0] not in present]
        await send(message)

    return send_with_headers


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    start_headers = [
        (b"content-type", b"application/problem+json"),
        (b"content-length", str(len(body)).encode()),
        *headers,
    ]
    await send({"type": "http.response.start", "status": status, "headers": start_headers})
    await send({"type": "http.response.body", "body": body})
