"""Opaque page cursors: where a page ended, as a URL-safe string.

A cursor is keyset pagination state: the next page starts strictly after the last
(score, member) point in the traversal order, so inserts and removals between pages
neither repeat nor skip members the way index offsets would.

Wire format (then unpadded URL-safe base64)::

    version   1 byte    (1)
    direction 1 byte    (0 = descending / ZRANGE ... REV, 1 = ascending)
    kind      1 byte    (0 = member is bytes, 1 = member is str)
    limit     4 bytes   big-endian page size, >= 1
    score     8 bytes   big-endian IEEE 754 double (not NaN)
    board     2 bytes length + UTF-8
    window    2 bytes length + UTF-8
    member    4 bytes length + bytes
    checksum  8 bytes   BLAKE2b-64 of everything above (personalised "ranked-cursor")

The checksum makes corrupted, truncated or hand-edited cursors fail with a clear
:class:`~ranked.core.errors.InvalidCursorError`; it is *not* a signature (anyone can
compute it), so the reader must still check that the cursor's board and window
are the ones being read (``decode(..., board=, window=)`` does).
"""

from __future__ import annotations

import base64
import hashlib
import math
import struct
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from ._names import check_name
from .errors import InvalidCursorError, InvalidNameError

__all__ = ["MAX_CURSOR_LENGTH", "Cursor", "Direction"]

VERSION: Final = 1
MAX_CURSOR_LENGTH: Final = 65_536
"""Longest cursor string accepted or produced (characters)."""

_HEAD: Final = struct.Struct(">BBBId")
_CHECKSUM_SIZE: Final = 8
_PERSON: Final = b"ranked-cursor"


class Direction(StrEnum):
    """Traversal order of the sorted set: ``desc`` is Redis's REV (highest score first)."""

    DESC = "desc"
    ASC = "asc"


_DIRECTION_CODES: Final = {Direction.DESC: 0, Direction.ASC: 1}
_DIRECTIONS: Final = {code: direction for direction, code in _DIRECTION_CODES.items()}


def _checksum(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=_CHECKSUM_SIZE, person=_PERSON).digest()


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a page ended: board, window id, direction, last (score, member) and page size."""

    board: str
    window: str
    direction: Direction
    score: float
    member: str | bytes
    limit: int

    def __post_init__(self) -> None:
        try:
            check_name(self.board, "board name")
        except InvalidNameError as error:
            raise InvalidCursorError(str(error)) from None
        if not isinstance(self.window, str) or not self.window:
            raise InvalidCursorError("a cursor's window id must be a non-empty str")
        if not isinstance(self.direction, Direction):
            raise InvalidCursorError(f"direction must be a Direction, not {self.direction!r}")
        if not isinstance(self.score, float | int) or math.isnan(self.score):
            raise InvalidCursorError(f"a cursor's score must be a number, not {self.score!r}")
        if not isinstance(self.member, str | bytes):
            raise InvalidCursorError(f"member must be str or bytes, not {type(self.member)}")
        if isinstance(self.limit, bool) or not isinstance(self.limit, int):
            raise InvalidCursorError(f"limit must be an int, not {self.limit!r}")
        if not 1 <= self.limit <= 0xFFFFFFFF:
            raise InvalidCursorError(f"limit {self.limit} is outside [1, 2**32 - 1]")

    def encode(self) -> str:
        """The cursor as an opaque URL-safe string (see the module docstring). O(size)."""
        is_str = isinstance(self.member, str)
        board = self.board.encode("utf-8")
        try:
            window = self.window.encode("utf-8")
            member = self.member.encode("utf-8") if isinstance(self.member, str) else self.member
        except UnicodeEncodeError as error:
            raise InvalidCursorError("window id or member is not valid Unicode text") from error
        if len(window) > 0xFFFF:
            raise InvalidCursorError("window id is too long for a cursor")
        payload = b"".join(
            (
                _HEAD.pack(
                    VERSION, _DIRECTION_CODES[self.direction], int(is_str), self.limit, self.score
                ),
                struct.pack(">H", len(board)),
                board,
                struct.pack(">H", len(window)),
                window,
                struct.pack(">I", len(member)),
                member,
            )
        )
        token = base64.urlsafe_b64encode(payload + _checksum(payload)).rstrip(b"=").decode()
        if len(token) > MAX_CURSOR_LENGTH:
            raise InvalidCursorError(f"cursor would be {len(token)} characters; member too long")
        return token

    @classmethod
    def decode(cls, token: str, *, board: str | None = None, window: str | None = None) -> Cursor:
        """The cursor ``token`` encodes; optionally require its board and window id.

        Raises :class:`~ranked.core.errors.InvalidCursorError` for anything
        :meth:`encode` did not produce, and for a cursor of another board or window.
        """
        cursor = _parse(_unwrap(token))
        if board is not None and cursor.board != board:
            raise InvalidCursorError(f"cursor is for board {cursor.board!r}, not {board!r}")
        if window is not None and cursor.window != window:
            raise InvalidCursorError(f"cursor is for window {cursor.window!r}, not {window!r}")
        return cursor


def _unwrap(token: str) -> bytes:
    """The checked payload of ``token`` (base64 and checksum verified, checksum removed)."""
    if not isinstance(token, str):
        raise InvalidCursorError(f"a cursor is a str, not {type(token).__name__}")
    if not token or len(token) > MAX_CURSOR_LENGTH:
        raise InvalidCursorError("a cursor must be 1 to 65536 characters long")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except ValueError:  # binascii.Error, or a non-ASCII str
        raise InvalidCursorError("cursor is not URL-safe base64") from None
    # Only the canonical spelling is a cursor: no padding, stray or alternative characters.
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != token:
        raise InvalidCursorError("cursor is not URL-safe base64")
    if len(raw) < _HEAD.size + _CHECKSUM_SIZE:
        raise InvalidCursorError("cursor is truncated")
    payload, checksum = raw[:-_CHECKSUM_SIZE], raw[-_CHECKSUM_SIZE:]
    if _checksum(payload) != checksum:
        raise InvalidCursorError("cursor checksum mismatch: corrupted or edited")
    if payload[0] != VERSION:
        raise InvalidCursorError(f"cursor version {payload[0]} is unsupported (expected {VERSION})")
    return payload


def _parse(payload: bytes) -> Cursor:
    _version, direction_code, kind, limit, score = _HEAD.unpack_from(payload)
    position = _HEAD.size

    def take(size_format: str) -> bytes:
        nonlocal position
        width = struct.calcsize(size_format)
        if position + width > len(payload):
            raise InvalidCursorError("cursor is truncated")
        (size,) = struct.unpack_from(size_format, payload, position)
        position += width
        if position + size > len(payload):
            raise InvalidCursorError("cursor is truncated")
        chunk = payload[position : position + size]
        position += size
        return chunk

    board_raw, window_raw, member_raw = take(">H"), take(">H"), take(">I")
    if position != len(payload):
        raise InvalidCursorError("cursor has trailing bytes")
    if direction_code not in _DIRECTIONS or kind not in (0, 1):
        raise InvalidCursorError("cursor has an unknown direction or member kind")
    try:
        board, window = board_raw.decode("utf-8"), window_raw.decode("utf-8")
        member: str | bytes = member_raw.decode("utf-8") if kind == 1 else member_raw
    except UnicodeDecodeError:
        raise InvalidCursorError("cursor holds text that is not UTF-8") from None
    return Cursor(board, window, _DIRECTIONS[direction_code], score, member, limit)
