"""Problems (RFC 9457): how a refused request is answered, and which problem each of the
library's typed errors is."""

from __future__ import annotations

from typing import Final

import msgspec

from ..errors import (
    BackendUnavailableError,
    BoardConfigError,
    InvalidCursorError,
    InvalidNameError,
    InvalidScoreError,
    JournalError,
    LayoutError,
    MemberDataError,
    OutOfRangeError,
    PageSizeError,
    RankedError,
    UnknownRankStyleError,
    UnsupportedOperationError,
    WindowError,
)
from .http import HTTPProblem, Response
from .schemas import Problem

__all__ = ["PROBLEM_TYPES", "from_error", "problem_response"]

_PROBLEM_MEDIA: Final = b"application/problem+json"

_BY_ERROR: Final[tuple[tuple[type[RankedError], int, str, str | None], ...]] = (
    (InvalidScoreError, 422, "invalid-score", "score"),
    (OutOfRangeError, 422, "out-of-range", None),
    (InvalidNameError, 422, "invalid-name", None),
    (UnknownRankStyleError, 422, "invalid-parameter", "style"),
    (WindowError, 404, "unknown-window", "window"),
    (InvalidCursorError, 422, "invalid-cursor", "cursor"),
    (PageSizeError, 422, "page-too-large", "limit"),
    (BoardConfigError, 422, "invalid-settings", None),
    (LayoutError, 422, "invalid-settings", None),
    (MemberDataError, 422, "invalid-data", "data"),
    (UnsupportedOperationError, 422, "unsupported", None),
    (JournalError, 503, "journal-unavailable", None),
    (BackendUnavailableError, 503, "backend-unavailable", None),
)

PROBLEM_TYPES: Final = {
    "malformed-json": "The body is not JSON.",
    "invalid-body": "The body does not fit the operation's schema (the field is named).",
    "invalid-parameter": "A query parameter does not fit (the parameter is named).",
    "invalid-member": "A member in the path is empty, too long or has control characters.",
    "invalid-score": "The score is not a finite number the board can hold.",
    "out-of-range": "A number, instant or duration is outside the range every backend holds.",
    "invalid-name": "A name (board, member, key) is not allowed.",
    "unknown-window": "No such window on this board (or its id names no real period).",
    "invalid-cursor": "The cursor was not made by this board.",
    "page-too-large": "More entries than the board's max_page_size.",
    "invalid-settings": "The board refuses this configuration.",
    "invalid-data": "Member data the board cannot store.",
    "unsupported": "The operation does not exist on this backend.",
    "fixed-setting": "A setting that cannot change once the board exists.",
    "unknown-board": "No board by that name.",
    "unknown-member": "The member is not on the board.",
    "no-such-route": "No operation at that path.",
    "method-not-allowed": "The path exists, not with this method.",
    "body-too-large": "The body is over 1 MiB.",
    "bad-path": "A path parameter is not UTF-8.",
    "disconnected": "The client went away mid-request.",
    "unauthorized": "No key, or a key that is unknown or revoked.",
    "forbidden": "The key's scope does not allow this operation.",
    "journal-unavailable": "The journal cannot take or read events now.",
    "backend-unavailable": "The backend (Redis) cannot be reached.",
    "not-ready": "The service is still restoring its boards.",
    "internal": "An error of the service itself (logged).",
    "invalid-notifications": "Notification settings that cannot work (docs/live.md).",
    "no-notifications": "The board has no notification settings.",
}
"""Every problem type the service answers with, and what it means (the API page lists them)."""

_ENCODER: Final = msgspec.json.Encoder()


def from_error(error: RankedError) -> HTTPProblem:
    """The problem a library error is."""
    for kind, status, slug, field in _BY_ERROR:
        if isinstance(error, kind):
            return HTTPProblem(status, slug, str(error), field)
    if isinstance(error, ValueError | TypeError):
        return HTTPProblem(422, "invalid-body", str(error))
    return HTTPProblem(500, "internal", f"{type(error).__name__}: {error}")


def problem_response(problem: HTTPProblem) -> Response:
    """The ``application/problem+json`` answer of ``problem``."""
    body = Problem(
        type=f"/docs#problem-{problem.slug}",
        title=PROBLEM_TYPES.get(problem.slug, problem.slug),
        status=problem.status,
        detail=problem.detail,
        field=problem.field,
    )
    return Response(problem.status, _ENCODER.encode(body), _PROBLEM_MEDIA, problem.headers)
