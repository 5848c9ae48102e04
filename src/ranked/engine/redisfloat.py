"""Redis 7.0 number parsing and formatting, byte for byte.

Redis reads numbers in three different ways depending on where they appear, and
``float()`` matches none of them (it accepts ``1_000`` and surrounding spaces,
rejects hex, and silently turns ``1e400`` into inf). Each parser here validates
the bytes against the C ``strtod``/``strtoul`` grammar first, then converts.

- :func:`parse_float`: member scores, increments, weights (Redis ``string2d``).
- :func:`parse_score_bound`: score range bounds with ``(`` (Redis ``zslParseRange``).
- :func:`parse_lex_bound`: lex range bounds ``-`` ``+`` ``(x`` ``[x``.
- :func:`parse_int`: integer arguments (Redis ``string2ll``).
- :func:`parse_cursor`: SCAN cursors (``strtoul`` base 10).
- :func:`format_double`: double replies as 7.0 writes them (``%.17g``, ``inf``).
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

__all__ = [
    "LLONG_MAX",
    "LLONG_MIN",
    "LexBound",
    "format_double",
    "format_listpack_score",
    "parse_cursor",
    "parse_float",
    "parse_int",
    "parse_lex_bound",
    "parse_score_bound",
]

LLONG_MAX = (1 << 63) - 1
LLONG_MIN = -(1 << 63)
_ULONG_LIMIT = 1 << 64

# The C strtod grammar (after the sign): decimal, hex, or inf/infinity. NaN is
# left out on purpose: every Redis caller rejects it.
_DECIMAL = rb"(?P<dec>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
_HEX = rb"(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?)"
_INF = rb"(?P<inf>(?i:inf(?:inity)?))"
_FLOAT_RE = re.compile(rb"(?P<sign>[+-]?)(?:" + _DECIMAL + b"|" + _HEX + b"|" + _INF + b")")
_HEX_MANTISSA_END = re.compile(rb"[pP]")
_C_SPACE = b" \t\n\v\f\r"
_INT_RE = re.compile(rb"-?[1-9][0-9]*|0")


def _strtod(text: bytes) -> tuple[float, bool] | None:
    """Convert a complete strtod literal; returns (value, range_error) or None.

    ``range_error`` mirrors C's ERANGE: overflow to +-inf from a finite literal,
    or underflow to zero from a literal with a non-zero mantissa.
    """
    match = _FLOAT_RE.fullmatch(text)
    if match is None:
        return None
    negative = match["sign"] == b"-"
    if match["inf"] is not None:
        return (-math.inf if negative else math.inf), False
    if match["dec"] is not None:
        literal = match["dec"]
        value = float(literal)
        mantissa = re.split(rb"[eE]", literal)[0]
    else:
        literal = match["hex"]
        try:
            value = float.fromhex(literal.decode("ascii"))
        except OverflowError:
            value = math.inf
        mantissa = _HEX_MANTISSA_END.split(literal[2:])[0]
    range_error = math.isinf(value) or (value == 0.0 and any(ch not in b"0." for ch in mantissa))
    return (-value if negative else value), range_error


def parse_float(arg: bytes) -> float | None:
    """Parse a score, increment or weight like Redis ``string2d``; None when invalid.

    Rejects empty input, leading whitespace, trailing bytes, NaN, overflow to
    +-inf from a finite literal and underflow to zero. Accepts hex (glibc
    strtod does) and denormals. O(len(arg)).
    """
    if not arg or arg[0] in _C_SPACE:
        return None
    parsed = _strtod(arg)
    if parsed is None or parsed[1]:
        return None
    return parsed[0]


def parse_score_bound(arg: bytes) -> tuple[float, bool] | None:
    """Parse a score range bound like Redis 7.0 ``zslParseRange``: (value, exclusive).

    Plain strtod: leading whitespace is fine, overflow gives +-inf, an empty
    text is 0 (so ``(`` alone is "exclusive 0"), and anything after an embedded
    NUL is ignored (the C string ends there). NaN or trailing bytes: None.
    """
    exclusive = arg[:1] == b"("
    text = arg[1:] if exclusive else arg
    text = text.split(b"\0", 1)[0]
    if not text:
        return 0.0, exclusive
    parsed = _strtod(text.lstrip(_C_SPACE))
    if parsed is None:
        return None
    return parsed[0], exclusive


class LexBound(NamedTuple):
    """A parsed lex bound: ``value`` None means ``-`` (``low``) or ``+`` (not ``low``)."""

    value: bytes | None
    exclusive: bool
    low: bool


def parse_lex_bound(arg: bytes) -> LexBound | None:
    """Parse ``-``, ``+``, ``(member`` or ``[member``; None when invalid.

    ``-``/``+`` must be the whole C string (a NUL may follow); the rest is
    binary-safe, and a bare ``(`` or ``[`` is the empty member.
    """
    head = arg[:1]
    if head in (b"-", b"+"):
        if len(arg) > 1 and arg[1] != 0:
            return None
        return LexBound(None, True, head == b"-")
    if head == b"(":
        return LexBound(arg[1:], True, False)
    if head == b"[":
        return LexBound(arg[1:], False, False)
    return None


def parse_int(arg: bytes) -> int | None:
    """Parse a signed 64-bit integer like Redis ``string2ll``; None when invalid.

    No sign ``+``, no spaces, no leading zeros, no ``-0``.
    """
    if len(arg) >= 21 or _INT_RE.fullmatch(arg) is None:
        return None
    value = int(arg)
    if value < LLONG_MIN or value > LLONG_MAX:
        return None
    return value


def parse_cursor(arg: bytes) -> int | None:
    """Parse a SCAN cursor like Redis (``strtoul`` base 10); None when invalid.

    Accepts an empty string (0), a sign (``-1`` wraps to 2**64-1), and ignores
    bytes after a NUL; rejects leading whitespace and values past 2**64-1.
    """
    text = arg.split(b"\0", 1)[0]
    if not text:
        return 0
    if text[0] in _C_SPACE:
        return None
    match = re.fullmatch(rb"([+-]?)(\d+)", text)
    if match is None:
        return None
    magnitude = int(match[2])
    if magnitude >= _ULONG_LIMIT:
        return None
    return (-magnitude) % _ULONG_LIMIT if match[1] == b"-" else magnitude


def format_double(value: float) -> bytes:
    """A double reply as Redis 7.0 writes it: ``inf``/``-inf``, else ``%.17g``.

    So ``1.1`` -> ``1.1000000000000001`` and ``-0.0`` -> ``-0``.
    """
    if math.isinf(value):
        return b"inf" if value > 0 else b"-inf"
    return b"%.17g" % value


_LISTPACK_INT_LIMIT = float(LLONG_MAX // 2)


def format_listpack_score(value: float) -> bytes:
    """A score as a small (listpack) zset stores it, which ZSCAN replies verbatim.

    Integral scores within +-(LLONG_MAX/2) are stored as integers, so
    ``1e17`` scans as ``100000000000000000``; anything else as :func:`format_double`.
    """
    if -_LISTPACK_INT_LIMIT <= value <= _LISTPACK_INT_LIMIT and value == int(value):
        return b"%d" % int(value)
    return format_double(value)
