"""The bare endpoints on ``ranked serve``'s own server stack: granian embedded in the
process and its uvloop event loop, configured by :func:`ranked.cli.serve.http_server`.
``benchmarks/service.py`` measures them beside the service:

- the constant endpoint (:func:`.raw_asgi.constant_app`): the floor of a GET, and of a
  POST that reads its body;
- the naive rank read (:func:`.raw_asgi.rank_app`, every other path): a board of
  ``MEMBERS`` members read by hand-written ASGI with no authentication, validation or
  metrics, the least a Python leaderboard endpoint does on this stack.

    python -m benchmarks.stack_apps.embedded PORT [MEMBERS]
"""

from __future__ import annotations

import os
import sys

import uvloop

from ranked.cli.serve import http_server

from ._board import CONSTANT_PATH, MEMBERS_ENV
from .raw_asgi import App, Receive, Scope, Send, constant_app, rank_app


def _app() -> App:
    constant, rank = constant_app(), rank_app()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != CONSTANT_PATH:
            return await rank(scope, receive, send)
        return await constant(scope, receive, send)

    return app


async def _serve(port: int) -> None:
    await http_server(_app(), "127.0.0.1", port).serve()


if __name__ == "__main__":
    if len(sys.argv) > 2:
        os.environ[MEMBERS_ENV] = sys.argv[2]
    uvloop.run(_serve(int(sys.argv[1])))
