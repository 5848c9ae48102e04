"""Member-encoded boards: the order lives in the member bytes, every score is 0.

When all members of a sorted set share one score, Redis orders them by member bytes
and ``ZRANGE key [a (b BYLEX`` reads them in that order. :class:`LexLayout` builds
such members from integer fields and the member id::

    <field 1><field 2>...<field n>:<member id>

Each field is 20 ASCII digits: the signed 64-bit value plus ``2**63`` (so negatives
sort first), or ``2**64 - 1`` minus that for a field sorted descending. Fixed width
makes byte order equal numeric order field by field, and members tie-break last by
their id bytes. The digits keep the members readable in ``redis-cli``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..errors import LayoutError, OutOfRangeError

__all__ = ["LEX_INT_MAX", "LEX_INT_MIN", "LexLayout", "LexMember"]

LEX_INT_MIN: Final = -(1 << 63)
LEX_INT_MAX: Final = (1 << 63) - 1

_BIAS: Final = 1 << 63
_TOP: Final = (1 << 64) - 1
_WIDTH: Final = 20  # digits of 2**64 - 1
_SEPARATOR: Final = b":"


@dataclass(frozen=True, slots=True)
class LexMember:
    """A decoded member-encoded entry: its integer fields and the member id bytes."""

    fields: tuple[int, ...]
    member: bytes


@dataclass(frozen=True, slots=True)
class LexLayout:
    """Fixed-width, order-preserving members for a lexicographic board.

    ``descending[i]`` says whether field ``i`` sorts high-to-low in ascending byte
    order. Example (seed 000, "first to claim" board read with ascending BYLEX):
    ``LexLayout(descending=(False,))`` with the claim time in ms as the only field.
    For "highest score first, then earliest": ``LexLayout(descending=(True, False))``.
    """

    descending: tuple[bool, ...]

    def __post_init__(self) -> None:
        if not self.descending:
            raise LayoutError("a lexicographic layout needs at least one field")

    @property
    def prefix_length(self) -> int:
        """Bytes before the member id, separator included."""
        return _WIDTH * len(self.descending) + len(_SEPARATOR)

    def encode(self, fields: Sequence[int], member: str | bytes) -> bytes:
        """The member bytes for ``fields`` and ``member`` (``str`` is UTF-8 encoded). O(n).

        Byte order of the results equals the order of ``(fields, member bytes)`` with
        descending fields reversed. Raises :class:`OutOfRangeError` for a field
        outside the signed 64-bit range and :class:`LayoutError` for a wrong count.
        """
        if len(fields) != len(self.descending):
            raise LayoutError(f"expected {len(self.descending)} fields, got {len(fields)}")
        parts = []
        for value, descending in zip(fields, self.descending, strict=True):
            if isinstance(value, bool) or not isinstance(value, int):
                raise OutOfRangeError(f"a lexicographic field must be an int, not {value!r}")
            if not LEX_INT_MIN <= value <= LEX_INT_MAX:
                raise OutOfRangeError(f"{value} is outside the signed 64-bit range")
            biased = value + _BIAS
            parts.append(b"%020d" % (_TOP - biased if descending else biased))
        raw = member.encode("utf-8") if isinstance(member, str) else bytes(member)
        return b"".join(parts) + _SEPARATOR + raw

    def decode(self, encoded: bytes) -> LexMember:
        """The fields and member id of bytes made by :meth:`encode`.

        Raises :class:`OutOfRangeError` for bytes that :meth:`encode` cannot produce.
        """
        head = self.prefix_length
        if len(encoded) < head or encoded[head - 1 : head] != _SEPARATOR:
            raise OutOfRangeError(f"{encoded[:head]!r} is not a member of this layout")
        fields = []
        for index, descending in enumerate(self.descending):
            digits = encoded[index * _WIDTH : (index + 1) * _WIDTH]
            if not digits.isdigit():
                raise OutOfRangeError(f"field {index} of {encoded!r} is not {_WIDTH} digits")
            biased = int(digits)
            if biased > _TOP:
                raise OutOfRangeError(f"field {index} of {encoded!r} exceeds 2**64 - 1")
            fields.append((_TOP - biased if descending else biased) - _BIAS)
        return LexMember(tuple(fields), bytes(encoded[head:]))
