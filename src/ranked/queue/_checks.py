"""Input checks of the queue: each value is checked where it enters, before anything is sent.

Items, priorities, counts and leases get the queue's own errors (``InvalidItemError``,
``InvalidPriorityError``, ``QueueArgumentError``); every duration (a delay, a lease, a
timeout, ``max_age``) and instant (``at``, ``now_us``) goes through
:mod:`ranked.core.limits`, whose range every backend holds exactly, and a value outside
raises ``OutOfRangeError`` naming the limit. A refused call changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..core.limits import (
    MAX_DURATION_S,
    check_duration,
    check_instant,
    check_instant_us,
)
from ..errors import InvalidItemError, InvalidPriorityError, OutOfRangeError, QueueArgumentError
from .results import Lease

__all__ = [
    "check_count",
    "check_now",
    "duration_us",
    "instant_us",
    "item_bytes",
    "lease_token",
    "pairs_of",
    "priority_of",
]

MAX_SAFE_INTEGER: Final = 2**53


def priority_of(value: object) -> float:
    """``value`` as a stored priority: a finite float (``-0.0`` as ``0.0``); an int must be
    within +-2**53 (stored exactly). Anything else raises :class:`InvalidPriorityError`."""
    if type(value) is float:
        if value - value == 0.0:  # false for NaN and both infinities
            return value + 0.0
    elif isinstance(value, int) and not isinstance(value, bool):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return float(value)
    elif isinstance(value, float) and math.isfinite(value):
        return float(value) + 0.0
    raise InvalidPriorityError(f"a priority must be a finite number, not {value!r}")


def item_bytes(item: object) -> bytes:
    """An item as stored: ``bytes`` as is, ``str`` as UTF-8; anything else raises
    :class:`InvalidItemError`."""
    if type(item) is bytes:
        return item
    if isinstance(item, str):
        try:
            return item.encode()
        except UnicodeEncodeError as error:
            raise InvalidItemError(f"item {item!r} is not valid Unicode text") from error
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item)
    raise InvalidItemError(f"an item must be bytes or str, not {type(item).__name__}")


def pairs_of(items: object) -> list[tuple[bytes, float]]:
    """(item, priority) pairs of a mapping or an iterable of pairs, checked: items as
    bytes, priorities as floats."""
    pairs: Iterable[Any] = items.items() if isinstance(items, Mapping) else items  # type: ignore[assignment]
    checked = []
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise QueueArgumentError(f"expected (item, priority) pairs, got {pair!r}")
        checked.append((item_bytes(pair[0]), priority_of(pair[1])))
    return checked


def duration_us(value: object, what: str, *, zero: bool = True) -> int:
    """A duration in seconds as whole microseconds: within ``[0, MAX_DURATION_S]``
    (``(0, MAX_DURATION_S]`` unless ``zero``), else ``OutOfRangeError`` naming ``what``."""
    kind = type(value)
    if (kind is float or kind is int) and 0 < value <= MAX_DURATION_S:  # type: ignore[operator]
        micros = round(value * 1_000_000)  # type: ignore[operator]
    else:  # zero, or anything check_duration refuses (NaN fails the test above)
        micros = round(check_duration(value, what) * 1_000_000)
    if micros == 0 and not zero:
        raise OutOfRangeError(f"{what} must be more than 0 s, not {value!r}")
    return micros


def instant_us(value: object, what: str) -> int:
    """An instant in Unix seconds as whole microseconds, within ``[0, MAX_INSTANT_S]``."""
    return round(check_instant(value, what) * 1_000_000)


def check_now(now_us: object) -> int | None:
    """``now_us``: None (the backend's clock) or an int of Unix microseconds within
    ``[0, MAX_INSTANT_S]`` seconds, else ``OutOfRangeError``."""
    return None if now_us is None else check_instant_us(now_us, "now_us")


def check_count(count: object) -> int:
    """``count``: an int >= 0, else :class:`QueueArgumentError`."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise QueueArgumentError(f"count must be an int >= 0, not {count!r}")
    return count


def lease_token(lease: object) -> bytes:
    """The token of a :class:`Lease`; anything that is not a lease with a bytes token
    (a hand-built one with ``token=None``, a string) raises :class:`QueueArgumentError`.
    A well-formed token that names no delivery of ours is not an error: it is simply
    not held."""
    if not isinstance(lease, Lease):
        raise QueueArgumentError(f"expected a Lease, not {type(lease).__name__}")
    token = lease.token
    if type(token) is bytes:
        return token
    if not isinstance(token, bytes):
        raise QueueArgumentError(f"a lease token is the bytes reserve returned, not {token!r}")
    return bytes(token)
