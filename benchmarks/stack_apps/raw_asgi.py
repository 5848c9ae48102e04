"""Hand-written ASGI: no framework, msgspec encoding. The floor the frameworks add to."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import msgspec

from ranked import AsyncLeaderboard

from ._board import BOARD, CONSTANT_PATH, LIMITED_PATH, RankOut, constant, loaded_board

__all__ = ["constant_app", "rank_app", "submit_app"]

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


def submit_app(board: AsyncLeaderboard) -> App:
    """``POST /v1/boards/{board}/scores`` ``{"member", "score"}`` on ``board``, answered
    with the member's score and rank once the board's journal acknowledged the write: no
    authentication, no validation beyond the body's types, no metrics."""
    decode = msgspec.json.Decoder(_ScoreIn).decode
    path = f"/v1/boards/{board.name}/scores"

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await _lifespan(receive, send)
        if scope["path"] != path or scope["method"] != "POST":
            return await _answer(send, 404, _NOT_FOUND)
        message = await receive()
        body = message.get("body", b"")
        while message.get("more_body", False):
            message = await receive()
            body += message.get("body", b"")
        try:
            found = decode(body)
        except msgspec.DecodeError:
            return await _answer(send, 400, b'{"detail":"bad body"}')
        result = (await board.submit(found.member, found.score)).primary
        return await _answer(send, 200, _encode(RankOut(found.member, result.score, result.rank)))

    return app
