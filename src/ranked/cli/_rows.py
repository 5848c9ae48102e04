"""Reading ``member,score`` rows from CSV or JSON Lines, one at a time, each checked as
the API checks a submission (so a row the service would refuse for its form is refused
here, with its line number, before anything is sent). A CSV file without the header it
needs raises :class:`~._client.Failure`.

CSV: a header row names the columns; ``member`` and ``score`` are required, any other
column (an export's ``rank``) is ignored, and every row has as many fields as the
header. JSON Lines: one object a line with ``member`` (a string) and ``score`` (a
number); other keys are ignored. Blank lines are skipped. The file is read as UTF-8
(a byte-order mark is allowed); bytes that are not UTF-8 refuse their row only.
O(1) memory in the file's size: rows are produced as they are read.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, Final

from ..service.schemas import MAX_MEMBER_LENGTH
from ._client import Failure

__all__ = ["FORMATS", "Rejected", "Row", "read_rows"]

FORMATS: Final = ("csv", "jsonl")

_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""What the API's member pattern refuses (C0, DEL and C1 controls)."""
_NOT_UTF8: Final = re.compile(r"[\udc80-\udcff]")
"""Bytes that were not UTF-8, as ``surrogateescape`` decoding leaves them."""
_NUMBER: Final = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_INTEGER: Final = re.compile(r"[+-]?\d+", re.ASCII)
_NON_FINITE: Final = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_SHOWN: Final = 80


@dataclass(frozen=True, slots=True)
class Row:
    """A row fit to send: its line, member and score (an int when written as one)."""

    line: int
    member: str
    score: int | float


@dataclass(frozen=True, slots=True)
class Rejected:
    """A row refused: its line, the reason (one of a few, to count them), a detail
    sentence, and the row as read (escaped, shortened)."""

    line: int
    reason: str
    detail: str
    text: str


def shown(text: str) -> str:
    """``text`` safe to print on one line: control characters and stray bytes escaped."""
    escaped = repr(text)[1:-1]
    return escaped if len(escaped) <= _SHOWN else escaped[: _SHOWN - 3] + "..."


def member_problem(value: str) -> tuple[str, str] | None:
    """Why ``value`` is not a member the API takes (reason, detail), or None."""
    if not value:
        return "empty member", "the member is empty"
    if _NOT_UTF8.search(value):
        return "not UTF-8", "the member is not UTF-8 text"
    if len(value) > MAX_MEMBER_LENGTH:
        return (
            "member too long",
            f"the member is {len(value)} characters (at most {MAX_MEMBER_LENGTH})",
        )
    found = _CONTROL.search(value)
    if found:
        return "control character", f"the member holds control character {found.group()!r}"
    return None


def parse_score(text: str) -> int | float | tuple[str, str]:
    """The score written as ``text`` (an int when it is an integer, else a float), or
    why it is not one (reason, detail)."""
    text = text.strip()
    if _NUMBER.fullmatch(text):
        number = float(text)
        if not math.isfinite(number):
            return _too_big(text)
        if _INTEGER.fullmatch(text):
            try:
                return int(text)
            except ValueError:  # past int's digit limit: the float is as exact
                return number
        return number
    if _NON_FINITE.fullmatch(text):
        return "score not finite", f"the score {text!r} is not a finite number"
    return "score not a number", f"the score {shown(text)!r} is not a number"


def _too_big(text: str) -> tuple[str, str]:
    return "score not finite", f"the score {shown(text)!r} is beyond the float64 range"


def _checked(
    line: int, member: str, score: int | float | tuple[str, str], text: str
) -> Row | Rejected:
    problem = member_problem(member)
    if problem is None and isinstance(score, tuple):
        problem = score
    if problem is not None:
        return Rejected(line, problem[0], problem[1], shown(text))
    assert not isinstance(score, tuple)
    return Row(line, member, score)


def read_rows(stream: IO[bytes], kind: str) -> Iterator[Row | Rejected]:
    """The rows of ``stream`` (``kind`` ``csv`` or ``jsonl``), in order."""
    return _csv_rows(stream) if kind == "csv" else _jsonl_rows(stream)


def _csv_rows(stream: IO[bytes]) -> Iterator[Row | Rejected]:
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    try:
        source = str(getattr(stream, "name", "the input"))
        yield from _csv_records(csv.reader(text, strict=False), source)
    finally:
        text.detach()  # the caller's stream stays open


def _csv_records(reader: Any, source: str) -> Iterator[Row | Rejected]:
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as error:
        raise Failure(f"{source}: the header row is not CSV: {error}") from None
    names = [name.strip().lower() for name in header]
    if "member" not in names or "score" not in names or len(set(names)) != len(names):
        raise Failure(
            f"{source}: the first row must be a header naming the columns member and score once"
            f" each (found {shown(','.join(header))!r})"
        )
    at_member, at_score, width = names.index("member"), names.index("score"), len(names)
    line = reader.line_num
    while True:
        start = line + 1
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            line = reader.line_num
            yield Rejected(start, "not CSV", f"the row is not CSV: {error}", "")
            continue
        line = reader.line_num
        if not fields:
            continue  # a blank line
        joined = ",".join(fields)
        if len(fields) != width:
            yield Rejected(
                start,
                "wrong column count",
                f"{len(fields)} fields where the header has {width}",
                shown(joined),
            )
            continue
        yield _checked(start, fields[at_member], parse_score(fields[at_score]), joined)


def _jsonl_rows(stream: IO[bytes]) -> Iterator[Row | Rejected]:
    decode = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    for number, raw in enumerate(stream, 1):
        text = decode.decode(raw[3:] if number == 1 and raw.startswith(codecs.BOM_UTF8) else raw)
        if not text.strip():
            continue
        line = text.rstrip("\r\n")
        try:
            value = json.loads(line)
        except ValueError as error:
            yield Rejected(number, "not JSON", f"the line is not JSON: {error}", shown(line))
            continue
        if not isinstance(value, dict) or "member" not in value or "score" not in value:
            yield Rejected(
                number,
                "not a member/score object",
                'the line is not an object with "member" and "score"',
                shown(line),
            )
            continue
        member, score = value["member"], value["score"]
        if not isinstance(member, str):
            yield Rejected(
                number, "member not a string", "the member is not a JSON string", shown(line)
            )
            continue
        parsed: int | float | tuple[str, str]
        if isinstance(score, bool) or not isinstance(score, int | float):
            parsed = "score not a number", f"the score {shown(json.dumps(score))} is not a number"
        elif isinstance(score, float) and not math.isfinite(score):
            parsed = "score not finite", f"the score {score!r} is not a finite number"
        elif isinstance(score, int) and not math.isfinite(_as_float(score)):
            parsed = _too_big(str(score))
        else:
            parsed = score
        yield _checked(number, member, parsed, line)


def _as_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf
