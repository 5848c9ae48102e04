"""Starlette routing, responses encoded with msgspec."""

from __future__ import annotations

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ._board import BOARD, CONSTANT_PATH, RankOut, constant, loaded_board

__all__ = ["constant_app", "rank_app"]

_encode = msgspec.json.Encoder().encode


def _json(value: RankOut) -> Response:
    return Response(_encode(value), media_type="application/json")


def constant_app() -> Starlette:
    """``GET /const``."""

    async def answer(request: Request) -> Response:
        return _json(constant())

    return Starlette(routes=[Route(CONSTANT_PATH, answer)])


def rank_app() -> Starlette:
    """``GET /v1/boards/{board}/members/{member}`` on the loaded board (O(log n))."""
    boards = {BOARD: loaded_board()}

    async def rank(request: Request) -> Response:
        board = boards.get(request.path_params["board"])
        member: str = request.path_params["member"]
        entry = None if board is None else board.entry(member)
        if entry is None:
            raise HTTPException(404, "not found")
        return _json(RankOut(member, entry.score, entry.rank))

    return Starlette(routes=[Route("/v1/boards/{board}/members/{member}", rank)])
