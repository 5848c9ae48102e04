"""The service's HTTP layer on ASGI: a request, a response, the error every handler may
raise, and a table of routes matched by path segments.

It is this thin by measurement (benchmarks/RESULTS-service-stack.md, per server core under
granian): a rank read on a raw ASGI application answers 1.6x Starlette's requests and 3.7x
Litestar's; a constant endpoint 1.4x Starlette's and 3x Litestar's. What a framework would
add is done once, in :mod:`.app`, with well-kept libraries: msgspec decodes and checks
bodies, encodes responses and generates the OpenAPI document's schemas; prometheus-client
renders the metrics.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, unquote

import msgspec

from .keys import KeyInfo, Scope

__all__ = [
    "MAX_BODY",
    "HTTPProblem",
    "Request",
    "Response",
    "Route",
    "Router",
]

MAX_BODY: Final = 1 << 20
"""The largest request body read (bytes); a larger one is refused with 413."""

_JSON: Final = b"application/json"
_PROBLEM: Final = b"application/problem+json"


class HTTPProblem(Exception):
    """A request refused: its status, a short slug naming the problem type, a detail
    sentence and the field it is about (rendered as ``application/problem+json``)."""

    def __init__(
        self,
        status: int,
        slug: str,
        detail: str,
        field: str | None = None,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.slug = slug
        self.detail = detail
        self.field = field
        self.headers = headers or []


class Request:
    """One HTTP request: what the router matched and the caller's key, once checked."""

    __slots__ = ("_query", "key", "params", "receive", "route", "scope")

    def __init__(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[dict[str, Any]]],
        route: Route,
        params: dict[str, str],
    ) -> None:
        self.scope = scope
        self.receive = receive
        self.route = route
        self.params = params
        self.key: KeyInfo | None = None
        self._query: dict[str, str] | None = None

    def header(self, name: bytes) -> bytes | None:
        """The first value of header ``name`` (lower case), or None."""
        for key, value in self.scope["headers"]:
            if key == name:
                return value  # type: ignore[no-any-return]
        return None

    @property
    def query(self) -> dict[str, str]:
        """The query string's parameters (the last value of a repeated one)."""
        if self._query is None:
            raw = self.scope.get("query_string", b"")
            self._query = (
                dict(parse_qsl(raw.decode("latin-1"), keep_blank_values=True)) if raw else {}
            )
        return self._query

    async def body(self) -> bytes:
        """The whole body; :class:`HTTPProblem` 413 past :data:`MAX_BODY`."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise HTTPProblem(400, "disconnected", "the client went away mid-request")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY:
                raise HTTPProblem(413, "body-too-large", f"the body is over {MAX_BODY} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


@dataclass(slots=True)
class Response:
    """What a handler answers: a status, a body and its media type, extra headers."""

    status: int
    body: bytes
    media_type: bytes = _JSON
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)

    async def send(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": self.status,
                "headers": [
                    (b"content-type", self.media_type),
                    (b"content-length", b"%d" % len(self.body)),
                    *self.headers,
                ],
            }
        )
        await send({"type": "http.response.body", "body": self.body})


Handler = Callable[[Request], Awaitable[Response]]


@dataclass(slots=True)
class Route:
    """One operation: method and path template (``{name}`` segments), its handler, the
    scope a caller's key needs (None: open to everyone), and what the OpenAPI document
    says of it (summary, body and response types, query parameters, statuses)."""

    method: str
    path: str
    handler: Handler
    scope: Scope | None
    summary: str
    body: type | None = None
    response: type | None = None
    status: int = 200
    query: type | None = None
    problems: tuple[int, ...] = ()
    tag: str = "boards"
    board_reads: bool = False
    """A read of a board: open to clients without a key when the board allows it."""
    media_type: str = "application/json"
    answers: tuple[tuple[int, str, type], ...] = ()
    """Other success answers: (status, description, response type)."""
    segments: tuple[str, ...] = ()
    name: str = ""
    literals: tuple[tuple[int, str], ...] = ()
    """The fixed segments by position: what a path must hold to match."""
    variables: tuple[tuple[int, str], ...] = ()
    """The ``{name}`` segments by position."""

    def __post_init__(self) -> None:
        self.segments = tuple(self.path.strip("/").split("/"))
        self.name = f"{self.method} {self.path}"
        self.literals = tuple((i, s) for i, s in enumerate(self.segments) if s[:1] != "{")
        self.variables = tuple((i, s[1:-1]) for i, s in enumerate(self.segments) if s[:1] == "{")


class Router:
    """Routes by method and path segments: O(routes with that many segments)."""

    def __init__(self, routes: list[Route]) -> None:
        self.routes = routes
        self._table: dict[tuple[str, int], list[Route]] = {}
        self._paths: dict[int, list[Route]] = {}
        for route in routes:
            self._table.setdefault((route.method, len(route.segments)), []).append(route)
            self._paths.setdefault(len(route.segments), []).append(route)

    def match(self, method: str, raw_path: bytes) -> tuple[Route, dict[str, str]]:
        """The route of ``method`` and ``raw_path`` and its path parameters (decoded);
        :class:`HTTPProblem` 404 when no path matches, 405 when the method does not."""
        parts = raw_path.decode("latin-1").strip("/").split("/")
        for route in self._table.get((method, len(parts)), ()):
            params = _match(route, parts)
            if params is not None:
                return route, params
        allowed = sorted(
            {r.method for r in self._paths.get(len(parts), ()) if _match(r, parts) is not None}
        )
        if allowed:
            raise HTTPProblem(
                405,
                "method-not-allowed",
                f"{method} is not allowed here (allowed: {', '.join(allowed)})",
                headers=[(b"allow", ", ".join(allowed).encode())],
            )
        raise HTTPProblem(404, "no-such-route", f"no route {raw_path.decode('latin-1')!r}")


def _match(route: Route, parts: list[str]) -> dict[str, str] | None:
    """The path parameters when ``parts`` (as many as the route's segments) fit the
    route's fixed segments, else None: the fixed ones are compared before anything is
    decoded."""
    for index, literal in route.literals:
        if parts[index] != literal:
            return None
    params: dict[str, str] = {}
    for index, name in route.variables:
        part = parts[index]
        if "%" not in part:
            params[name] = part
            continue
        try:
            params[name] = unquote(part, errors="strict")
        except UnicodeDecodeError:
            raise HTTPProblem(
                400, "bad-path", f"path parameter {{{name}}} is not UTF-8", name
            ) from None
    return params


def json_response(value: Any, status: int = 200) -> Response:
    """``value`` encoded as JSON."""
    return Response(status, _ENCODER.encode(value))


_ENCODER: Final = msgspec.json.Encoder()
