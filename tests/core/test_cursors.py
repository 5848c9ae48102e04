"""Page cursors: round trips, URL safety, and clear errors for anything else."""

from __future__ import annotations

import base64
import contextlib
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ranked.core.cursors import MAX_CURSOR_LENGTH, Cursor, Direction
from ranked.errors import InvalidCursorError, RankedError

URL_SAFE = set(string.ascii_letters + string.digits + "-_")

board_names = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="{}"),
    min_size=1,
    max_size=20,
)
cursors = st.builds(
    Cursor,
    board=board_names,
    window=st.sampled_from(["all", "d2026-11-21", "w2026-W47", "s:été"]),
    direction=st.sampled_from(list(Direction)),
    score=st.floats(allow_nan=False),
    member=st.one_of(st.binary(max_size=30), st.text(max_size=30)),
    limit=st.integers(1, 2**32 - 1),
)


@given(cursors)
def test_round_trip(cursor: Cursor) -> None:
    token = cursor.encode()
    assert set(token) <= URL_SAFE
    decoded = Cursor.decode(token)
    assert decoded == cursor
    assert type(decoded.member) is type(cursor.member)  # str stays str, bytes stays bytes


def test_known_cursor() -> None:
    cursor = Cursor("arena", "w2026-W47", Direction.DESC, 1500.0, b"\x00bob\xff", 25)
    token = cursor.encode()
    assert Cursor.decode(token, board="arena", window="w2026-W47") == cursor
    assert Cursor.decode(token).member == b"\x00bob\xff"
    assert (
        Cursor("arena", "all", Direction.ASC, -0.0, "bob", 1).encode()
        != Cursor("arena", "all", Direction.ASC, 0.0, "bob", 1).encode()
    )


def test_other_board_or_window() -> None:
    token = Cursor("arena", "all", Direction.DESC, 1.0, "m", 10).encode()
    with pytest.raises(InvalidCursorError, match="board 'arena', not 'other'"):
        Cursor.decode(token, board="other")
    with pytest.raises(InvalidCursorError, match="window 'all'"):
        Cursor.decode(token, window="d2026-01-01")


@given(cursors, st.data())
def test_any_single_character_edit_is_caught(cursor: Cursor, data: st.DataObject) -> None:
    token = cursor.encode()
    position = data.draw(st.integers(0, len(token) - 1))
    replacement = data.draw(st.sampled_from(sorted(URL_SAFE - {token[position]})))
    edited = token[:position] + replacement + token[position + 1 :]
    with pytest.raises(InvalidCursorError):
        Cursor.decode(edited)


@given(cursors, st.data())
def test_truncation_is_caught(cursor: Cursor, data: st.DataObject) -> None:
    token = cursor.encode()
    cut = data.draw(st.integers(0, len(token) - 1))
    with pytest.raises(InvalidCursorError):
        Cursor.decode(token[:cut])


@given(st.text(max_size=80))
def test_garbage_never_crashes(garbage: str) -> None:
    with contextlib.suppress(InvalidCursorError):
        Cursor.decode(garbage)


@pytest.mark.parametrize(
    "token",
    ["", "!!!!", "abc=", "a+b/", "é" * 10, "A" * (MAX_CURSOR_LENGTH + 1), "AAAA"],
)
def test_garbage_is_a_typed_error(token: str) -> None:
    with pytest.raises(InvalidCursorError):
        Cursor.decode(token)


def test_not_a_str() -> None:
    with pytest.raises(InvalidCursorError, match="is a str"):
        Cursor.decode(b"abc")  # type: ignore[arg-type]


def test_padding_and_standard_alphabet_are_rejected() -> None:
    token = Cursor("arena", "all", Direction.DESC, 1.0, b"\xfb\xff\xfe" * 9, 10).encode()
    assert "-" in token or "_" in token
    standard = token.replace("-", "+").replace("_", "/")
    with pytest.raises(InvalidCursorError):
        Cursor.decode(standard)
    with pytest.raises(InvalidCursorError):
        Cursor.decode(token + "=" * (-len(token) % 4 or 4))


def test_unknown_version_is_reported() -> None:
    import hashlib

    good = Cursor("arena", "all", Direction.DESC, 1.0, "m", 10).encode()
    raw = base64.urlsafe_b64decode(good + "=" * (-len(good) % 4))
    payload = b"\x02" + raw[1:-8]
    checksum = hashlib.blake2b(payload, digest_size=8, person=b"ranked-cursor").digest()
    forged = base64.urlsafe_b64encode(payload + checksum).rstrip(b"=").decode()
    with pytest.raises(InvalidCursorError, match="version 2"):
        Cursor.decode(forged)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"board": "a{b"},
        {"board": ""},
        {"window": ""},
        {"direction": "desc"},
        {"score": float("nan")},
        {"score": "1"},
        {"member": 5},
        {"limit": 0},
        {"limit": 2**32},
        {"limit": True},
    ],
)
def test_invalid_cursors_cannot_be_made(kwargs: dict[str, object]) -> None:
    fields: dict[str, object] = {
        "board": "arena",
        "window": "all",
        "direction": Direction.DESC,
        "score": 1.0,
        "member": "m",
        "limit": 10,
    }
    fields.update(kwargs)
    with pytest.raises(InvalidCursorError):
        Cursor(**fields)  # type: ignore[arg-type]


def test_unencodable_text_and_oversize() -> None:
    with pytest.raises(InvalidCursorError, match="Unicode"):
        Cursor("arena", "all", Direction.DESC, 1.0, "bad\ud800", 10).encode()
    with pytest.raises(InvalidCursorError, match="too long"):
        Cursor("arena", "all", Direction.DESC, 1.0, b"x" * MAX_CURSOR_LENGTH, 10).encode()


def test_error_is_typed() -> None:
    assert issubclass(InvalidCursorError, RankedError)
    assert issubclass(InvalidCursorError, ValueError)
