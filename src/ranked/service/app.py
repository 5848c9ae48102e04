"""The service as one ASGI application: routing, keys and scopes, problems, metrics, and
the boards' lifetime (restored at startup, snapshotted at shutdown).

Each request: the router finds its route; the caller's key is checked against the
route's scope (401 without a good key, 403 with too small a scope; a board with
``public_reads`` answers reads without a key); the handler runs; a refusal or a library
error becomes an ``application/problem+json`` answer; the request is counted and timed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec

from ..errors import RankedError
from .apipage import api_page
from .batching import Batchers
from .config import ServiceConfig
from .http import HTTPProblem, Request, Response, Route, Router, json_response
from .keys import KeyStore
from .live import Hub
from .metrics import Metrics
from .notifications import Notifier, notification_routes
from .openapi import openapi
from .pages import page_routes
from .problems import from_error, problem_response
from .registry import Boards
from .routes import api_routes
from .schemas import Health
from .ws import LiveEndpoint

__all__ = ["Service", "create_app"]

_log = logging.getLogger("ranked.service")

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]

_BEARER: Final = b"bearer "
_CHALLENGE: Final = [(b"www-authenticate", b'Bearer realm="ranked"')]


class Service:
    """The ASGI application of one ``ranked serve`` process."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        config.data_dir.mkdir(parents=True, exist_ok=True)
        self.keys = KeyStore(config.data_dir)
        self.boards = Boards(config.backend, config.journal_url, config.snapshot_every)
        self.metrics = Metrics(
            lambda: None if self.boards.store is None else self.boards.store.stats,
            lambda: (0, 0) if self.boards.store is None else self.boards.store.lane_counts(),
        )
        self.hub = Hub(self.boards)
        """The live channels' events (docs/live.md)."""
        self.live = LiveEndpoint(self.hub, self.boards, self.keys)
        self.batchers = Batchers(self.boards, self.metrics, self.hub)
        """The boards' batched increments (``batch_incr_ms``; docs/live.md)."""
        routes = api_routes(self.boards, self.metrics, self.hub, self.batchers)
        self.notifier = Notifier(self.boards, self.hub, self.metrics)
        """Rank-change notifications (docs/live.md): started once the boards are open."""
        routes += notification_routes(self.notifier)
        routes += self._own_routes()
        self.router = Router(routes + page_routes(self.boards, config.live_port))
        self.on_started: list[Callable[[], Awaitable[None]]] = []
        """Run once the boards are restored (``ranked demo`` starts its players here)."""
        self.on_stopping: list[Callable[[], Awaitable[None]]] = []
        """Run first at shutdown, before the boards are closed."""
        self.on_started.append(self.notifier.open)
        self.on_stopping.append(self.notifier.close)
        document = openapi(routes)
        self.document = msgspec.json.encode(document)
        self.page = api_page(document).encode()

    def _own_routes(self) -> list[Route]:
        return [
            Route("GET", "/healthz", self._healthz, None, "Alive", response=Health, tag="service"),
            Route(
                "GET",
                "/readyz",
                self._readyz,
                None,
                "Ready: every board restored",
                response=Health,
                problems=(503,),
                tag="service",
            ),
            Route(
                "GET",
                "/metrics",
                self._metrics,
                None,
                "Prometheus metrics",
                media_type="text/plain",
                tag="service",
            ),
            Route(
                "GET",
                "/openapi.json",
                self._openapi,
                None,
                "This API's OpenAPI document",
                tag="service",
            ),
            Route(
                "GET",
                "/docs",
                self._docs,
                None,
                "This API, as a page",
                media_type="text/html",
                tag="service",
            ),
        ]

    # -- ASGI ---------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self.live(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _http(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        name = "unmatched"
        try:
            route, params = self.router.match(
                scope["method"], scope.get("raw_path") or scope["path"].encode()
            )
            name = route.path
            request = Request(scope, receive, route, params)
            if route.scope is not None:
                self._authorize(request, route)
            response = await route.handler(request)
        except HTTPProblem as problem:
            response = problem_response(problem)
        except RankedError as error:
            response = problem_response(from_error(error))
        except Exception:
            _log.exception("%s %s failed", scope["method"], scope["path"])
            response = problem_response(
                HTTPProblem(500, "internal", "the service failed; see its log")
            )
        await response.send(send)
        self.metrics.observe(name, scope["method"], response.status, time.perf_counter() - started)

    def _authorize(self, request: Request, route: Route) -> None:
        header = request.header(b"authorization")
        if header is None:
            if route.board_reads and self.boards.settings(request.params["board"]).public_reads:
                return
            raise HTTPProblem(
                401,
                "unauthorized",
                "this operation needs a key (Authorization: Bearer <key>)",
                headers=_CHALLENGE,
            )
        if header[:7] != b"Bearer " and header[:7].lower() != _BEARER:
            raise HTTPProblem(
                401,
                "unauthorized",
                "the Authorization header must be 'Bearer <key>'",
                headers=_CHALLENGE,
            )
        key = self.keys.authenticate_bearer(header[7:])
        if key is None:
            raise HTTPProblem(
                401, "unauthorized", "the key is unknown or revoked", headers=_CHALLENGE
            )
        assert route.scope is not None
        if not key.scope.allows(route.scope):
            raise HTTPProblem(
                403,
                "forbidden",
                f"this operation needs a key of scope {route.scope.value}"
                f" (this one is {key.scope.value})",
            )
        request.key = key

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.boards.open()
                    for hook in self.on_started:
                        await hook()
                except Exception as error:
                    _log.exception("startup failed")
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
                _log.info("serving at http://%s:%d", self.config.host, self.config.port)
            elif message["type"] == "lifespan.shutdown":
                try:
                    for hook in self.on_stopping:
                        await hook()
                    await self.batchers.close()  # pending increments are written
                    await self.hub.close()
                    await self.boards.close()
                finally:
                    self.keys.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def stopping(self) -> None:
        """The server is stopping: close the live channels (1001) so that their
        connections end and the server's drain does not wait for them; write the batched
        increments at once, so that their requests are answered."""
        self.hub.closing()
        self.batchers.stopping()

    # -- the service's own routes -------------------------------------------------------

    async def _healthz(self, request: Request) -> Response:
        return json_response(Health("ok"))

    async def _readyz(self, request: Request) -> Response:
        if not self.boards.ready:
            raise HTTPProblem(503, "not-ready", "the boards are still being restored")
        return json_response(Health("ready"))

    async def _metrics(self, request: Request) -> Response:
        for name in self.boards.names():
            self.metrics.members.labels(name).set(await self.boards.get(name).count())
        return Response(200, self.metrics.render(), b"text/plain; version=0.0.4; charset=utf-8")

    async def _openapi(self, request: Request) -> Response:
        return Response(200, self.document)

    async def _docs(self, request: Request) -> Response:
        return Response(200, self.page, b"text/html; charset=utf-8")


def create_app(config: ServiceConfig | None = None) -> Service:
    """The service's ASGI application (for any ASGI server; ``ranked serve`` embeds granian)."""
    return Service(config or ServiceConfig())
