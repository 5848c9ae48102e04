"""What the Redis backends share beyond sending: the typed errors of script error replies,
and the server's clock.

Scripts mark their own errors with a ``RANKED_...`` prefix (an ``incr`` pushing a
composite score out of its budget, or to an inexact or infinite sum);
:func:`translate_error` maps them to the same types the memory backend raises.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, Final

from ..errors import InvalidScoreError, OutOfRangeError, ResponseError

__all__ = ["INVALID_SCORE", "OUT_OF_RANGE", "ServerClock", "translate_error"]

OUT_OF_RANGE: Final = "RANKED_OUT_OF_RANGE "
INVALID_SCORE: Final = "RANKED_INVALID_SCORE "


def translate_error(message: str) -> Exception:
    """The typed error for a Redis error reply text (scripts mark their own errors)."""
    if message.startswith(OUT_OF_RANGE):
        return OutOfRangeError(message[len(OUT_OF_RANGE) :])
    if message.startswith(INVALID_SCORE):
        return InvalidScoreError(message[len(INVALID_SCORE) :])
    return ResponseError(message)


class ServerClock:
    """The server's clock without a round trip: local clock + an offset measured by TIME.

    The offset is measured on first use, again every :attr:`REFRESH_S` seconds, and after
    a connection error (the server may have restarted, or failed over to another
    machine). Until the first measurement the offset is 0 (the local clock).
    """

    REFRESH_S: Final = 30.0

    __slots__ = ("_local", "_next_refresh", "offset_ms")

    def __init__(self, local: Callable[[], float] = time.time) -> None:
        self._local = local
        self.offset_ms = 0
        self._next_refresh = -math.inf

    def local_ms(self) -> int:
        return int(self._local() * 1000)

    def now_ms(self) -> int:
        return self.local_ms() + self.offset_ms

    @property
    def due(self) -> bool:
        return time.monotonic() >= self._next_refresh

    def invalidate(self) -> None:
        self._next_refresh = -math.inf

    def postpone(self, seconds: float) -> None:
        """Keep the current offset for ``seconds`` (the server did not answer TIME)."""
        self._next_refresh = time.monotonic() + seconds

    def update(self, reply: Any, sent_ms: int, received_ms: int) -> None:
        """Record a TIME reply ([seconds, microseconds]) read between the two local times."""
        seconds, micros = reply
        server_ms = int(seconds) * 1000 + int(micros) // 1000
        self.offset_ms = server_ms - (sent_ms + received_ms) // 2
        self._next_refresh = time.monotonic() + self.REFRESH_S
