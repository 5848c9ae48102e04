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
:class:`~ranked.errors.InvalidCursorError`; it is *not* a signature (anyone can
compute it), so the reader must still check that the cursor's board and window
are the ones being read (``decode(..., board=, window=)`` does).
"""

from __future__ import annotations

import binascii
import hashlib
import math
import struct
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from ..errors import InvalidCursorError, InvalidNameError
from ._names import check_name

__all__ = ["MAX_CURSOR_LENGTH", "Cursor", "Direction"]

VERSION: Final = 1
MAX_CURSOR_LENGTH: Final = 65_536
"""Longest cursor string accepted or produced (characters)."""

_HEAD: Final = struct.Struct(">BBBId")
_U16: Final = struct.Struct(">H")
_U32: Final = struct.Struct(">I")
_CHECKSUM_SIZE: Final = 8
_PERSON: Final = b"ranked-cursor"
# Hashing a copy of a ready keyed state skips re-parsing the parameters on every call.
_HASHER: Final = hashlib.blake2b(digest_size=_CHECKSUM_SIZE, person=_PERSON)
# binascii speaks the standard alphabet; cursors use the URL-safe one ("-_" for "+/").
_TO_URLSAFE: Final = bytes.maketrans(b"+/", b"-_")
_FROM_URLSAFE: Final = bytes.maketrans(b"-_", b"+/")
_PADDING: Final = (b"", b"===", b"==", b"=")  # by len(token) % 4 (1 is never valid)
# Board names already accepted by check_name (a pure check): decoding skips the
# per-character scan for them. Bounded so arbitrary forged names cannot grow it.
_VALID_BOARDS: set[str] = set()
_VALID_BOARDS_MAX: Final = 1024


class Direction(StrEnum):
    """Traversal order of the sorted set: ``desc`` is Redis's REV (highest score first)."""

    DESC = "desc"
    ASC = "asc"


_DIRECTION_CODES: Final = {Direction.DESC: 0, Direction.ASC: 1}
_DIRECTIONS: Final = {code: direction for direction, code in _DIRECTION_CODES.items()}


def _check_board(board: str) -> None:
    try:
        check_name(board, "board name")
    except InvalidNameError as error:
        raise InvalidCursorError(str(error)) from None
    if len(_VALID_BOARDS) < _VALID_BOARDS_MAX:
        _VALID_BOARDS.add(board)


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
        if self.board not in _VALID_BOARDS:
            _check_board(self.board)
        if not isinstance(self.window, str) or not self.window:
            raise InvalidCursorError("a cursor's window id must be a non-empty str")
        if not isinstance(self.direction, Direction):
            raise InvalidCursorError(f"direction must be a Direction, not {self.direction!r}")
        if not isinstance(self.score, (float, int)) or math.isnan(self.score):
            raise InvalidCursorError(f"a cursor's score must be a number, not {self.score!r}")
        if not isinstance(self.member, (str, bytes)):
            raise InvalidCursorError(f"member must be str or bytes, not {type(self.member)}")
        limit = self.limit
        if limit.__class__ is not int and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise InvalidCursorError(f"limit must be an int, not {limit!r}")
        if not 1 <= limit <= 0xFFFFFFFF:
            raise InvalidCursorError(f"limit {limit} is outside [1, 2**32 - 1]")

    def encode(self) -> str:
        """The cursor as an opaque URL-safe string (see the module docstring). O(size)."""
        member = self.member
        is_str = isinstance(member, str)
        board = self.board.encode("utf-8")
        try:
            window = self.window.encode("utf-8")
            member_raw = member.encode("utf-8") if isinstance(member, str) else member
        except UnicodeEncodeError as error:
            raise InvalidCursorError("window id or member is not valid Unicode text") from error
        if len(window) > 0xFFFF:
            raise InvalidCursorError("window id is too long for a cursor")
        payload = b"".join(
            (
                _HEAD.pack(
                    VERSION, _DIRECTION_CODES[self.direction], is_str, self.limit, self.score
                ),
                _U16.pack(len(board)),
                board,
                _U16.pack(len(window)),
                window,
                _U32.pack(len(member_raw)),
                member_raw,
            )
        )
        hasher = _HASHER.copy()
        hasher.update(payload)
        encoded = binascii.b2a_base64(payload + hasher.digest(), newline=False)
        token = encoded.translate(_TO_URLSAFE).rstrip(b"=").decode("ascii")
        if len(token) > MAX_CURSOR_LENGTH:
            raise InvalidCursorError(f"cursor would be {len(token)} characters; member too long")
        return token

    @classmethod
    def decode(cls, token: str, *, board: str | None = None, window: str | None = None) -> Cursor:
        """The cursor ``token`` encodes; optionally require its board and window id.

        Raises :class:`~ranked.errors.InvalidCursorError` for anything
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
        text = token.encode("ascii")
        raw = binascii.a2b_base64(text.translate(_FROM_URLSAFE) + _PADDING[len(text) % 4])
    except ValueError:  # binascii.Error, or a non-ASCII str (UnicodeEncodeError)
        raise InvalidCursorError("cursor is not URL-safe base64") from None
    # Only the canonical spelling is a cursor: no padding, stray or alternative characters
    # (a2b_base64 skips characters outside the alphabet; re-encoding exposes them).
    canonical = binascii.b2a_base64(raw, newline=False).translate(_TO_URLSAFE).rstrip(b"=")
    if canonical != text:
        raise InvalidCursorError("cursor is not URL-safe base64")
    if len(raw) < _HEAD.size + _CHECKSUM_SIZE:
        raise InvalidCursorError("cursor is truncated")
    payload = raw[:-_CHECKSUM_SIZE]
    hasher = _HASHER.copy()
    hasher.update(payload)
    if hasher.digest() != raw[-_CHECKSUM_SIZE:]:
        raise InvalidCursorError("cursor checksum mismatch: corrupted or edited")
    if payload[0] != VERSION:
        raise InvalidCursorError(f"cursor version {payload[0]} is unsupported (expected {VERSION})")
    return payload


def _parse(payload: bytes) -> Cursor:
    _version, direction_code, kind, limit, score = _HEAD.unpack_from(payload)
    end = len(payload)
    # board (2-byte length), window (2-byte length), member (4-byte length), nothing after
    position = _HEAD.size + 2
    if position > end:
        raise InvalidCursorError("cursor is truncated")
    board_end = position + _U16.unpack_from(payload, position - 2)[0]
    position = board_end + 2
    if position > end:
        raise InvalidCursorError("cursor is truncated")
    window_end = position + _U16.unpack_from(payload, board_end)[0]
    position = window_end + 4
    if position > end:
        raise InvalidCursorError("cursor is truncated")
    member_end = position + _U32.unpack_from(payload, window_end)[0]
    if member_end > end:
        raise InvalidCursorError("cursor is truncated")
    if member_end != end:
        raise InvalidCursorError("cursor has trailing bytes")
    if direction_code not in _DIRECTIONS or kind not in (0, 1):
        raise InvalidCursorError("cursor has an unknown direction or member kind")
    member_raw = payload[window_end + 4 : member_end]
    try:
        board = payload[_HEAD.size + 2 : board_end].decode("utf-8")
        window = payload[board_end + 2 : window_end].decode("utf-8")
        member: str | bytes = member_raw.decode("utf-8") if kind == 1 else member_raw
    except UnicodeDecodeError:
        raise InvalidCursorError("cursor holds text that is not UTF-8") from None
    return Cursor(board, window, _DIRECTIONS[direction_code], score, member, limit)
