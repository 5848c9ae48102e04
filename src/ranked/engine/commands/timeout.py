"""Blocking-command timeouts, read as Redis 7.0.15 reads them (``getTimeoutFromObjectOrReply``).

Redis parses the seconds with ``strtold`` into an x86 ``long double`` (64-bit significand),
multiplies by 1000 in that precision, rounds *up* with ``ceill`` and converts to ``long long``;
a result out of that range (``inf``, ``1e400``, ``9.3e15``) becomes ``LLONG_MIN`` on x86-64,
so it is reported as negative. Rounding up makes any positive timeout wait at least 1 ms,
while a tiny negative one (``-0.0001``, even ``-0.001``) rounds to 0: block forever. Those
edges decide between an error, a finite wait and no limit at all, so this module computes
with exact integers rounded to the long double grid instead of with ``float``.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Final

from ..redisfloat import LLONG_MAX, LLONG_MIN
from .common import error

__all__ = ["NOT_FLOAT", "parse_timeout"]

NOT_FLOAT: Final = "ERR timeout is not a float or out of range"
NEGATIVE: Final = "ERR timeout is negative"

_MAX_CHARS: Final = 5 * 1024  # string2ld's buffer: longer arguments are refused
_SIGNIFICAND_BITS: Final = 64
_MIN_EXPONENT: Final = -16445  # the smallest denormal long double is 2**-16445
_OVERFLOW: Final = 1 << 16384  # long doubles are below 2**16384
_DIGIT_CHUNK: Final = 4000  # int() refuses decimal strings over 4300 digits

_DECIMAL = re.compile(rb"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
_HEX = re.compile(rb"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?")
_INF = re.compile(rb"([+-]?)(?i:inf|infinity)")


def _decimal_int(digits: bytes) -> int:
    """A long run of decimal digits as an int (chunked past Python's str->int limit)."""
    value = 0
    for start in range(0, len(digits), _DIGIT_CHUNK):
        chunk = digits[start : start + _DIGIT_CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def _exponent(text: bytes | None) -> int:
    """An exponent's digits as an int; a long run (any value past 10**9 is out of the
    long double range anyway) is clamped rather than converted."""
    if not text:
        return 0
    sign = -1 if text[:1] == b"-" else 1
    digits = text.lstrip(b"+-").lstrip(b"0") or b"0"
    return sign * (int(digits) if len(digits) <= 9 else 10**10)


def _round_extended(num: int, den: int) -> Fraction | None:
    """``num / den`` (``num >= 0``) rounded half-even to a long double; None when it
    overflows to infinity. Denormals keep the fixed ulp ``2**-16445``."""
    if num == 0:
        return Fraction(0)
    exponent = num.bit_length() - den.bit_length()  # floor(log2(num / den)), or one more
    if (num < den << exponent) if exponent >= 0 else (num << -exponent < den):
        exponent -= 1
    ulp = max(exponent - (_SIGNIFICAND_BITS - 1), _MIN_EXPONENT)
    if ulp >= 0:
        den <<= ulp
    else:
        num <<= -ulp
    significand, rest = divmod(num, den)
    if 2 * rest > den or (2 * rest == den and significand & 1):
        significand += 1
    value = Fraction(significand << ulp) if ulp >= 0 else Fraction(significand, 1 << -ulp)
    return None if value >= _OVERFLOW else value


def _magnitude(num: int, den: int) -> Fraction | None:
    """The long double nearest ``num / den``; None if strtold reports a range error."""
    value = _round_extended(num, den)
    if value is None or (value == 0 and num != 0):
        return None  # overflow to HUGE_VALL, or underflow to zero: ERANGE, refused
    return value


def _parse_decimal(integral: bytes, fraction: bytes, exponent: int) -> Fraction | None:
    digits = (integral + fraction).lstrip(b"0")
    if not digits:
        return Fraction(0)
    scale = exponent - len(fraction)
    order = len(digits) - 1 + scale  # the value is about 10**order
    if order > 4933 or order < -4953:  # far past the long double range either way
        return None
    mantissa = _decimal_int(digits)
    if scale >= 0:
        return _magnitude(mantissa * 10**scale, 1)
    return _magnitude(mantissa, 10**-scale)


def _parse_hex(integral: bytes, fraction: bytes, exponent: int) -> Fraction | None:
    digits = (integral + fraction).lstrip(b"0")
    if not digits:
        return Fraction(0)
    scale = exponent - 4 * len(fraction)
    order = 4 * len(digits) + scale  # the value is below 2**order
    if order > 16390 or order < -16460:
        return None
    mantissa = int(digits, 16)
    if scale >= 0:
        return _magnitude(mantissa << scale, 1)
    return _magnitude(mantissa, 1 << -scale)


def _strtold(arg: bytes) -> tuple[bool, Fraction | None] | None:
    """Redis ``string2ld``: (negative, magnitude or None for infinity); None when refused.

    Refuses empty or over-long input, any byte strtold would not consume (spaces, NUL),
    NaN, and literals out of the long double range (overflow, or underflow to zero).
    """
    if not arg or len(arg) >= _MAX_CHARS:
        return None
    match = _INF.fullmatch(arg)
    if match is not None:
        return match[1] == b"-", None
    match = _HEX.fullmatch(arg)
    parse = _parse_hex
    if match is None:
        match = _DECIMAL.fullmatch(arg)
        parse = _parse_decimal
    if match is None or not (match[2] or match[3]):
        return None
    value = parse(match[2], match[3] or b"", _exponent(match[4]))
    return None if value is None else (match[1] == b"-", value)


def _ceil_millis(negative: bool, seconds: Fraction | None) -> int:
    """``(long long) ceill(seconds * 1000.0L)`` on x86-64: out of range gives LLONG_MIN."""
    if seconds is None:
        return LLONG_MIN
    millis = _round_extended(seconds.numerator * 1000, seconds.denominator)
    if millis is None:
        return LLONG_MIN
    whole = -(millis.__floor__()) if negative else millis.__ceil__()
    return whole if LLONG_MIN <= whole <= LLONG_MAX else LLONG_MIN


def parse_timeout(arg: bytes) -> int:
    """A blocking command's timeout in whole milliseconds, 0 meaning "wait forever".

    Raises ``ERR timeout is not a float or out of range`` or ``ERR timeout is negative``
    with Redis 7.0.15's rules (see the module docstring). O(len(arg)).
    """
    parsed = _strtold(arg)
    if parsed is None:
        raise error(NOT_FLOAT)
    millis = _ceil_millis(*parsed)
    if millis < 0:
        raise error(NEGATIVE)
    return millis
