"""Hand-written ASGI: no framework, msgspec encoding. The floor the frameworks add to."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, TypeVar

import msgspec

from ranked import AsyncLeaderboard
from ranked.guard import AsyncGuard

from ._board import BOARD, CONSTANT_PATH, LIMITED_PATH, RankOut, constant, loaded_board

__all__ = ["constant_app", "guarded_submit_app", "rank_app", "submit_app"]

T = TypeVar("T")
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_encode = msgspec.json.Encoder().encode
_NOT_FOUND = b'{"detail":"not found"}'


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


_LIMIT_HEADERS = [
    (b"ratelimit-policy", b'"ip";q=1000000;w=1'),
    (b"ratelimit", b'"ip";r=999999;t=1'),
]
"""What a guarded board's accepted answer adds: the IETF RateLimit headers of one policy."""


async def _answer(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if extra:
        headers += extra
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def constant_app() -> App:
    """``GET /const``; ``POST /const`` reads the whole body first (and ignores it);
    ``/const-limited`` also answers with the RateLimit headers of a guarded board."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await _lifespan(receive, send)
        path = scope["path"]
        if path in (CONSTANT_PATH, LIMITED_PATH):
            if scope["method"] == "POST":
                while (await receive()).get("more_body", False):
                    pass
            extra = _LIMIT_HEADERS if path == LIMITED_PATH else None
            return await _answer(send, 200, _encode(constant()), extra)
        return await _answer(send, 404, _NOT_FOUND)

    return app


def rank_app() -> App:
    """``GET /v1/boards/{board}/members/{member}`` on the loaded board (O(log n))."""
    boards = {BOARD: loaded_board()}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await _lifespan(receive, send)
        parts = scope["path"].split("/")
        # ["", "v1", "boards", board, "members", member]
        if len(parts) == 6 and parts[1] == "v1" and parts[2] == "boards" and parts[4] == "members":
            board = boards.get(parts[3])
            member = parts[5]
            entry = None if board is None else board.entry(member)
            if entry is not None:
                return await _answer(send, 200, _encode(RankOut(member, entry.score, entry.rank)))
        return await _answer(send, 404, _NOT_FOUND)

    return app


class _ScoreIn(msgspec.Struct):
    member: str
    score: float


async def _body(receive: Receive) -> bytes:
    message = await receive()
    body: bytes = message.get("body", b"")
    while message.get("more_body", False):
        message = await receive()
        body += message.get("body", b"")
    return body


def _post_app(
    path: str, decode: Callable[[bytes], T], answer: Callable[[T, Scope, Send], Awaitable[None]]
) -> App:
    """``POST path``: the body decoded by ``decode`` (400 when it does not decode), then
    ``answer(decoded, scope, send)``; 404 for anything else."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await _lifespan(receive, send)
        if scope["path"] != path or scope["method"] != "POST":
            return await _answer(send, 404, _NOT_FOUND)
        try:
            found = decode(await _body(receive))
        except msgspec.DecodeError:
            return await _answer(send, 400, b'{"detail":"bad body"}')
        return await answer(found, scope, send)

    return app


def submit_app(board: AsyncLeaderboard) -> App:
    """``POST /v1/boards/{board}/scores`` ``{"member", "score"}`` on ``board``, answered
    with the member's score and rank once the board's journal acknowledged the write: no
    authentication, no validation beyond the body's types, no metrics."""

    async def answer(found: _ScoreIn, scope: Scope, send: Send) -> None:
        result = (await board.submit(found.member, found.score)).primary
        return await _answer(send, 200, _encode(RankOut(found.member, result.score, result.rank)))

    return _post_app(
        f"/v1/boards/{board.name}/scores", msgspec.json.Decoder(_ScoreIn).decode, answer
    )


class _SignedIn(msgspec.Struct):
    member: str
    score: float
    client_time: int | None = None
    nonce: str | None = None
    signature: str | None = None


def guarded_submit_app(board: AsyncLeaderboard, guard: AsyncGuard) -> App:
    """:func:`submit_app` through the library's write guard: ``POST
    /v1/boards/{board}/scores`` with a signed body, judged by ``guard`` as a client's
    (the connection's peer as its IP), answered with the member's score and rank, or 403
    with the verdict's reason. No authentication, metrics or RateLimit headers: the
    guard with nothing of the service around it."""

    async def answer(found: _SignedIn, scope: Scope, send: Send) -> None:
        client = scope.get("client")
        verdict = await guard.submit(
            board,
            found.member,
            found.score,
            client_time=found.client_time,
            nonce=found.nonce,
            signature=found.signature,
            ip=None if client is None else client[0],
            key_scope="read",
        )
        if verdict.submission is None:
            return await _answer(send, 403, _encode({"detail": verdict.reason}))
        result = verdict.submission.primary
        return await _answer(send, 200, _encode(RankOut(found.member, result.score, result.rank)))

    return _post_app(
        f"/v1/boards/{board.name}/scores", msgspec.json.Decoder(_SignedIn).decode, answer
    )
