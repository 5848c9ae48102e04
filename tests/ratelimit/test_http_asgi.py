"""RateLimitMiddleware driven by hand-built ASGI scopes, on memory (fake clock) and Redis."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from ranked.backends.factory import open_async_backend, open_backend
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.errors import OutOfRangeError
from ranked.ratelimit import AsyncRateLimiter, Policy, RateLimiter
from ranked.ratelimit.asgi import (
    Message,
    RateLimitMiddleware,
    Receive,
    Scope,
    Send,
    client_ip,
    forwarded_ip,
)
from ranked.ratelimit.policy import RateLimitConfigError
from servers import RedisServer, free_port

T0 = 1_700_000_000.0
PER_MINUTE = Policy(3, 60, "sliding_log", name="minute")


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@dataclass
class App:
    """The wrapped application: answers 200 "ok" and records what it was given."""

    calls: list[tuple[Scope, Receive, Send]] = field(default_factory=list)
    extra_headers: list[tuple[bytes, bytes]] = field(default_factory=list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls.append((scope, receive, send))
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"text/plain"), *self.extra_headers]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"ok"})


@dataclass
class Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        values = [value for key, value in self.headers if key.lower() == name.lower()]
        assert len(values) <= 1, f"{name} sent {len(values)} times"
        return values[0] if values else None


def http_scope(
    client: str | None = "10.0.0.1", headers: Sequence[tuple[bytes, bytes]] = ()
) -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "headers": list(headers),
        "client": None if client is None else (client, 50000),
        "server": ("127.0.0.1", 8000),
    }


async def receive() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


async def arequest(app: Any, scope: Scope | None = None) -> Response:
    messages: list[Message] = []

    async def send(message: Message) -> None:
        messages.append(message)

    await app(http_scope() if scope is None else scope, receive, send)
    start, body = messages
    assert start["type"] == "http.response.start"
    assert body["type"] == "http.response.body"
    headers = [
        (name.decode("latin-1"), value.decode("latin-1")) for name, value in start["headers"]
    ]
    return Response(start["status"], headers, body["body"])


def request(app: Any, scope: Scope | None = None) -> Response:
    return asyncio.run(arequest(app, scope))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def memory(clock: FakeClock) -> Iterator[MemoryBackend]:
    backend = MemoryBackend(clock=clock)
    yield backend
    backend.close()


@pytest.fixture
def limiter(memory: MemoryBackend) -> RateLimiter:
    return RateLimiter(memory, PER_MINUTE)


def test_allowed_requests_get_headers_and_no_retry_after(limiter: RateLimiter) -> None:
    app = App()
    middleware = RateLimitMiddleware(app, limiter)
    for remaining in (2, 1, 0):
        response = request(middleware)
        assert (response.status, response.body) == (200, b"ok")
        assert response.headers == [
            ("content-type", "text/plain"),
            ("ratelimit-policy", '"minute";q=3;w=60'),
            ("ratelimit", f'"minute";r={remaining};t=60'),
            ("x-ratelimit-limit", "3"),
            ("x-ratelimit-remaining", str(remaining)),
            ("x-ratelimit-reset", "60"),
        ]
    assert len(app.calls) == 3


def test_denied_request_gets_429_problem_and_retry_after(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    app = App()
    middleware = RateLimitMiddleware(app, limiter)
    for _ in range(3):
        assert request(middleware).status == 200
    clock.now += 20
    response = request(middleware)
    assert response.status == 429
    assert len(app.calls) == 3  # the app never saw the refused request
    assert response.header("content-type") == "application/problem+json"
    assert response.header("content-length") == str(len(response.body))
    assert response.header("ratelimit") == '"minute";r=0;t=40'
    assert response.header("retry-after") == "40"
    assert response.header("x-ratelimit-remaining") == "0"
    assert json.loads(response.body) == {
        "type": "https://iana.org/assignments/http-problem-types#quota-exceeded",
        "title": "Request cannot be satisfied as assigned quota has been exceeded",
        "status": 429,
        "detail": "Retry in 40 seconds.",
        "violated-policies": ["minute"],
    }
    clock.now += 40
    allowed = request(middleware)
    assert allowed.status == 200
    assert allowed.header("retry-after") is None


@pytest.mark.parametrize("style", ["ietf", "legacy", None])
def test_header_styles(limiter: RateLimiter, style: Any) -> None:
    middleware = RateLimitMiddleware(App(), limiter, headers=style)
    names = {name for name, _ in request(middleware).headers}
    assert ("ratelimit" in names) == (style == "ietf")
    assert ("x-ratelimit-limit" in names) == (style == "legacy")
    assert "retry-after" not in names
    for _ in range(2):
        request(middleware)
    denied = request(middleware)
    assert denied.status == 429
    assert denied.header("retry-after") == "60"  # whatever the style


def test_epoch_reset(limiter: RateLimiter, clock: FakeClock) -> None:
    middleware = RateLimitMiddleware(App(), limiter, reset="epoch", clock=clock)
    assert request(middleware).header("x-ratelimit-reset") == str(int(T0) + 60)


@pytest.mark.parametrize("reading", [1e13, -1.0, float("nan")])
def test_an_epoch_clock_out_of_range_is_refused_before_any_charge(
    limiter: RateLimiter, reading: float
) -> None:
    middleware = RateLimitMiddleware(App(), limiter, reset="epoch", clock=lambda: reading)
    with pytest.raises(OutOfRangeError, match="the reset clock's reading"):
        request(middleware)
    assert limiter.peek("127.0.0.1", 0).remaining == PER_MINUTE.limit  # nothing charged


def test_identity_is_the_client_address(limiter: RateLimiter) -> None:
    middleware = RateLimitMiddleware(App(), limiter)
    for _ in range(3):
        request(middleware, http_scope("10.0.0.1"))
    assert request(middleware, http_scope("10.0.0.1")).status == 429
    assert request(middleware, http_scope("10.0.0.2")).status == 200
    # a forged X-Forwarded-For does not buy a fresh quota
    forged = http_scope("10.0.0.1", [(b"x-forwarded-for", b"1.2.3.4")])
    assert request(middleware, forged).status == 429


def test_forwarded_ip_trusts_only_the_given_hops() -> None:
    scope = http_scope("10.9.9.9", [(b"x-forwarded-for", b"6.6.6.6, 198.51.100.7, 10.0.0.5")])
    assert forwarded_ip(1)(scope) == "10.0.0.5"
    assert forwarded_ip(2)(scope) == "198.51.100.7"
    assert forwarded_ip(4)(scope) == "10.9.9.9"  # shorter than the hops: the peer
    split = http_scope(
        "10.9.9.9", [(b"X-Forwarded-For", b"1.1.1.1"), (b"x-forwarded-for", b"2.2.2.2")]
    )
    assert forwarded_ip(1)(split) == "2.2.2.2"
    assert forwarded_ip(1)(http_scope("10.9.9.9")) == "10.9.9.9"
    assert client_ip(http_scope(None)) == "unknown"
    with pytest.raises(RateLimitConfigError):
        forwarded_ip(0)


def test_custom_key_cost_and_exempt(limiter: RateLimiter) -> None:
    def user(scope: Scope) -> str | None:
        return None if scope["path"] == "/public" else str(scope["path"])

    middleware = RateLimitMiddleware(
        App(), limiter, key=user, cost=lambda scope: 2, exempt=lambda s: s["path"] == "/health"
    )

    def at(path: str) -> Scope:
        scope = http_scope()
        scope["path"] = path
        return scope

    assert request(middleware, at("/a")).header("ratelimit") == '"minute";r=1;t=60'
    assert request(middleware, at("/a")).status == 429  # 2 more units do not fit in 1
    assert request(middleware, at("/b")).status == 200
    for path in ("/health", "/public"):
        response = request(middleware, at(path))
        assert response.status == 200
        assert response.header("ratelimit") is None
    assert limiter.peek("/health", 0).remaining == 3


def test_cost_above_capacity_is_refused_before_anything_is_charged(
    limiter: RateLimiter, memory: MemoryBackend
) -> None:
    wide = RateLimiter(memory, Policy(100, 60, name="wide"))
    middleware = RateLimitMiddleware(App(), [wide, limiter], cost=5)
    with pytest.raises(RateLimitConfigError):
        request(middleware)
    assert wide.peek("10.0.0.1", 0).remaining == 100


def test_several_limiters(memory: MemoryBackend) -> None:
    burst = RateLimiter(memory, Policy(2, 1, "token_bucket", name="burst"))
    hourly = RateLimiter(memory, Policy(100, 3600, "fixed_window", name="hour"))
    middleware = RateLimitMiddleware(App(), [burst, hourly])
    first = request(middleware)
    assert first.header("ratelimit-policy") == '"burst";q=2;w=1, "hour";q=100;w=3600'
    assert first.header("ratelimit") == '"burst";r=1;t=1, "hour";r=99;t=3600'
    # legacy headers follow the policy closest to exhaustion
    assert first.header("x-ratelimit-limit") == "2"
    assert first.header("x-ratelimit-remaining") == "1"
    request(middleware)
    denied = request(middleware)
    assert denied.status == 429
    # the first denial stops the chain: the hourly quota is not charged for it
    assert denied.header("ratelimit") == '"burst";r=0;t=1'
    assert denied.header("ratelimit-policy") == '"burst";q=2;w=1, "hour";q=100;w=3600'
    assert hourly.peek("10.0.0.1", 0).remaining == 98
    assert json.loads(denied.body)["violated-policies"] == ["burst"]


def test_app_headers_win_over_ours(limiter: RateLimiter) -> None:
    app = App(extra_headers=[(b"RateLimit", b'"app";r=1')])
    response = request(RateLimitMiddleware(app, limiter))
    assert response.header("ratelimit") == '"app";r=1'
    assert response.header("x-ratelimit-remaining") == "2"


@pytest.mark.parametrize("kind", ["websocket", "lifespan"])
def test_other_scopes_pass_through_untouched(limiter: RateLimiter, kind: str) -> None:
    app = App()
    scope: Scope = {"type": kind, "asgi": {"version": "3.0"}, "client": ("10.0.0.1", 1)}
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(RateLimitMiddleware(app, limiter)(scope, receive, send))
    assert app.calls == [(scope, receive, send)]
    assert limiter.peek("10.0.0.1", 0).remaining == 3


def test_async_limiter_and_offloaded_sync_limiter(memory: MemoryBackend) -> None:
    async_limiter = AsyncRateLimiter(AsyncMemoryBackend(sync=memory), PER_MINUTE)
    sync_limiter = RateLimiter(memory, Policy(3, 60, name="other"))
    for middleware in (
        RateLimitMiddleware(App(), async_limiter),
        RateLimitMiddleware(App(), sync_limiter, offload=True),
    ):
        statuses = [request(middleware).status for _ in range(4)]
        assert statuses == [200, 200, 200, 429]


def test_bad_configuration_fails_at_construction(
    limiter: RateLimiter, memory: MemoryBackend
) -> None:
    twin = RateLimiter(memory, Policy(5, 10, name="minute"))
    with pytest.raises(RateLimitConfigError, match="two policies"):
        RateLimitMiddleware(App(), [limiter, twin])
    with pytest.raises(RateLimitConfigError):
        RateLimitMiddleware(App(), [])
    with pytest.raises(RateLimitConfigError):
        RateLimitMiddleware(App(), limiter, headers="all")  # type: ignore[arg-type]
    with pytest.raises(RateLimitConfigError):
        RateLimitMiddleware(App(), limiter, reset="http-date")  # type: ignore[arg-type]
    with pytest.raises(RateLimitConfigError):
        RateLimitMiddleware(App(), limiter, on_unavailable="maybe")  # type: ignore[arg-type]
    with pytest.raises(RateLimitConfigError):
        RateLimitMiddleware(App(), limiter, cost=1.5)  # type: ignore[arg-type]


@pytest.fixture
def dead_limiter() -> Iterator[RateLimiter]:
    """A limiter on a Redis URL where nothing listens."""
    backend = open_backend(f"redis://127.0.0.1:{free_port()}")
    yield RateLimiter(backend, PER_MINUTE)
    backend.close()


def test_unavailable_backend_fails_open_by_default(dead_limiter: RateLimiter) -> None:
    app = App()
    response = request(RateLimitMiddleware(app, dead_limiter))
    assert (response.status, response.body) == (200, b"ok")
    assert response.header("ratelimit") is None
    assert len(app.calls) == 1


def test_unavailable_backend_can_fail_closed(dead_limiter: RateLimiter) -> None:
    app = App()
    response = request(RateLimitMiddleware(app, dead_limiter, on_unavailable="closed"))
    assert response.status == 503
    assert app.calls == []
    assert response.header("retry-after") is None
    assert response.header("content-type") == "application/problem+json"
    assert json.loads(response.body)["type"].endswith("#temporary-reduced-capacity")
    assert json.loads(response.body)["violated-policies"] == ["minute"]


def flush(server: RedisServer) -> None:
    with server.client() as client:
        client.flushall()


def test_on_a_real_redis(redis_server: RedisServer) -> None:
    flush(redis_server)

    async def three_requests() -> list[Response]:
        backend = open_async_backend(redis_server.url)
        try:
            limiter = AsyncRateLimiter(backend, Policy(2, 30, "gcra", name="redis"))
            middleware = RateLimitMiddleware(App(), limiter)
            return [await arequest(middleware) for _ in range(3)]
        finally:
            await backend.close()

    responses = asyncio.run(three_requests())
    check_redis_responses(responses)
    # a blocking limiter on the same server, run in worker threads
    flush(redis_server)
    backend = open_backend(redis_server.url)
    try:
        limiter = RateLimiter(backend, Policy(2, 30, "gcra", name="redis"))
        middleware = RateLimitMiddleware(App(), limiter, offload=True)
        check_redis_responses([request(middleware) for _ in range(3)])
    finally:
        backend.close()


def check_redis_responses(responses: list[Response]) -> None:
    assert [r.status for r in responses] == [200, 200, 429]
    assert responses[0].header("ratelimit-policy") == '"redis";q=2;w=30'
    assert re.fullmatch(r'"redis";r=1;t=(15|30)', responses[0].header("ratelimit") or "")
    assert responses[1].header("retry-after") is None
    retry_after = responses[2].header("retry-after")
    assert retry_after is not None and 1 <= int(retry_after) <= 15
    assert responses[2].header("ratelimit") == f'"redis";r=0;t={retry_after}'
