"""The path member check refuses exactly what the bodies' pattern refuses."""

from __future__ import annotations

import pytest

from ranked.service.convert import _CONTROL, member
from ranked.service.http import HTTPProblem


def _refused(value: str) -> bool:
    try:
        member(value)
    except HTTPProblem as problem:
        assert (problem.status, problem.slug, problem.field) == (422, "invalid-member", "member")
        return True
    return False


def test_member_refuses_every_control_character_and_nothing_else() -> None:
    for code in [*range(0x250), 0x2028, 0x3000, 0xFEFF, 0x1F600]:
        value = f"a{chr(code)}b"
        assert _refused(value) == (_CONTROL.search(value) is not None), hex(code)


@pytest.mark.parametrize("value", ["", "x" * 201, "\x7f", "ok\x85"])
def test_member_refuses(value: str) -> None:
    assert _refused(value)


@pytest.mark.parametrize("value", ["m1", "x" * 200, "José", "名前", " spaced "])
def test_member_takes(value: str) -> None:
    assert member(value) == value
