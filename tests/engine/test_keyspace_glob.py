"""Redis glob matching (stringmatchlen), corner cases checked against Redis 7.0.15 KEYS."""

from __future__ import annotations

import pytest

from ranked.engine.glob import glob_match

CASES = [
    (b"h?llo", b"hello", True),
    (b"h?llo", b"hllo", False),
    (b"h*llo", b"heeeello", True),
    (b"h*llo", b"hllo", True),
    (b"h[ae]llo", b"hallo", True),
    (b"h[ae]llo", b"hillo", False),
    (b"h[^e]llo", b"hallo", True),
    (b"h[^e]llo", b"hello", False),
    (b"h[a-b]llo", b"hbllo", True),
    (b"h[b-a]llo", b"hallo", True),
    (b"h[a-b]llo", b"hcllo", False),
    (b"\\*", b"*", True),
    (b"\\*", b"a", False),
    (b"a\\", b"a\\", True),
    (b"[\\]]", b"]", True),
    (b"[abc", b"c", True),
    (b"[abc", b"cd", False),
    (b"*", b"", False),  # the commands special-case a lone "*"
    (b"a*", b"a", True),
    (b"*a*", b"bab", True),
    (b"**b", b"ab", True),
    (b"a*b*c", b"abbbc", True),
    (b"a*b*c", b"abbbd", False),
    (b"[a-\xff]", b"\xff", True),  # range ends compare as signed chars
    (b"[a-\xff]", b"b", False),
    (b"[a-\xff]", b"\x00", True),
    (b"?", b"\x00", True),
    (b"", b"", True),
    (b"", b"a", False),
]


@pytest.mark.parametrize(("pattern", "string", "expected"), CASES)
def test_glob(pattern: bytes, string: bytes, expected: bool) -> None:
    assert glob_match(pattern, string) is expected


def test_many_stars_do_not_blow_up() -> None:
    assert not glob_match(b"a*" * 30 + b"b", b"a" * 60)
