"""The bare constant endpoint (:func:`.raw_asgi.constant_app`) on ``ranked serve``'s own
server stack: granian embedded in the process and its uvloop event loop, configured by
:func:`ranked.cli.serve.http_server`. ``benchmarks/service.py`` measures it as the floor
of a GET and of a POST (which reads its body) on that stack.

    python -m benchmarks.stack_apps.embedded PORT
"""

from __future__ import annotations

import sys

import uvloop

from ranked.cli.serve import http_server

from .raw_asgi import constant_app


async def _serve(port: int) -> None:
    await http_server(constant_app(), "127.0.0.1", port).serve()


if __name__ == "__main__":
    uvloop.run(_serve(int(sys.argv[1])))
