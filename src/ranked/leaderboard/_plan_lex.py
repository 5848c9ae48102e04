"""Member-encoded lexicographic boards (``tie_break=LexLayout(...)``, seed 000).

Every entry is stored at score 0 with member ``LexLayout.encode(fields, member id)``, so
the board's order is the byte order of the members (ascending: put ``descending=True``
on a field where higher is better). The window's ties hash
(:meth:`ranked.core.keys.BoardKeys.ties`) indexes member id -> encoded member, so a
member can be found, replaced and removed.

What the backend contract allows today (all reads in ascending byte order):
top-N, pages and cursors, ``page_at``, around-me, rank and ``ranks_of`` in the unique
style (the position), score (the first field, decoded from the member), count.
Competition/dense ranks, ``percentile`` and ``count_between`` need a lexicographic count
(ZLEXCOUNT), ``between`` needs lexicographic range reads (ZRANGE BYLEX), and an atomic
replace needs "remove the member's previous encoding and add the new one" in one
script: none is in the contract, so those reads raise ``BoardConfigError`` and writes
go through :meth:`LexWritePlan.submit_lex_steps`, which is several calls (lookup,
remove, add, index) and NOT atomic: concurrent writes of one member may leave two
entries for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..backends.base import Operator, SubmitRequest, Target
from ..core._time import Instant
from ..core.models import Member
from ..core.ranks import RankStyle
from ._plan_core import PlanCore, Steps, member_bytes, to_ms
from ._plan_write import WritePlan
from .errors import BoardConfigError
from .results import Submission, WindowResult

__all__ = ["LexReadPlan", "LexWritePlan"]

LexFields = int | Sequence[int]
"""The fields of one lexicographic entry (an int for a one-field layout)."""


class LexReadPlan(PlanCore):
    """Lookups of lexicographic boards: member id -> encoded member -> rank."""

    def lex_encoded(self, window_id: str, members: Sequence[bytes]) -> Steps[list[bytes | None]]:
        """The stored (encoded) member of each member id, None if absent. HMGET."""
        if not members:
            return []
        found: list[bytes | None] = yield ("hash_get", (self.ties_key(window_id), list(members)))
        return found

    def lex_ranks(
        self, window_id: str, target: Target, members: Sequence[bytes]
    ) -> Steps[list[tuple[float, int] | None]]:
        """(first field, unique rank) per member id, None if absent. Two calls."""
        assert self.lex is not None
        encoded = yield from self.lex_encoded(window_id, members)
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
            else:
                answers.append((self.lex.decode(raw).fields[0], hit[1]))
        return answers


class LexWritePlan(WritePlan, LexReadPlan):
    """Submissions to lexicographic boards (not atomic, see the module docstring)."""

    def _encode(self, member: bytes, fields: LexFields) -> bytes:
        assert self.lex is not None
        values = (fields,) if isinstance(fields, int) else tuple(fields)
        return self.lex.encode(values, member)

    def submit_lex_steps(
        self,
        items: Iterable[tuple[Member, LexFields]],
        operator: Operator | None,
        at: Instant | None,
    ) -> Steps[list[Submission]]:
        """Write ``(member, fields)`` pairs to every open window: per window, look up the
        previous encodings (HMGET), rank them, remove the replaced ones, add the new ones
        at score 0 (one atomic batch), rank and index them (HSET). ``best`` keeps the
        smaller encoding (the better one in byte order)."""
        if self.lex is None:
            raise BoardConfigError("submit_lex_nonatomic needs a LexLayout tie_break")
        op = self.config.operator if operator is None else operator
        if op not in ("set", "best"):
            raise BoardConfigError(f"a lexicographic board takes 'set' or 'best', not {op!r}")
        pairs = [(member, self._encode(member_bytes(member), f)) for member, f in items]
        instant = self.now_ms() if at is None else to_ms(at)
        targets, window_of, register, primary = self.window_targets(instant)
        if register:
            yield ("set_add", (self.registry_key, [w.encode() for w in register]))
        self._registered.update(register)
        results: list[dict[str, WindowResult]] = [{} for _ in pairs]
        for target in targets:
            window_id = window_of[target.key]
            results_here = yield from self._lex_window(window_id, target, pairs, op, instant)
            for found, result in zip(results, results_here, strict=True):
                found[window_id] = result
        return [
            Submission(member, found[primary], found)
            for (member, _), found in zip(pairs, results, strict=True)
        ]

    def _lex_window(
        self,
        window_id: str,
        target: Target,
        pairs: list[tuple[Member, bytes]],
        op: Operator,
        instant: int,
    ) -> Steps[list[WindowResult]]:
        assert self.lex is not None
        ids = [member_bytes(member) for member, _ in pairs]
        # Later pairs of one call see earlier ones: resolve the final encoding per id.
        final: dict[bytes, bytes] = {}
        previous_of = dict(zip(ids, (yield from self.lex_encoded(window_id, ids)), strict=True))
        current = dict(previous_of)
        for own, (_, encoded) in zip(ids, pairs, strict=True):
            old = current.get(own)
            if op == "set" or old is None or encoded < old:
                current[own] = final[own] = encoded
        olds = [raw for raw in previous_of.values() if raw is not None]
        old_ranks: dict[bytes, int] = {}
        if olds:
            got = yield ("ranks", (target, olds, False, RankStyle.UNIQUE))
            old_ranks = {raw: hit[1] for raw, hit in zip(olds, got, strict=True) if hit}
        replaced = [
            previous_of[own]
            for own in final
            if previous_of[own] is not None and previous_of[own] != final[own]
        ]
        if replaced:
            yield ("remove", ([target], replaced))
        fresh = [raw for own, raw in final.items() if raw != previous_of[own]]
        if fresh:
            requests = [
                SubmitRequest(
                    raw, 0.0, "set", False, (target,), RankStyle.UNIQUE, instant, None, None
                )
                for raw in fresh
            ]
            yield ("submit_batch", (requests,))
            fields = {own: raw for own, raw in final.items() if raw != previous_of[own]}
            yield ("hash_set", (self.ties_key(window_id), fields, target.ttl_ms))
        stored: list[bytes] = []
        for own in ids:
            raw = current[own]
            assert raw is not None  # every id was set above
            stored.append(raw)
        distinct = list(dict.fromkeys(stored))
        got = yield ("ranks", (target, distinct, False, RankStyle.UNIQUE))
        new_ranks = {raw: hit[1] for raw, hit in zip(distinct, got, strict=True) if hit}
        results: list[WindowResult] = []
        for own, raw in zip(ids, stored, strict=True):
            old = previous_of[own]
            results.append(
                WindowResult(
                    window_id,
                    self.lex.decode(raw).fields[0],
                    None if old is None else self.lex.decode(old).fields[0],
                    new_ranks.get(raw),
                    None if old is None else old_ranks.get(old),
                    raw != old,
                )
            )
        return results
