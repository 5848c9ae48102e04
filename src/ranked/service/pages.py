"""The web page: ``GET /`` (the boards) and ``GET /boards/{board}`` (a board, live), with
their scripts and style from ``static/`` in the package. No build step, nothing fetched
from elsewhere: plain HTML, CSS and a script that calls the API and the live channel
(docs/live.md). These routes are not part of the API's OpenAPI document.
"""

from __future__ import annotations

import html
from importlib.resources import files
from typing import Final

from .http import HTTPProblem, Request, Response, Route
from .registry import Boards

__all__ = ["page_routes"]

_TYPES: Final = {
    ".html": b"text/html; charset=utf-8",
    ".css": b"text/css; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".svg": b"image/svg+xml",
}
_HEADERS: Final = [
    (
        b"content-security-policy",
        b"default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:",
    ),
    (b"x-content-type-options", b"nosniff"),
]


def _load() -> dict[str, bytes]:
    folder = files("ranked.service") / "static"
    return {item.name: item.read_bytes() for item in folder.iterdir() if item.is_file()}


_FILES: Final = _load()


def page_routes(boards: Boards, live_port: int = 0) -> list[Route]:
    """The page's routes, over ``boards``; ``live_port``: the live channels' own port
    (0: none), told to the board page in its ``<meta name="ranked-live">``."""
    board_page = _FILES["board.html"].replace(
        b'<meta name="ranked-live" content="">',
        f'<meta name="ranked-live" content="{live_port or ""}">'.encode(),
    )

    async def index(request: Request) -> Response:
        links = "\n".join(
            f'<li><a href="/boards/{html.escape(name)}">{html.escape(name)}</a></li>'
            for name in boards.names()
            if boards.settings(name).public_reads
        )
        body = _FILES["index.html"].replace(b"<!--boards-->", links.encode())
        return Response(200, body, _TYPES[".html"], list(_HEADERS))

    async def board(request: Request) -> Response:
        boards.get(request.params["board"])  # 404 for no such board
        return Response(200, board_page, _TYPES[".html"], list(_HEADERS))

    async def static(request: Request) -> Response:
        name = request.params["name"]
        found = _FILES.get(name)
        kind = _TYPES.get(name[name.rfind(".") :]) if "." in name else None
        if found is None or kind is None or name.endswith(".html"):
            raise HTTPProblem(404, "no-such-route", f"no file {name!r}")
        return Response(200, found, kind, [(b"cache-control", b"no-cache"), *_HEADERS])

    return [
        Route("GET", "/", index, None, "The boards", media_type="text/html", tag="page"),
        Route("GET", "/boards/{board}", board, None, "A board", media_type="text/html", tag="page"),
        Route("GET", "/static/{name}", static, None, "The page's files", tag="page"),
    ]
