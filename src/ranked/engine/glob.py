"""Redis glob matching (``stringmatchlen``) on bytes, for KEYS, SCAN and ZSCAN MATCH.

Supported: ``*`` (any run), ``?`` (one byte), ``[abc]``, ``[^abc]``, ``[a-z]``
(ends may come in either order) and ``\\`` escapes, inside and outside
brackets. The corner cases follow Redis 7.0 exactly: an unterminated ``[``
set ends at the end of the pattern, a trailing ``\\`` matches a literal
backslash, range ends compare as *signed* chars (so ``[a-\\xff]`` means
``\\xff`` and ``\\x00``-``a``), and ``*`` never matches at the end of an
exhausted string unless the whole pattern was consumed. A lone ``*`` pattern is
a fast path in the commands, not here.
"""

from __future__ import annotations

__all__ = ["glob_match"]


def _signed(byte: int) -> int:
    return byte - 256 if byte >= 128 else byte


def glob_match(pattern: bytes, string: bytes) -> bool:
    """True when ``string`` matches the Redis glob ``pattern``. O(len(pattern) * len(string))."""
    give_up = [False]
    return _match(pattern, 0, string, 0, give_up)


def _at(data: bytes, index: int) -> int:
    # C reads the NUL terminator (or garbage) past the end; NUL is the safe stand-in.
    return data[index] if 0 <= index < len(data) else 0


def _match(pattern: bytes, p: int, string: bytes, s: int, give_up: list[bool]) -> bool:
    plen = len(pattern) - p
    slen = len(string) - s
    while plen > 0 and slen > 0:
        head = pattern[p]
        if head == ord("*"):
            while plen > 1 and pattern[p + 1] == ord("*"):
                p += 1
                plen -= 1
            if plen == 1:
                return True
            while slen > 0:
                if _match(pattern, p + 1, string, s, give_up):
                    return True
                # A failed tail can never match a shorter suffix either.
                if give_up[0]:
                    return False
                s += 1
                slen -= 1
            give_up[0] = True
            return False
        if head == ord("?"):
            s += 1
            slen -= 1
        elif head == ord("["):
            p, plen, matched = _match_set(pattern, p, plen, string[s])
            if not matched:
                return False
            s += 1
            slen -= 1
        else:
            if head == ord("\\") and plen >= 2:
                p += 1
                plen -= 1
            if pattern[p] != string[s]:
                return False
            s += 1
            slen -= 1
        p += 1
        plen -= 1
        if slen == 0:
            while _at(pattern, p) == ord("*") and plen > 0:
                p += 1
                plen -= 1
            break
    return plen == 0 and slen == 0


def _match_set(pattern: bytes, p: int, plen: int, char: int) -> tuple[int, int, bool]:
    """Match one byte against the ``[...]`` set starting at ``p``.

    Returns the position of the set's last byte (the caller steps past it) and
    whether the byte matched.
    """
    p += 1
    plen -= 1
    negate = _at(pattern, p) == ord("^")
    if negate:
        p += 1
        plen -= 1
    matched = False
    while True:
        current = _at(pattern, p)
        if current == ord("\\") and plen >= 2:
            p += 1
            plen -= 1
            if pattern[p] == char:
                matched = True
        elif current == ord("]") and plen > 0:
            break
        elif plen <= 0:
            p -= 1
            plen += 1
            break
        elif plen >= 3 and pattern[p + 1] == ord("-"):
            start, end = _signed(pattern[p]), _signed(pattern[p + 2])
            if start > end:
                start, end = end, start
            p += 2
            plen -= 2
            if start <= _signed(char) <= end:
                matched = True
        elif current == char:
            matched = True
        p += 1
        plen -= 1
    return p, plen, matched != negate
