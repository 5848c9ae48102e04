"""Lifecycle: remove a member, clear a board, expire a board."""

from __future__ import annotations

from collections.abc import Iterable

from ..core.models import Member
from ._plan_core import (
    _DELETE_CHUNK,
    PlanCore,
    Steps,
    member_bytes,
)

__all__ = ["LifePlan"]


class LifePlan(PlanCore):
    """Removal, clearing and expiry steps of a board."""

    # -- lifecycle ------------------------------------------------------------------------------

    def _window_keys(self, window_ids: Iterable[bytes]) -> list[bytes]:
        keys = self.keys
        found: list[bytes] = []
        for raw in window_ids:
            window_id = raw.decode()
            found += (
                keys.window(window_id),
                keys.dense(window_id),
                keys.dense_counts(window_id),
                keys.ties(window_id),
            )
        return found

    def _all_keys(self) -> Steps[list[bytes]]:
        window_ids: set[bytes] = yield ("set_members", (self.registry_key,))
        friended: set[bytes] = yield ("set_members", (self.friended_key,))
        window_ids |= {b"all", self._default_id(self.now_ms()).encode()}
        keys = [self.keys.meta, self.keys.data, self.registry_key, self.friended_key]
        keys += self._window_keys(window_ids)
        keys += [self.keys.friends(member) for member in friended]
        return keys

    def remove(self, member: Member) -> Steps[bool]:
        """Remove a member from every window, its data and its friend set."""
        own = member_bytes(member)
        window_ids: set[bytes] = yield ("set_members", (self.registry_key,))
        window_ids |= {b"all", self._default_id(self.now_ms()).encode()}
        ordered = sorted(window_ids)
        targets = [self.target(window_id.decode()) for window_id in ordered]
        if self.lex is None:
            removed: int = yield ("remove", (targets, [own]))
        else:  # each window stores its own encoding of the member
            removed = 0
            for window_id, target in zip(ordered, targets, strict=True):
                found: list[bytes | None] = yield (
                    "hash_get",
                    (self.ties_key(window_id.decode()), [own]),
                )
                if found[0] is not None:
                    count: int = yield ("remove", ([target], [found[0]]))
                    removed += count
        if self.lex is not None:  # the remove op cleared a secondary board's tie values
            for window_id in ordered:
                yield ("hash_delete", (self.ties_key(window_id.decode()), [own]))
        data: int = yield ("hash_delete", (self.keys.data, [own]))
        friends: int = yield ("delete", ([self.keys.friends(own)],))
        yield ("set_remove", (self.friended_key, [own]))
        return bool(removed or data or friends)

    def clear(self) -> Steps[int]:
        """Delete every key of the board; returns how many existed."""
        keys = yield from self._all_keys()
        deleted = 0
        for start in range(0, len(keys), _DELETE_CHUNK):
            count: int = yield ("delete", (keys[start : start + _DELETE_CHUNK],))
            deleted += count
        self._registered.clear()
        self._write_cache = None
        self.deadline_ms = None
        return deleted

    def expire_at(self, deadline_ms: int) -> Steps[None]:
        """Expire every key of the board at ``deadline_ms``; later writes inherit it."""
        keys = yield from self._all_keys()
        for start in range(0, len(keys), _DELETE_CHUNK):
            yield ("expire_at", (keys[start : start + _DELETE_CHUNK], deadline_ms))
        self.deadline_ms = deadline_ms
