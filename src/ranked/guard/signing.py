"""The signed payload: HMAC-SHA256 over (board, member, score, client time, nonce).

The message is the UTF-8 text of five lines::

    ranked-guard-v1\\n<board>\\n<member>\\n<score>\\n<client time, Unix ms>\\n<nonce>

without a final newline. ``<score>`` is written as an integer when the score is a whole
number below 2**53 in magnitude (``300``, not ``300.0``), else as the shortest decimal
that reads back as the same double (Python's ``repr``, JavaScript's ``String(x)``). A
member may hold any character: the three fields after it cannot hold a newline, so the
message reads back one way only. The signature is the HMAC's lowercase hex digest.
Signing and verifying cost one HMAC-SHA256 over ~100 bytes: O(len(member)).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from typing import Final

from ..errors import GuardArgumentError
from .config import Secret

__all__ = ["check_nonce", "message", "score_text", "sign", "verify"]

_NONCE: Final = re.compile(r"[A-Za-z0-9_.:~+/=-]{8,128}")
_EXACT: Final = 2.0**53
_KEYED: dict[bytes, hmac.HMAC] = {}
"""Each secret's HMAC with its key already absorbed (at most 256 kept): verifying copies
it rather than hashing the key again."""


def _digest(key: bytes, text: bytes) -> bytes:
    """``hmac.digest(key, text, "sha256")`` from the key's prepared HMAC."""
    keyed = _KEYED.get(key)
    if keyed is None:
        if len(_KEYED) >= 256:
            _KEYED.clear()
        keyed = _KEYED[key] = hmac.new(key, digestmod=hashlib.sha256)
    mac = keyed.copy()
    mac.update(text)
    return mac.digest()


def score_text(score: float) -> str:
    """The score as the message writes it."""
    value = float(score)
    if value.is_integer() and abs(value) < _EXACT:
        return str(int(value))
    return repr(value)


def check_nonce(nonce: object) -> str:
    """``nonce`` if it is 8 to 128 characters of ``[A-Za-z0-9_.:~+/=-]``, else
    :class:`GuardArgumentError`."""
    if not isinstance(nonce, str) or _NONCE.fullmatch(nonce) is None:
        raise GuardArgumentError("nonce must be 8 to 128 characters of [A-Za-z0-9_.:~+/=-]")
    return nonce


def message(board: str, member: str | bytes, score: float, client_time: int, nonce: str) -> bytes:
    """The bytes the HMAC covers (see the module's docstring)."""
    who = member if isinstance(member, bytes) else member.encode("utf-8", "surrogateescape")
    return b"\n".join(
        (
            b"ranked-guard-v1",
            board.encode(),
            who,
            score_text(score).encode(),
            b"%d" % client_time,
            nonce.encode(),
        )
    )


def sign(
    secret: bytes | Secret,
    board: str,
    member: str | bytes,
    score: float,
    client_time: int,
    nonce: str,
) -> str:
    """The signature a client sends: the hex HMAC-SHA256 of :func:`message`."""
    key = secret.key if isinstance(secret, Secret) else secret
    return hmac.digest(key, message(board, member, score, client_time, nonce), "sha256").hex()


def verify(
    secrets: Sequence[Secret],
    now: float,
    board: str,
    member: str | bytes,
    score: float,
    client_time: int,
    nonce: str,
    signature: str,
) -> bool:
    """Whether ``signature`` is the HMAC of the message under a secret valid at ``now``
    (Unix seconds); constant-time comparison. O(secrets)."""
    if not isinstance(signature, str) or len(signature) != 64 or not signature.isascii():
        return False  # compare_digest takes ASCII text only; any other is no signature
    text = message(board, member, score, client_time, nonce)
    found = False
    for secret in secrets:
        if secret.until is None or now < secret.until:
            # lowercase hex text against lowercase hex text: an uppercase or non-hex
            # signature of the right length simply differs
            found |= hmac.compare_digest(_digest(secret.key, text).hex(), signature)
    return found
