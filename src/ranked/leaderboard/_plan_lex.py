"""Member-encoded lexicographic boards (``tie_break=LexLayout(...)``, seed 000).

Every entry is stored at score 0 with member ``LexLayout.encode(fields, member id)``, so
the board's order is the byte order of the members (ascending: put ``descending=True``
on a field where higher is better). The window's ties hash
(:meth:`ranked.core.keys.BoardKeys.ties`) indexes member id -> encoded member, so a
member can be found, replaced and removed.

Writes: :meth:`Lex.submit_steps` runs the backend's ``lex_replace`` once per
window: look up the previous encoding, keep the better one for ``best`` (the smaller
bytes: earlier in board order), swap the entries, update the index, with the window's
TTL, atomically (one script on Redis). A submission to several windows is one atomic
step per window.

Ranks and score reads (the "score" of an entry is its FIRST field):

- unique: the position in byte order (ZRANK), O(log n);
- competition: 1 + entries whose whole field prefix (every field, without the member
  id) is strictly better, i.e. entries tie only when all their fields are equal, as
  entries of a time tie-break board tie only at equal (score, time). One ZLEXCOUNT
  ``- (<prefix>``, O(log n); pages and windows count once, for their first row;
- dense: not available (it would count distinct prefixes: a scan), ``BoardConfigError``;
- ``count_between``/``between``: entries whose first field lies in ``[low, high]``
  (ZLEXCOUNT / ZRANGE BYLEX over the first field's 20 digits);
- ``percentile``: 100 * entries with a strictly worse first field / all entries.

Reads of several calls (competition ranks, ``between`` ranks, ``percentile``) are each
atomic call by call, not as a whole.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from types import MappingProxyType
from typing import Final

from ..backends.generic import ByteRange
from ..core._time import Instant
from ..core.lex import LEX_INT_MAX, LEX_INT_MIN
from ..core.models import Member
from ..core.ranks import RankStyle
from ..errors import BoardConfigError, InvalidScoreError
from ._plan_core import PlanCore, Steps, member_bytes, to_ms
from ._plan_windows import Windows
from ._requests import LexOutcome, LexWrite, Operator, Row, Target
from .results import Submission, WindowResult

__all__ = ["Lex", "LexFields"]

LexFields = int | Sequence[int]
"""The fields of one lexicographic entry (an int for a one-field layout)."""

_FIELD_WIDTH: Final = 20  # digits per encoded field (ranked.core.lex)
_ABOVE_DIGITS: Final = b"\xff"  # sorts after every digit and ':'


class Lex:
    """Reads and writes of lexicographic boards: member id -> encoded member -> rank
    (no I/O)."""

    def __init__(self, core: PlanCore, windows: Windows) -> None:
        self.core = core
        self.windows = windows
        self.lex = core.lex

    def encoded(self, window_id: str, members: Sequence[bytes]) -> Steps[list[bytes | None]]:
        """The stored (encoded) member of each member id, None if absent. HMGET."""
        if not members:
            return []
        found: list[bytes | None] = yield (
            "hash_get",
            (self.core.ties_key(window_id), list(members)),
        )
        return found

    def _prefix(self, encoded: bytes) -> bytes:
        assert self.lex is not None
        return encoded[: self.lex.prefix_length]

    def better(self, target: Target, encoded: bytes) -> Steps[int]:
        """Entries whose field prefix is strictly better than ``encoded``'s. ZLEXCOUNT."""
        better: int = yield (
            "lex_count",
            (target.key, ByteRange(None, self._prefix(encoded), False, True)),
        )
        return better

    def ranks(
        self,
        window_id: str,
        target: Target,
        members: Sequence[bytes],
        style: RankStyle = RankStyle.UNIQUE,
    ) -> Steps[list[tuple[float, int] | None]]:
        """(first field, rank) per member id, None if absent. Two calls (unique), plus one
        ZLEXCOUNT per present member (competition)."""
        assert self.lex is not None
        encoded = yield from self.encoded(window_id, members)
        present = [raw for raw in encoded if raw is not None]
        found: list[tuple[float, int] | None] = []
        if present:
            found = yield ("ranks", (target, present, False, RankStyle.UNIQUE))
        hits = iter(found)
        answers: list[tuple[float, int] | None] = []
        for raw in encoded:
            hit = None if raw is None else next(hits)
            if raw is None or hit is None:
                answers.append(None)  # absent, or its index entry outlived it
                continue
            rank = hit[1]
            if style is RankStyle.COMPETITION:
                rank = 1 + (yield from self.better(target, raw))
            answers.append((self.lex.decode(raw).fields[0], rank))
        return answers

    def rows(self, target: Target, rows: list[Row], style: RankStyle) -> Steps[list[Row]]:
        """Consecutive rows read with unique ranks (positions), in ``style``: competition
        counts once for the first row; later rows share the rank of an equal prefix or
        take their position."""
        if style is RankStyle.UNIQUE or not rows:
            return rows
        previous = self._prefix(rows[0][0])
        rank = 1 + (yield from self.better(target, rows[0][0]))
        out: list[Row] = []
        for member, score, position in rows:
            prefix = self._prefix(member)
            if prefix != previous:
                rank, previous = position, prefix
            out.append((member, score, rank))
        return out

    def field_range(self, low: float, high: float) -> tuple[bytes, bytes] | None:
        """Byte bounds of the entries whose first field lies in ``[low, high]``, or None
        when no integer does (any int or float but NaN; infinities are unbounded)."""
        assert self.lex is not None
        for bound in (low, high):
            if isinstance(bound, bool) or not isinstance(bound, int | float) or bound != bound:
                raise InvalidScoreError(f"a bound is a number (not NaN), not {bound!r}")
        if low > LEX_INT_MAX or high < LEX_INT_MIN:  # infinities and huge ints too
            return None
        first = LEX_INT_MIN if low <= LEX_INT_MIN else math.ceil(low)
        last = LEX_INT_MAX if high >= LEX_INT_MAX else math.floor(high)
        if first > last:
            return None
        rest = (0,) * (len(self.lex.descending) - 1)
        start = self.lex.encode((first, *rest), b"")[:_FIELD_WIDTH]
        stop = self.lex.encode((last, *rest), b"")[:_FIELD_WIDTH]
        if self.lex.descending[0]:
            start, stop = stop, start
        return start, stop + _ABOVE_DIGITS

    def between(
        self, target: Target, low: float, high: float, offset: int, count: int, style: RankStyle
    ) -> Steps[list[Row]]:
        """Rows whose first field lies in ``[low, high]``, board order. ZRANGE BYLEX, then
        one ZLEXCOUNT for the first row's rank."""
        bounds = self.field_range(low, high)
        if bounds is None:
            return []
        span = ByteRange(bounds[0], bounds[1])
        found: list[bytes] = yield ("lex_range", (target.key, span, offset, count, False))
        if not found:
            return []
        before: int = yield ("lex_count", (target.key, ByteRange(None, found[0], False, True)))
        rows: list[Row] = [(raw, 0.0, before + 1 + i) for i, raw in enumerate(found)]
        return (yield from self.rows(target, rows, style))

    def count_between(self, target: Target, low: float, high: float) -> Steps[int]:
        """Entries whose first field lies in ``[low, high]``. ZLEXCOUNT."""
        bounds = self.field_range(low, high)
        if bounds is None:
            return 0
        total: int = yield ("lex_count", (target.key, ByteRange(bounds[0], bounds[1])))
        return total

    def percentile(self, window_id: str, target: Target, member: bytes) -> Steps[float | None]:
        """100 * entries with a strictly worse first field / all entries; None if absent."""
        encoded = (yield from self.encoded(window_id, [member]))[0]
        if encoded is None:
            return None
        total: int = yield ("count", (target.key,))
        field = encoded[:_FIELD_WIDTH] + _ABOVE_DIGITS
        worse: int = yield ("lex_count", (target.key, ByteRange(field, None, True, False)))
        return 100.0 * worse / total if total else 0.0

    # -- the write: one atomic ``lex_replace`` per window ---------------------------

    def _encode(self, member: bytes, fields: LexFields) -> bytes:
        assert self.lex is not None
        values = (fields,) if isinstance(fields, int) else tuple(fields)
        return self.lex.encode(values, member)

    def submit_steps(
        self,
        items: Iterable[tuple[Member, LexFields]],
        operator: Operator | None,
        at: Instant | None,
    ) -> Steps[list[Submission]]:
        """Write ``(member, fields)`` pairs to every open window, in order: per window and
        pair one ``lex_replace`` (atomic: HGET, ZREM, ZADD, HSET, PEXPIRE in one step).
        ``best`` keeps the smaller encoding (the better one in byte order)."""
        if self.lex is None:
            raise BoardConfigError("submit_lex needs a LexLayout tie_break")
        op = self.core.config.operator if operator is None else operator
        if op not in ("set", "best"):
            raise BoardConfigError(f"a lexicographic board takes 'set' or 'best', not {op!r}")
        pairs = [(member, self._encode(member_bytes(member), f)) for member, f in items]
        instant = self.core.now_ms() if at is None else to_ms(at)
        targets, window_of, register, primary = self.windows.window_targets(instant)
        if register:
            yield ("set_add", (self.core.registry_key, [w.encode() for w in register]))
        self.windows.register(register)
        results: list[dict[str, WindowResult]] = [{} for _ in pairs]
        for target in targets:
            window_id = window_of[target.key]
            index = self.core.ties_key(window_id)
            for found, (member, encoded) in zip(results, pairs, strict=True):
                outcome: LexOutcome = yield (
                    "lex_replace",
                    (target, index, LexWrite(member_bytes(member), encoded, op)),
                )
                found[window_id] = self._result(window_id, outcome)
        return [
            Submission(member, found[primary], MappingProxyType(found))
            for (member, _), found in zip(pairs, results, strict=True)
        ]

    def _result(self, window_id: str, outcome: LexOutcome) -> WindowResult:
        assert self.lex is not None
        previous = outcome.previous
        return WindowResult(
            window_id,
            self.lex.decode(outcome.stored).fields[0],
            None if previous is None else self.lex.decode(previous).fields[0],
            outcome.rank,
            outcome.previous_rank,
            outcome.changed,
        )
