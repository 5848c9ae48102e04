"""FastAPI with a pydantic response model (the constant endpoint only)."""

from __future__ import annotations

from fastapi import FastAPI
from pydantic import BaseModel

from ._board import CONSTANT_PATH

__all__ = ["RankModel", "constant_app"]


class RankModel(BaseModel):
    """A member's score and 1-based rank."""

    member: str
    score: float
    rank: int


def constant_app() -> FastAPI:
    """``GET /const``."""
    app = FastAPI()

    @app.get(CONSTANT_PATH, response_model=RankModel)
    async def answer() -> RankModel:
        return RankModel(member="m1", score=1, rank=1)

    return app
