"""The import's row reader (no service): scores, members, line numbers, streaming."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from ranked.cli._client import Failure
from ranked.cli._rows import Rejected, Row, member_problem, parse_score, read_rows


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("10", 10),
        (" -3 ", -3),
        ("+7", 7),
        ("20.5", 20.5),
        (".5", 0.5),
        ("5.", 5.0),
        ("1e3", 1000.0),
        ("-2.5E-2", -0.025),
        ("9007199254740993", 9007199254740993),  # kept as an int: the service decides
        ("1" * 300, int("1" * 300)),
    ],
)
def test_scores_that_parse(text: str, value: float) -> None:
    parsed = parse_score(text)
    assert parsed == value
    assert type(parsed) is type(value)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "score not a number"),
        ("abc", "score not a number"),
        ("1_000", "score not a number"),
        ("0x10", "score not a number"),
        ("\uff11\uff12", "score not a number"),  # fullwidth digits
        ("1,5", "score not a number"),
        ("nan", "score not finite"),
        ("-Infinity", "score not finite"),
        ("inf", "score not finite"),
        ("1e400", "score not finite"),
        ("9" * 400, "score not finite"),
    ],
)
def test_scores_that_do_not(text: str, reason: str) -> None:
    parsed = parse_score(text)
    assert isinstance(parsed, tuple) and parsed[0] == reason


@pytest.mark.parametrize(
    ("member", "reason"),
    [
        ("", "empty member"),
        ("a" * 201, "member too long"),
        ("tab\there", "control character"),
        ("del\x7f", "control character"),
        ("c1\x9f", "control character"),
        ("bytes\udcff", "not UTF-8"),
    ],
)
def test_members_the_api_refuses(member: str, reason: str) -> None:
    problem = member_problem(member)
    assert problem is not None and problem[0] == reason


@pytest.mark.parametrize("member", ["a", "a" * 200, "é" * 200, " spaced ", "\xa0nbsp", "🎮"])
def test_members_the_api_takes(member: str) -> None:
    assert member_problem(member) is None


def _rows(data: bytes, kind: str = "csv") -> list[Row | Rejected]:
    return list(read_rows(io.BytesIO(data), kind))


def test_csv_line_numbers_count_physical_lines() -> None:
    found = _rows(b'member,score\n"multi\nline",1\nok,2\n')
    first = found[0]
    assert isinstance(first, Rejected)
    assert (first.line, first.reason, first.text) == (2, "control character", "multi\\nline,1")
    assert found[1] == Row(4, "ok", 2)


def test_csv_columns_are_found_by_the_header() -> None:
    assert _rows(b"Score , MEMBER,rank\n1.5,a,9\n") == [Row(2, "a", 1.5)]


def test_an_empty_file_has_no_rows() -> None:
    assert _rows(b"") == []
    assert _rows(b"", "jsonl") == []


def test_a_csv_without_a_header_is_refused() -> None:
    with pytest.raises(Failure, match="header"):
        _rows(b"a,1\n")


def test_rows_are_read_as_they_are_asked_for() -> None:
    """The reader does not read the file whole: a row comes before the next is read."""

    class Lines(io.RawIOBase):
        def __init__(self) -> None:
            self.served = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
            line = b"member,score\n" if self.served == 0 else b"m,%d\n" % self.served
            self.served += 1
            buffer[: len(line)] = line
            return len(line)

    source = Lines()
    rows: Iterator[Row | Rejected] = read_rows(io.BufferedReader(source, 64), "csv")
    for _ in range(3):
        next(rows)
    assert source.served < 50  # an endless file: only what was asked for is read


def test_jsonl_lines_are_numbered_from_one_and_blank_lines_skipped() -> None:
    found = _rows(b'\n{"member":"a","score":1}\n\n{"member":"b","score":2.0}\n', "jsonl")
    assert found == [Row(2, "a", 1), Row(4, "b", 2.0)]
