"""The baseline service a typical user writes first: FastAPI + redis-py asyncio (hiredis).

``POST /v1/boards/{board}/scores`` (``{"member": ..., "score": ...}``) runs ZADD, then
ZREVRANK, and answers ``{member, score, rank}``; ``GET /v1/boards/{board}/members/{member}``
runs ZSCORE, then ZREVRANK (404 when absent). Two round trips per request, one after the
other, as the straightforward code does; ranks are 1-based, best (highest) first; the
board lives in the sorted set ``lb:<board>``.

Served by ``benchmarks/service_stack.py``::

    RANKED_BASELINE_REDIS=redis://127.0.0.1:6379/0 \\
        uvicorn --factory benchmarks.baseline_service:make_app

:func:`load` fills a board first (pipelined ZADDs).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis
import redis.asyncio as aredis
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

__all__ = ["REDIS_ENV", "RankModel", "ScoreIn", "key", "load", "make_app"]

REDIS_ENV = "RANKED_BASELINE_REDIS"
_PRIME = 1_000_003


class ScoreIn(BaseModel):
    """A submitted score."""

    member: str
    score: float


class RankModel(BaseModel):
    """A member's score and 1-based rank."""

    member: str
    score: float
    rank: int


def key(board: str) -> str:
    """The sorted set holding ``board``."""
    return f"lb:{board}"


def load(url: str, board: str, size: int, chunk: int = 10_000) -> None:
    """Put members ``m0`` .. ``m<size-1>`` on ``board`` (the scores the memory:// apps
    use), ``chunk`` members per ZADD, all ZADDs in one pipeline."""
    client = redis.Redis.from_url(url)
    try:
        pipe = client.pipeline(transaction=False)
        for start in range(0, size, chunk):
            stop = min(start + chunk, size)
            pipe.zadd(key(board), {f"m{i}": float(i * 7919 % _PRIME) for i in range(start, stop)})
        pipe.execute()
    finally:
        client.close()


def make_app() -> FastAPI:
    """The app, talking to the Redis at ``$RANKED_BASELINE_REDIS``."""
    client = aredis.Redis.from_url(os.environ[REDIS_ENV], decode_responses=True)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await client.aclose()

    app = FastAPI(lifespan=lifespan)

    @app.post("/v1/boards/{board}/scores", response_model=RankModel)
    async def submit(board: str, body: ScoreIn) -> RankModel:
        await client.zadd(key(board), {body.member: body.score})
        rank = await client.zrevrank(key(board), body.member)
        if not isinstance(rank, int):  # None: removed in between by another client
            raise HTTPException(409, "member removed concurrently")
        return RankModel(member=body.member, score=body.score, rank=rank + 1)

    @app.get("/v1/boards/{board}/members/{member}", response_model=RankModel)
    async def read(board: str, member: str) -> RankModel:
        score = await client.zscore(key(board), member)
        rank = await client.zrevrank(key(board), member)
        if score is None or not isinstance(rank, int):
            raise HTTPException(404, "not found")
        return RankModel(member=member, score=score, rank=rank + 1)

    return app
