"""The bare endpoints on ``ranked serve``'s own server stack: granian embedded in the
process and its uvloop event loop, configured by :func:`ranked.cli.serve.http_server`.
``benchmarks/service.py`` measures them beside the service:

- the constant endpoint (:func:`.raw_asgi.constant_app`): the floor of a GET, and of a
  POST that reads its body (at ``/const-limited`` answered with a guarded board's
  RateLimit headers: ``benchmarks/guard.py``'s HTTP floor);
- the naive rank read (:func:`.raw_asgi.rank_app`, ``GET .../members/...``): a board of
  ``--members`` members read by hand-written ASGI with no authentication, validation or
  metrics, the least a Python leaderboard endpoint does on this stack (``--members 0``:
  none);
- with ``--data DIR``, the naive durable submit (:func:`.raw_asgi.submit_app`,
  ``POST .../scores``): the board of the data directory that ``ranked serve`` would
  restore (its snapshot and journal, ``journal.db``), written through the library with
  the journal's ``--durability``, again with nothing else around it;
- with ``--guard JSON`` as well, the naive guarded submit
  (:func:`.raw_asgi.guarded_submit_app`): two boards on one journal, ``plain`` written
  as above and ``guarded`` through the library's ``AsyncGuard`` with that configuration
  (``GuardConfig.from_json``): ``benchmarks/guard.py``'s guard without the service.

    python -m benchmarks.stack_apps.embedded PORT [--members N]
        [--data DIR --durability D [--guard JSON]]
"""

from __future__ import annotations

import argparse
import json
import os

import uvloop

from ranked import AsyncLeaderboard
from ranked.cli.serve import http_server
from ranked.guard import AsyncGuard, GuardConfig
from ranked.journal import open_journal

from ._board import BOARD, CONSTANT_PATH, LIMITED_PATH, MEMBERS_ENV
from .raw_asgi import (
    App,
    Receive,
    Scope,
    Send,
    constant_app,
    guarded_submit_app,
    rank_app,
    submit_app,
)

_CONSTANTS = (CONSTANT_PATH, LIMITED_PATH)
GUARDED = "guarded"
"""The guarded board's name (what ``benchmarks/guard.py`` signs its bodies for)."""


def _app(reads: bool, boards: list[AsyncLeaderboard], guard: AsyncGuard | None) -> App:
    constant = constant_app()
    rank = rank_app() if reads else constant
    submits: dict[str, App] = {}
    for board in boards:
        path = f"/v1/boards/{board.name}/scores"
        if guard is not None and board.name == GUARDED:
            submits[path] = guarded_submit_app(board, guard)
        else:
            submits[path] = submit_app(board)
    submit = constant if not boards else next(iter(submits.values()))

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in _CONSTANTS:
            if scope["method"] == "POST":
                found = submits.get(scope["path"], submit)
                return await found(scope, receive, send)
            return await rank(scope, receive, send)
        return await constant(scope, receive, send)

    return app


async def _serve(
    port: int, reads: bool, data: str | None, durability: str, guard: str | None
) -> None:
    boards: list[AsyncLeaderboard] = []
    store = None
    judge = None if guard is None else AsyncGuard(GuardConfig.from_json(json.loads(guard)))
    if data is not None:
        store = open_journal(
            f"sqlite:///{os.path.abspath(data)}/journal.db?durability={durability}"
        )
        names = [BOARD] if judge is None else ["plain", GUARDED]
        for name in names:
            board = AsyncLeaderboard("memory://", name, journal=store, snapshot_every=None)
            await board.restore()
            boards.append(board)
    try:
        await http_server(_app(reads, boards, judge), "127.0.0.1", port).serve()
    finally:
        for board in boards:
            await board.close()
        if store is not None:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="the bare endpoints on ranked serve's stack")
    parser.add_argument("port", type=int)
    parser.add_argument("--members", type=int, default=None, help="the naive read's board")
    parser.add_argument("--data", default=None, help="a data directory: the naive submit")
    parser.add_argument("--durability", default="always", choices=("always", "batch", "none"))
    parser.add_argument("--guard", default=None, help="a guard's JSON: the naive guarded submit")
    args = parser.parse_args()
    if args.members is not None:
        os.environ[MEMBERS_ENV] = str(args.members)
    reads = args.members != 0
    uvloop.run(_serve(args.port, reads, args.data, args.durability, args.guard))


if __name__ == "__main__":
    main()
