"""SCAN-family cursors: paging in hash order so a cursor survives any change.

The cursor is a position in a 64-bit hash space: a page holds the members
whose hash is >= the cursor, smallest hashes first, and the next cursor is one
past the last hash returned. Anything present for the whole scan is returned at
least once whatever is added, removed or rescored meanwhile (SCAN's guarantee);
hash collisions are kept on one page. Hashes are Python's ``hash(bytes)``, so
cursors are valid within one process, like Redis's within one server.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import NamedTuple

from ..glob import glob_match
from .common import SYNTAX, error, int_arg, option

__all__ = ["ScanOptions", "page", "parse_scan_options"]

_MASK = (1 << 64) - 1
DEFAULT_COUNT = 10


class ScanOptions(NamedTuple):
    """Parsed ``[MATCH pattern] [COUNT count] [TYPE type]``."""

    hint: int
    pattern: bytes | None
    type_name: bytes | None

    def matches(self, name: bytes) -> bool:
        """True when ``name`` passes MATCH (a lone ``*`` matches everything)."""
        return self.pattern is None or glob_match(self.pattern, name)


def parse_scan_options(argv: list[bytes], start: int, *, allow_type: bool) -> ScanOptions:
    """Parse options from ``argv[start:]`` in Redis order (errors as the first bad one)."""
    count = DEFAULT_COUNT
    pattern: bytes | None = None
    type_name: bytes | None = None
    index = start
    while index < len(argv):
        word = option(argv[index])
        has_value = index + 1 < len(argv)
        if word == b"count" and has_value:
            count = int_arg(argv[index + 1])
            if count < 1:
                raise error(SYNTAX)
        elif word == b"match" and has_value:
            value = argv[index + 1]
            pattern = None if value == b"*" else value
        elif word == b"type" and allow_type and has_value:
            type_name = option(argv[index + 1])
        else:
            raise error(SYNTAX)
        index += 2
    return ScanOptions(count, pattern, type_name)


def _position(name: bytes) -> int:
    return hash(name) & _MASK


def page(names: Iterable[bytes], cursor: int, count: int) -> tuple[int, list[bytes]]:
    """The names of one page from ``cursor`` and the next cursor (0 when done). O(n log count)."""
    ahead = [(_position(name), name) for name in names]
    ahead = [entry for entry in ahead if entry[0] >= cursor]
    if len(ahead) <= count:
        return 0, [name for _, name in sorted(ahead)]
    chosen = heapq.nsmallest(count, ahead)
    last = chosen[-1][0]
    chosen += [entry for entry in ahead if entry[0] == last and entry not in chosen]
    following = last + 1
    return (0 if following > _MASK else following), [name for _, name in chosen]
