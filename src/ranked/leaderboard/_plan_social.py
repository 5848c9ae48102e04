"""Friends, member data and board metadata."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.models import Entry, Member
from ..core.ranks import RankStyle, ranks
from ..core.windows import Window
from ..errors import MemberDataError, PageSizeError
from ._plan_core import PlanCore, Steps, _new, member_bytes, member_record
from ._plan_ties import Ties
from ._plan_windows import Windows
from .results import FriendsBoard, MemberData

__all__ = ["Social"]


def _json_object(value: Mapping[str, Any] | None, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise MemberDataError(f"{what} must be a dict with str keys, not {value!r}")
    return dict(value)


def _dumps(value: object, what: str) -> bytes:
    try:
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode()
    except (TypeError, ValueError) as error:
        raise MemberDataError(f"{what} is not JSON serialisable: {error}") from None


def _score_then_member(pair: tuple[bytes, float]) -> tuple[float, bytes]:
    return pair[1], pair[0]


class Social:
    """Friend graph, friends boards, member data and metadata steps (no I/O)."""

    def __init__(self, core: PlanCore, windows: Windows, ties: Ties) -> None:
        self.core = core
        self.windows = windows
        self.ties = ties

    # -- friends ---------------------------------------------------------------------------

    def _friend_list(self, friends: Iterable[Member]) -> list[bytes]:
        if isinstance(friends, str | bytes):
            raise TypeError("friends is a collection of members, not one member")
        return [member_bytes(friend) for friend in friends]

    def add_friends(self, member: Member, friends: Iterable[Member]) -> Steps[int]:
        """Add friends (the member joins its own set: it ranks among its friends)."""
        core = self.core
        own = member_bytes(member)
        others = [friend for friend in self._friend_list(friends) if friend != own]
        added = 0
        if others:
            added = yield ("set_add", (core.keys.friends(own), others))
        yield ("set_add", (core.keys.friends(own), [own]))
        yield ("set_add", (core.friended_key, [own]))
        return added

    def remove_friends(self, member: Member, friends: Iterable[Member]) -> Steps[int]:
        """Remove friends (never the member itself)."""
        own = member_bytes(member)
        others = [friend for friend in self._friend_list(friends) if friend != own]
        if not others:
            return 0
        removed: int = yield ("set_remove", (self.core.keys.friends(own), others))
        return removed

    def friends_of(self, member: Member) -> Steps[set[Member]]:
        """The member's friends (without the member)."""
        core = self.core
        own = member_bytes(member)
        found: set[bytes] = yield ("set_members", (core.keys.friends(own),))
        return {core.member_out(friend) for friend in found if friend != own}

    def friends_board(
        self,
        member: Member,
        style: RankStyle | str | None,
        window: str | Window | None,
        with_data: bool = False,
    ) -> Steps[FriendsBoard]:
        """The member and its friends ranked among themselves, best first (at most
        ``max_page_size``), with the member's own rank. Reads only: one atomic step
        (the friend set and the current scores), plus the tie values on a secondary
        board."""
        core = self.core
        if core.lex is not None:
            raise core.unsupported("friends_board", "friend sets of encoded members")
        resolved = core.style_of(style)  # every argument is checked before any call
        own = member_bytes(member)
        window_id, target = self.windows.read_target(window)
        friends = core.keys.friends(own)
        pairs: list[tuple[bytes, float]] = yield ("friend_scores", (target.key, friends, own))
        # Board order: by score, ties by member bytes (descending on high-first boards).
        pairs.sort(key=_score_then_member, reverse=core.high_first)
        if core.secondary and pairs:  # ties by the tie-break values (one HMGET)
            tie_keys = yield from self.ties.tie_keys(window_id, [m for m, _ in pairs])
            sign = -1.0 if core.high_first else 1.0
            pairs.sort(key=lambda pair: (sign * pair[1], tie_keys[pair[0]]))
        numbers = ranks([score for _, score in pairs], resolved)
        at = next((i for i, (name, _) in enumerate(pairs) if name == own), None)
        limit = core.config.max_page_size
        entries = yield from core.with_data(
            [
                _new(Entry, (core.member_out(m), core.score_out(s), rank, None))
                for (m, s), rank in zip(pairs[:limit], numbers, strict=False)
            ],
            with_data,
        )
        if at is None:
            return FriendsBoard(entries, None, None)
        return FriendsBoard(entries, at if at < limit else None, numbers[at])

    # -- member data and metadata ------------------------------------------------------------

    def _hash_ttl(self) -> int | None:
        core = self.core
        if core.deadline_ms is None:
            return None
        return max(1, core.deadline_ms - core.backend_now_ms())

    def set_member_data(
        self, member: Member, display_name: str | None, metadata: Mapping[str, Any] | None
    ) -> Steps[None]:
        """Replace a member's data."""
        if display_name is not None and not isinstance(display_name, str):
            raise MemberDataError(f"display_name must be a str or None, not {display_name!r}")
        blob = _dumps(
            {"name": display_name, "meta": _json_object(metadata, "metadata")}, "metadata"
        )
        yield ("hash_set", (self.core.keys.data, {member_bytes(member): blob}, self._hash_ttl()))

    def member_data(self, members: Sequence[Member]) -> Steps[dict[Member, MemberData]]:
        """Data of the members that have some."""
        core = self.core
        members = list(members)
        if len(members) > core.config.max_page_size:
            raise PageSizeError(f"{len(members)} members exceed max_page_size")
        if not members:
            return {}
        blobs: list[bytes | None] = yield (
            "hash_get",
            (core.keys.data, [member_bytes(member) for member in members]),
        )
        found: dict[Member, MemberData] = {}
        for member, blob in zip(members, blobs, strict=True):
            data = member_record(member, blob)
            if data is not None:
                found[member] = data
        return found

    def set_metadata(self, metadata: Mapping[str, Any]) -> Steps[None]:
        """Replace the board's metadata."""
        blob = _dumps(_json_object(metadata, "board metadata"), "board metadata")
        yield ("hash_set", (self.core.keys.meta, {b"metadata": blob}, self._hash_ttl()))

    def merge_metadata(self, changes: Mapping[str, Any]) -> Steps[dict[str, Any]]:
        """Shallow-merge ``changes`` into the board's metadata; the merged metadata.

        Atomic on every backend without a lock: read the stored JSON, merge, and write it
        back only if nobody changed it in between (:data:`._procedures.SWAP_FIELD`, one step), else
        read again. Each retry means another write succeeded (lock-free), so concurrent
        merges all land, none lost. Two calls when nobody races."""
        core = self.core
        patch = _json_object(changes, "board metadata")
        _dumps(patch, "board metadata")  # every value serialisable before any call
        ttl = self._hash_ttl()
        while True:
            found: list[bytes | None] = yield ("hash_get", (core.keys.meta, [b"metadata"]))
            current = found[0]
            merged: dict[str, Any] = {} if current is None else json.loads(current)
            merged.update(patch)
            args = (
                b"metadata",
                b"" if current is None else current,
                0 if current is None else 1,
                _dumps(merged, "board metadata"),
                b"" if ttl is None else ttl,
            )
            swapped: bool = yield ("swap_field", ((core.keys.meta,), args))
            if swapped:
                return merged

    def metadata(self) -> Steps[dict[str, Any]]:
        """The board's metadata ({} if never set)."""
        found: list[bytes | None] = yield ("hash_get", (self.core.keys.meta, [b"metadata"]))
        if found[0] is None:
            return {}
        value: dict[str, Any] = json.loads(found[0])
        return value
