"""The signed payload: HMAC-SHA256 over (board, member, score, client time, nonce).

The message is the UTF-8 text of five lines::

    ranked-guard-v1\\n<board>\\n<member>\\n<score>\\n<client time, Unix ms>\\n<nonce>

without a final newline. ``<score>`` is written as an integer when the score is a whole
number below 2**53 in magnitude (``300``, not ``300.0``), else as the shortest decimal
that reads back as the same double (Python's ``repr``, JavaScript's ``String(x)``). A
member may hold any character: the three fields after it cannot hold a newline, so the
message reads back one way only. The signature is the HMAC's lowercase hex digest.
Signing and verifying cost one HMAC-SHA256 over ~100 bytes: O(len(member)).

:func:`sign` is the reference (hashlib's HMAC over :func:`message`). Verifying runs in
one C call (``_signature.c``: the same message, each secret's HMAC state prepared once),
or on hashlib with the pure-Python engine (``RANKED_PUREPYTHON=1``) or no C build.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable, Sequence
from typing import Final

from ..errors import GuardArgumentError
from ._native import Verifier
from .config import Secret

__all__ = ["check_nonce", "message", "score_text", "sign", "verifier", "verify"]

_NONCE: Final = re.compile(r"[A-Za-z0-9_.:~+/=-]{8,128}")
_EXACT: Final = 2.0**53


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


Verify = Callable[[float, str, str | bytes, float, int, str, str], bool]
"""``(now, board, member, score, client_time, nonce, signature) -> bool``: :func:`verify`
with its secrets bound."""


def reference_verifier(keys: Sequence[tuple[bytes, float | None]]) -> Verify:
    """The C ``Verifier``'s contract on hashlib: ``keys`` are (key, until) pairs."""
    pairs = tuple(keys)

    def check(
        now: float,
        board: str,
        member: str | bytes,
        score: float,
        client_time: int,
        nonce: str,
        signature: str,
    ) -> bool:
        if not isinstance(signature, str) or len(signature) != 64 or not signature.isascii():
            return False  # compare_digest takes ASCII text only; any other is no signature
        text = message(board, member, score, client_time, nonce)
        found = False
        for key, until in pairs:
            if until is None or now < until:
                # lowercase hex against the text given: an uppercase signature differs
                found |= hmac.compare_digest(hmac.digest(key, text, "sha256").hex(), signature)
        return found

    return check


_VERIFIER: Callable[[Sequence[tuple[bytes, float | None]]], Verify] = (
    reference_verifier if Verifier is None else Verifier
)

_VERIFIERS: dict[tuple[Secret, ...], Verify] = {}
"""The verifiers of recent sets of secrets (at most 256 kept)."""


def verifier(secrets: Sequence[Secret]) -> Verify:
    """:func:`verify` under ``secrets``, each secret's HMAC state prepared once: what a
    guard calls for every signed submission."""
    key = tuple(secrets)
    found = _VERIFIERS.get(key)
    if found is None:
        if len(_VERIFIERS) >= 256:
            _VERIFIERS.clear()
        found = _VERIFIERS[key] = _VERIFIER([(s.key, s.until) for s in key])
    return found


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
    (Unix seconds); constant-time comparison (every valid secret is tried). A signature
    that is not 64 ASCII characters is no signature (False). O(secrets)."""
    return verifier(secrets)(now, board, member, score, client_time, nonce, signature)
