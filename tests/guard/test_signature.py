"""The C signature check (``_signature.c``) and its hashlib twin against the reference:
``sign``, hashlib's HMAC-SHA256 over ``message``. No backend: the check is the guard's own
code."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranked.guard import Secret, message, sign, verify
from ranked.guard._signature import Verifier, rounds
from ranked.guard.signing import reference_verifier, verifier

ROUNDS = ["c", "x86"] if rounds() == "x86" else ["c"]
"""SHA-256's rounds in C, and with the processor's SHA extensions where it has them (the
last one is what the module chose)."""

KEYS = [bytes(range(32)), b"k" * 16, b"x" * 64, b"y" * 65, b"z" * 200]
"""Keys shorter than, equal to and longer than SHA-256's block (a long key is hashed)."""

scores = st.one_of(
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 2.0**53, 2.0**53 - 1, -(2.0**53), 1e16, 5e-324, 0.1]),
)
members = st.one_of(
    st.text(min_size=1, max_size=300),  # surrogates included: encoded with surrogateescape
    st.binary(min_size=1, max_size=300),
)


@settings(max_examples=400, deadline=None)
@given(
    key=st.sampled_from(KEYS),
    board=st.text(min_size=1, max_size=40),  # no surrogates: a board name is plain text
    member=members,
    score=scores,
    client_time=st.integers(-(2**70), 2**70),
    nonce=st.from_regex(r"[A-Za-z0-9_.:~+/=-]{8,128}", fullmatch=True),
)
def test_the_c_check_accepts_exactly_the_reference_signature(
    key: bytes, board: str, member: str | bytes, score: float, client_time: int, nonce: str
) -> None:
    signature = sign(key, board, member, score, client_time, nonce)
    text = message(board, member, score, client_time, nonce)
    assert signature == hmac.new(key, text, hashlib.sha256).hexdigest()
    flipped = signature[:5] + ("0" if signature[5] != "0" else "1") + signature[6:]
    made_by = [Verifier] * len(ROUNDS) + [reference_verifier]
    for made, name in zip(made_by, [*ROUNDS, None], strict=True):
        if name is not None:
            rounds(name)
        check = made([(key, None)])
        assert check(0.0, board, member, score, client_time, nonce, signature)
        # one character changed in the signature, or in what it covers, is refused
        assert not check(0.0, board, member, score, client_time, nonce, flipped)
        assert not check(0.0, board, member, score, client_time + 1, nonce, signature)
        assert not check(0.0, board + "x", member, score, client_time, nonce, signature)
        assert not made([(key + b"!", None)])(
            0.0, board, member, score, client_time, nonce, signature
        )
    rounds(ROUNDS[-1])


def test_every_valid_secret_is_tried_and_expired_ones_are_not() -> None:
    old, new = Secret(b"o" * 32, until=100.0), Secret(b"n" * 32)
    by_old = sign(old, "b", "m", 5, 1, "nonce-001")
    by_new = sign(new, "b", "m", 5, 1, "nonce-001")
    assert verify((new, old), 99.9, "b", "m", 5, 1, "nonce-001", by_old)
    assert verify((new, old), 99.9, "b", "m", 5, 1, "nonce-001", by_new)
    assert not verify((new, old), 100.0, "b", "m", 5, 1, "nonce-001", by_old)  # until: excl.
    assert verify((new, old), 100.0, "b", "m", 5, 1, "nonce-001", by_new)
    assert not verify((), 0.0, "b", "m", 5, 1, "nonce-001", by_new)


@pytest.mark.parametrize(
    "signature",
    [None, 5, "", "a" * 63, "a" * 65, "é" * 64, b"a" * 64],
)
def test_a_signature_not_of_the_digest_form_is_refused(signature: object) -> None:
    assert not verify((Secret(KEYS[0]),), 0.0, "b", "m", 5, 1, "nonce-001", signature)  # type: ignore[arg-type]


def test_uppercase_hex_is_another_signature() -> None:
    signature = sign(KEYS[0], "b", "m", 5, 1, "nonce-001")
    assert not verify((Secret(KEYS[0]),), 0.0, "b", "m", 5, 1, "nonce-001", signature.upper())


def test_arguments_of_the_wrong_type_raise() -> None:
    check = verifier((Secret(KEYS[0]),))
    signature = sign(KEYS[0], "b", "m", 5, 1, "nonce-001")
    with pytest.raises(TypeError):
        check(0.0, "b", 7, 5, 1, "nonce-001", signature)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        check(0.0, "b", "m", 5, 1.5, "nonce-001", signature)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        check(0.0, "b", "m", "5", 1, "nonce-001", signature)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Verifier([(b"k" * 16,)])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        Verifier([("text key", None)])  # type: ignore[list-item]


def test_verifiers_are_made_once_per_set_of_secrets() -> None:
    secrets = (Secret(KEYS[0]), Secret(KEYS[1], until=5.0))
    assert verifier(secrets) is verifier(list(secrets))
    assert verifier(secrets) is not verifier(secrets[:1])


def test_a_member_with_escaped_bytes_is_signed_as_its_bytes() -> None:
    # a str member holding surrogateescape's stand-ins for undecodable bytes
    member = b"\xff\xfeok".decode("utf-8", "surrogateescape")
    signature = sign(KEYS[0], "b", member, 5, 1, "nonce-001")
    assert signature == sign(KEYS[0], "b", b"\xff\xfeok", 5, 1, "nonce-001")
    assert verify((Secret(KEYS[0]),), 0.0, "b", member, 5, 1, "nonce-001", signature)
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate no encoding gives
        verify((Secret(KEYS[0]),), 0.0, "b", "\ud800", 5, 1, "nonce-001", signature)


def test_keys_that_change_while_read_are_read_from_a_copy() -> None:
    """An ``until`` whose ``__float__`` empties the list being read: the Verifier reads a
    copy, so the keys it was given are the keys it keeps."""
    keys: list[tuple[bytes, object]] = []

    class Shrinking:
        def __float__(self) -> float:
            keys.clear()
            return 5.0

    keys += [(KEYS[0], Shrinking()), (KEYS[1], None), (KEYS[2], None)]
    check = Verifier(keys)  # type: ignore[arg-type]
    signature = sign(KEYS[2], "b", "m", 5, 1, "nonce-001")
    assert check(0.0, "b", "m", 5, 1, "nonce-001", signature)


def test_the_rounds_are_chosen_once_and_can_be_switched_for_tests() -> None:
    chosen = rounds()
    assert chosen in ("c", "x86")
    assert rounds("c") == "c"
    with pytest.raises(ValueError):
        rounds("arm")
    assert rounds(chosen) == chosen
