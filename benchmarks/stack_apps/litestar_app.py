"""Litestar: handlers return msgspec structs, which it encodes natively."""

from __future__ import annotations

from litestar import Litestar, get
from litestar.exceptions import NotFoundException

from ._board import BOARD, CONSTANT_PATH, RankOut, constant, loaded_board

__all__ = ["constant_app", "rank_app"]


def constant_app() -> Litestar:
    """``GET /const``."""

    @get(CONSTANT_PATH)
    async def answer() -> RankOut:
        return constant()

    return Litestar([answer])


def rank_app() -> Litestar:
    """``GET /v1/boards/{board}/members/{member}`` on the loaded board (O(log n))."""
    boards = {BOARD: loaded_board()}

    @get("/v1/boards/{board:str}/members/{member:str}")
    async def rank(board: str, member: str) -> RankOut:
        found = boards.get(board)
        entry = None if found is None else found.entry(member)
        if entry is None:
            raise NotFoundException("not found")
        return RankOut(member, entry.score, entry.rank)

    return Litestar([rank])
