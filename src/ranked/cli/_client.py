"""The HTTP client the board commands share: ``--url`` and ``--key``, one call per API
operation decoded into the service's own msgspec types, and refusals as one-line errors.

A problem+json answer becomes ``ranked: <status> <detail> (field: <field>)`` and exit
status 1; a refused connection says there is no service at the URL. Calls marked
``retry`` (reads, and writes that carry an idempotency key) are sent again after a
dropped connection or a 503, with exponential backoff: a service that restarts during a
long import or export is waited for, and a keyed write is applied once however often it
is sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import IO, Any, Final, Self, TypeVar
from urllib.parse import quote

import click
import httpx
import msgspec

from ..service.schemas import Problem

__all__ = [
    "DEFAULT_URL",
    "Client",
    "Failure",
    "board_path",
    "client_options",
]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_URL: Final = "http://127.0.0.1:8080"
"""Where ``ranked serve`` listens when nothing says otherwise."""

_TIMEOUT: Final = httpx.Timeout(60.0, connect=5.0)
_PROBLEM_SLUG: Final = "#problem-"


class Failure(click.ClickException):
    """A command that cannot go on: printed as ``ranked: <message>``, exit status 1.

    When the service refused a request (an ``application/problem+json`` answer),
    ``status``, ``slug`` (the problem type's short name: ``invalid-body``,
    ``unknown-board``, ...), ``detail`` and ``field`` say how; otherwise ``status`` is
    None. (A click exception, as the service's ``HTTPProblem`` is an HTTP answer: how
    the surface reports, not one of the library's errors.)"""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        slug: str = "",
        detail: str = "",
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.slug = slug
        self.detail = detail or message
        self.field = field

    @classmethod
    def refused(cls, status: int, detail: str, field: str | None, slug: str) -> Failure:
        """The service's refusal: ``<status> <detail> (field: <field>)``."""
        where = f" (field: {field})" if field else ""
        return cls(
            f"{status} {detail}{where}", status=status, slug=slug, detail=detail, field=field
        )

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"ranked: {self.message}", err=True)


def board_path(board: str, *rest: str) -> str:
    """The API path of ``board`` (quoted: a name may hold ``/`` or ``?``)."""
    return "/".join(["/v1/boards", quote(board, safe=""), *rest])


class Client:
    """One service's API over HTTP (a pooled connection; not thread-safe).

    ``attempts``: how many times a ``retry`` call is sent in all before it fails; the
    waits between them double from ``backoff`` seconds.
    """

    def __init__(
        self, url: str, key: str | None, *, attempts: int = 6, backoff: float = 0.25
    ) -> None:
        self.url = url.rstrip("/")
        self.key = key
        headers = {"user-agent": "ranked-cli"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=_TIMEOUT)
        self._attempts = max(1, attempts)
        self._backoff = backoff
        self._answered = False
        """Whether the service has answered once: a refused connection before that means
        there is no service (fail at once); after it, a restart (wait for it)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def call(
        self,
        method: str,
        path: str,
        kind: type[T],
        *,
        body: Any = None,
        params: Mapping[str, str | int] | None = None,
        retry: bool = False,
        wait: bool = False,
    ) -> T:
        """Send one request and decode its answer as ``kind``; a refusal, or anything
        else that goes wrong, raises :class:`Failure`.

        ``body`` is encoded with msgspec (a Struct or plain data). ``wait``: no read
        timeout (rebuilds and snapshots of big boards take long)."""
        content = None if body is None else msgspec.json.encode(body)
        headers = {"content-type": "application/json"} if content is not None else None
        timeout = httpx.Timeout(None, connect=5.0) if wait else _TIMEOUT
        attempt = 0
        while True:
            attempt += 1
            last = attempt >= self._attempts or not retry
            try:
                response = self._http.request(
                    method, path, content=content, params=params, headers=headers, timeout=timeout
                )
            except httpx.ConnectError as error:
                if not self._answered:
                    raise Failure(
                        f"no service at {self.url} (start it with `ranked serve`)"
                    ) from error
                if last:
                    raise Failure(f"the service at {self.url} went away: {error}") from error
            except httpx.TransportError as error:
                if last:
                    raise Failure(f"no answer from {self.url}: {_describe(error)}") from error
            else:
                self._answered = True
                if response.status_code != 503 or last:
                    return self._decode(response, kind)
            time.sleep(self._backoff * 2 ** (attempt - 1))

    def _decode(self, response: httpx.Response, kind: type[T]) -> T:
        if response.is_success:
            try:
                return msgspec.json.decode(response.content, type=kind)
            except msgspec.MsgspecError as error:
                raise Failure(
                    f"{self.url} answered {response.request.url.path} with a body that is"
                    f" not the ranked API's: {error}"
                ) from None
        try:
            problem = msgspec.json.decode(response.content, type=Problem)
        except msgspec.MsgspecError:
            raise Failure(f"{response.status_code} {response.reason_phrase}") from None
        detail = problem.detail
        if response.status_code == 401 and not self.key:
            detail += "; give one with --key or RANKED_KEY"
        slug = problem.type.rpartition(_PROBLEM_SLUG)[2]
        raise Failure.refused(response.status_code, detail, problem.field, slug)


def _describe(error: httpx.TransportError) -> str:
    return str(error) or type(error).__name__


def _check_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise click.BadParameter(f"{value!r} is not an http:// or https:// URL")
    return value


def client_options(function: F) -> F:
    """``--url`` (or ``RANKED_URL``) and ``--key`` (or ``RANKED_KEY``): which service,
    and the API key to send it."""
    function = click.option(
        "--key",
        envvar="RANKED_KEY",
        default=None,
        help="The API key (Authorization: Bearer); env RANKED_KEY.",
    )(function)
    return click.option(
        "--url",
        envvar="RANKED_URL",
        default=DEFAULT_URL,
        show_default=True,
        callback=_check_url,
        help="The service's base URL; env RANKED_URL.",
    )(function)
