"""Redis number parsing and reply formatting (values checked on a real Redis 7.0.15)."""

from __future__ import annotations

import math

import pytest

from ranked.engine.redisfloat import (
    format_double,
    format_listpack_score,
    parse_cursor,
    parse_float,
    parse_int,
    parse_lex_bound,
    parse_score_bound,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"1", 1.0),
        (b"inf", math.inf),
        (b"+inf", math.inf),
        (b"-INF", -math.inf),
        (b"Infinity", math.inf),
        (b"1e3", 1000.0),
        (b".5", 0.5),
        (b"5.", 5.0),
        (b"+5", 5.0),
        (b"00012", 12.0),
        (b"1.5E-3", 0.0015),
        (b"0x10", 16.0),
        (b"0X1p4", 16.0),
        (b"0x.8", 0.5),
        (b"1e-310", 1e-310),
        (b"0e-400", 0.0),
        (b"-0", -0.0),
    ],
)
def test_parse_float_accepts_what_string2d_accepts(text: bytes, expected: float) -> None:
    assert parse_float(text) == expected


@pytest.mark.parametrize(
    "text",
    [b"", b" 1", b"1 ", b"\t1", b"nan", b"NaN", b"1e400", b"-1e400", b"1e-400", b"2e-324",
     b"5\x00zzz", b"1_000", b"0x", b"infin", b"1e", b".", b"+", b"0x1p2000", b"0x1p-2000",
     "\u0661".encode()],
)  # fmt: skip
def test_parse_float_rejects(text: bytes) -> None:
    assert parse_float(text) is None


def test_parse_float_keeps_negative_zero_sign() -> None:
    value = parse_float(b"-0")
    assert value is not None
    assert math.copysign(1.0, value) == -1.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"1", (1.0, False)),
        (b"(1", (1.0, True)),
        (b"(", (0.0, True)),
        (b"", (0.0, False)),
        (b" 1", (1.0, False)),
        (b"( 2", (2.0, True)),
        (b"1e400", (math.inf, False)),
        (b"1e-400", (0.0, False)),
        (b"1\x00zzz", (1.0, False)),
        (b"-inf", (-math.inf, False)),
        (b"0x10", (16.0, False)),
    ],
)
def test_parse_score_bound(text: bytes, expected: tuple[float, bool]) -> None:
    assert parse_score_bound(text) == expected


@pytest.mark.parametrize("text", [b"[1", b"((1", b"  ", b"1 ", b"nan", b"(nan", b"abc"])
def test_parse_score_bound_rejects(text: bytes) -> None:
    assert parse_score_bound(text) is None


def test_parse_lex_bound() -> None:
    assert parse_lex_bound(b"-") == (None, True, True)
    assert parse_lex_bound(b"+") == (None, True, False)
    assert parse_lex_bound(b"+\x00junk") == (None, True, False)
    assert parse_lex_bound(b"[a\x00") == (b"a\x00", False, False)
    assert parse_lex_bound(b"(") == (b"", True, False)
    for bad in (b"", b"a", b"-a", b"+a"):
        assert parse_lex_bound(bad) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"0", 0),
        (b"-1", -1),
        (b"9223372036854775807", 2**63 - 1),
        (b"-9223372036854775808", -(2**63)),
        (b"9223372036854775808", None),
        (b"-9223372036854775809", None),
        (b"01", None),
        (b"-0", None),
        (b"+1", None),
        (b" 1", None),
        (b"1.0", None),
        (b"", None),
    ],
)
def test_parse_int(text: bytes, expected: int | None) -> None:
    assert parse_int(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"0", 0),
        (b"", 0),
        (b"+0", 0),
        (b"-1", 2**64 - 1),
        (b"18446744073709551615", 2**64 - 1),
        (b"18446744073709551616", None),
        (b"x", None),
        (b" 1", None),
        (b"1x", None),
        (b"-", None),
        (b"7\x00x", 7),
    ],
)
def test_parse_cursor(text: bytes, expected: int | None) -> None:
    assert parse_cursor(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.1, b"1.1000000000000001"),
        (1.5e-7, b"1.4999999999999999e-07"),
        (123456789012345678.0, b"1.2345678901234568e+17"),
        (1e-310, b"9.9999999999999694e-311"),
        (-0.0, b"-0"),
        (0.0, b"0"),
        (math.inf, b"inf"),
        (-math.inf, b"-inf"),
        (3.0, b"3"),
    ],
)
def test_format_double_is_percent_17g(value: float, expected: bytes) -> None:
    assert format_double(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1e17, b"100000000000000000"),
        (2.0**62, b"4611686018427387904"),
        (2.0**63, b"9.2233720368547758e+18"),
        (1.5, b"1.5"),
        (math.inf, b"inf"),
        (-3.0, b"-3"),
    ],
)
def test_format_listpack_score(value: float, expected: bytes) -> None:
    assert format_listpack_score(value) == expected
