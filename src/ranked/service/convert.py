"""From the library's answers to the API's bodies, and from the API's query strings to
the library's arguments."""

from __future__ import annotations

import re
from typing import Any, Final, TypeVar

import msgspec

from ..leaderboard import Submission
from .http import HTTPProblem
from .schemas import MAX_MEMBER_LENGTH, EntryOut, SubmitResult, WindowOut

__all__ = ["entries", "field_of", "member", "query", "submitted"]

T = TypeVar("T")

_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""What a member may not contain (the bodies' pattern refuses the same)."""


def submitted(result: Submission) -> SubmitResult:
    """A submission's answer."""
    primary = result.primary
    return SubmitResult(
        member=_text(result.member),
        score=primary.score,
        rank=primary.rank,
        previous_score=primary.previous_score,
        previous_rank=primary.previous_rank,
        changed=primary.changed,
        window=primary.window,
        windows=[
            WindowOut(w.window, w.score, w.rank, w.previous_score, w.previous_rank, w.changed)
            for w in result.windows.values()
        ],
    )


def entries(found: Any) -> list[EntryOut]:
    """Entries as the API shows them."""
    return [EntryOut(_text(e.member), e.score, e.rank) for e in found]


def _text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def member(value: str) -> str:
    """A member named in a path: refused (422) when the API would refuse it in a body."""
    if (
        not value
        or len(value) > MAX_MEMBER_LENGTH
        # printable ASCII has none of _CONTROL's characters: the pattern reads the rest
        or (not (value.isascii() and value.isprintable()) and _CONTROL.search(value) is not None)
    ):
        raise HTTPProblem(
            422,
            "invalid-member",
            "a member is 1 to 200 characters with no control characters",
            "member",
        )
    return value


def query(params: dict[str, str], kind: type[T]) -> T:
    """The query parameters as ``kind`` (a msgspec Struct; numbers are converted from
    their text): :class:`HTTPProblem` 422 naming the parameter otherwise."""
    try:
        return msgspec.convert(params, kind, strict=False)
    except msgspec.ValidationError as error:
        raise HTTPProblem(422, "invalid-parameter", str(error), _field(error)) from None


def _field(error: msgspec.ValidationError) -> str | None:
    """The ``$.path`` a msgspec error names, if any."""
    text = str(error)
    at = text.rfind(" - at `")
    if at >= 0:
        return text[at + 7 : -1]
    if "Object missing required field `" in text:
        name = text.split("`")[1]
        return f"$.{name}"
    if "Object contains unknown field `" in text:
        name = text.split("`")[1]
        return f"$.{name}"
    return None


def field_of(error: msgspec.ValidationError) -> str | None:
    """The field a msgspec error is about (``$.score``), if it names one."""
    return _field(error)
