"""Webhook signatures: HMAC-SHA256 over the timestamp and the raw body (docs/live.md), for
every webhook the project sends (rank-change notifications, the write guard's validator).

The signed material is the bytes ``<timestamp>.<raw body>``: the decimal Unix seconds of
the ``X-Ranked-Timestamp`` header, one full stop, then the request body exactly as sent.
The ``X-Ranked-Signature`` header is ``sha256=<hex digest>`` of HMAC-SHA256 with the
board's secret (UTF-8) as key. A receiver recomputes it over the body it received, compares
in constant time, and refuses a timestamp too far from its own clock (a replay).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

__all__ = ["HEADERS", "PREFIX", "sign", "verify"]

PREFIX: Final = "sha256="

HEADERS: Final = {
    "delivery": "X-Ranked-Delivery",
    "timestamp": "X-Ranked-Timestamp",
    "signature": "X-Ranked-Signature",
    "attempt": "X-Ranked-Attempt",
}
"""The headers of every delivery: its id (the same on every attempt), the Unix seconds it
was signed at, the signature, and the attempt's number (1, 2, ...)."""


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Ranked-Signature`` value of ``body`` sent at ``timestamp`` (Unix s)."""
    material = str(timestamp).encode("ascii") + b"." + body
    return PREFIX + hmac.new(secret.encode("utf-8"), material, hashlib.sha256).hexdigest()


def verify(
    secret: str,
    timestamp: str,
    body: bytes,
    signature: str,
    *,
    now: float,
    tolerance: float = 300.0,
) -> bool:
    """Whether ``signature`` (the header's value) signs ``body`` with ``secret`` at
    ``timestamp`` (the header's value), and ``timestamp`` is within ``tolerance``
    seconds of ``now``. Constant-time comparison."""
    if not timestamp.isdigit() or abs(now - int(timestamp)) > tolerance:
        return False
    return hmac.compare_digest(sign(secret, int(timestamp), body), signature)
