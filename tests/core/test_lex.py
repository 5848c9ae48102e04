"""Member-encoded lexicographic boards: fixed width, order preserving, round trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ranked.core.lex import LEX_INT_MAX, LEX_INT_MIN, LexLayout, LexMember
from ranked.errors import LayoutError, OutOfRangeError

ints = st.integers(LEX_INT_MIN, LEX_INT_MAX)


def test_format_is_readable_and_fixed_width() -> None:
    layout = LexLayout(descending=(False,))
    assert layout.encode([0], "bob") == b"09223372036854775808:bob"
    assert layout.encode([LEX_INT_MIN], b"") == b"00000000000000000000:"
    assert layout.encode([LEX_INT_MAX], b"x") == b"18446744073709551615:x"
    assert LexLayout(descending=(True,)).encode([LEX_INT_MAX], b"x") == b"00000000000000000000:x"
    assert layout.prefix_length == 21


@given(
    st.tuples(ints, ints), st.tuples(ints, ints), st.lists(st.booleans(), min_size=2, max_size=2)
)
def test_order_preserved_field_by_field(
    a: tuple[int, int], b: tuple[int, int], descending: list[bool]
) -> None:
    layout = LexLayout(descending=tuple(descending))
    key_a = tuple(-v if d else v for v, d in zip(a, descending, strict=True))
    key_b = tuple(-v if d else v for v, d in zip(b, descending, strict=True))
    ea, eb = layout.encode(a, b"m"), layout.encode(b, b"m")
    assert (ea < eb) == (key_a < key_b)
    assert (ea == eb) == (a == b)


@given(ints, ints, st.binary(max_size=8), st.binary(max_size=8))
def test_member_breaks_ties_last(x: int, y: int, m1: bytes, m2: bytes) -> None:
    layout = LexLayout(descending=(False,))
    assert (layout.encode([x], m1) < layout.encode([y], m2)) == ((x, m1) < (y, m2))


@given(
    st.lists(ints, min_size=1, max_size=3).flatmap(
        lambda values: st.tuples(
            st.just(values),
            st.lists(st.booleans(), min_size=len(values), max_size=len(values)),
            st.one_of(st.binary(max_size=10), st.text(max_size=10)),
        )
    )
)
def test_round_trip(case: tuple[list[int], list[bool], bytes | str]) -> None:
    values, descending, member = case
    layout = LexLayout(descending=tuple(descending))
    raw = member.encode("utf-8") if isinstance(member, str) else member
    assert layout.decode(layout.encode(values, member)) == LexMember(tuple(values), raw)


def test_seed000_first_to_claim_board() -> None:
    # All members at score 0: Redis orders them by memcmp, which is Python's bytes order,
    # so ZRANGE key - + BYLEX reads them in claim order (earliest first).
    layout = LexLayout(descending=(False,))
    claims = {"dora": 1_700_000_000_500, "al": 1_700_000_000_100, "cy": 1_700_000_000_100}
    members = sorted(layout.encode([ms], player) for player, ms in claims.items())
    assert [layout.decode(member).member for member in members] == [b"al", b"cy", b"dora"]


@pytest.mark.parametrize("value", [LEX_INT_MAX + 1, LEX_INT_MIN - 1])
def test_out_of_range_fields(value: int) -> None:
    with pytest.raises(OutOfRangeError, match="64-bit"):
        LexLayout(descending=(False,)).encode([value], b"m")


def test_bad_fields_and_layouts() -> None:
    layout = LexLayout(descending=(False, True))
    with pytest.raises(LayoutError, match="expected 2 fields"):
        layout.encode([1], b"m")
    with pytest.raises(OutOfRangeError, match="must be an int"):
        layout.encode([1, 2.5], b"m")  # type: ignore[list-item]
    with pytest.raises(OutOfRangeError, match="must be an int"):
        layout.encode([1, True], b"m")
    with pytest.raises(LayoutError):
        LexLayout(descending=())


@pytest.mark.parametrize(
    "encoded",
    [
        b"",
        b"123:m",
        b"0922337203685477580x:m",
        b"09223372036854775808-m",
        b"99999999999999999999:m",
    ],
)
def test_decode_rejects_foreign_members(encoded: bytes) -> None:
    with pytest.raises(OutOfRangeError):
        LexLayout(descending=(False,)).decode(encoded)
