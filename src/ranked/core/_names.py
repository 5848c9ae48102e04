"""Validation of the names that end up inside keys: namespaces, boards, seasons."""

from __future__ import annotations

import unicodedata
from typing import Final

from ..errors import InvalidNameError

__all__ = ["MAX_NAME_BYTES", "check_name"]

# A bound keeps every key short (Redis keys are copied into every reply that names them).
MAX_NAME_BYTES: Final = 200

_BRACES: Final = frozenset("{}")


def check_name(name: str, what: str) -> str:
    """Return ``name`` if it may appear in a key, else raise :class:`InvalidNameError`.

    A name is a non-empty ``str`` of at most :data:`MAX_NAME_BYTES` UTF-8 bytes with
    no ``{``, ``}`` (they would change the Redis Cluster hash tag) and no control
    characters (Unicode category ``Cc``). ``what`` names the field in the message.
    """
    if not isinstance(name, str):
        raise InvalidNameError(f"{what} must be a str, not {type(name).__name__}")
    if not name:
        raise InvalidNameError(f"{what} must not be empty")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError as error:  # lone surrogates cannot become key bytes
        raise InvalidNameError(f"{what} {name!r} is not valid Unicode text") from error
    if size > MAX_NAME_BYTES:
        raise InvalidNameError(f"{what} is {size} bytes long; the limit is {MAX_NAME_BYTES}")
    for char in name:
        if char in _BRACES:
            raise InvalidNameError(f"{what} {name!r} must not contain '{{' or '}}'")
        if unicodedata.category(char) == "Cc":
            raise InvalidNameError(f"{what} {name!r} must not contain control characters")
    return name
