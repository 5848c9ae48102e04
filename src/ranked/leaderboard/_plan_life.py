"""Lifecycle: remove a member, clear a board, expire a board."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..core.models import Member
from ._plan_core import PlanCore, Steps, member_bytes
from ._plan_windows import Windows

__all__ = ["Life"]

_DELETE_CHUNK: Final = 512


class Life:
    """Removal, clearing and expiry steps of a board (no I/O)."""

    def __init__(self, core: PlanCore, windows: Windows) -> None:
        self.core = core
        self.windows = windows

    def _window_keys(self, window_ids: Iterable[bytes]) -> list[bytes]:
        keys = self.core.keys
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

    def _window_ids(self) -> Steps[set[bytes]]:
        """The registered windows, with the all-time and current ones (always cleared)."""
        window_ids: set[bytes] = yield ("set_members", (self.core.registry_key,))
        window_ids |= {b"all", self.windows.default_id(self.core.now_ms()).encode()}
        return window_ids

    def _all_keys(self) -> Steps[list[bytes]]:
        core = self.core
        window_ids = yield from self._window_ids()
        friended: set[bytes] = yield ("set_members", (core.friended_key,))
        keys = [core.keys.meta, core.keys.data, core.registry_key, core.friended_key]
        keys += self._window_keys(window_ids)
        keys += [core.keys.friends(member) for member in friended]
        return keys

    def remove(self, member: Member) -> Steps[bool]:
        """Remove a member from every window, its data and its friend set."""
        core = self.core
        own = member_bytes(member)
        ordered = sorted((yield from self._window_ids()))
        targets = [self.windows.target(window_id.decode()) for window_id in ordered]
        if core.lex is None:
            removed: int = yield ("remove", (targets, [own]))
        else:  # each window stores its own encoding of the member
            removed = 0
            for window_id, target in zip(ordered, targets, strict=True):
                found: list[bytes | None] = yield (
                    "hash_get",
                    (core.ties_key(window_id.decode()), [own]),
                )
                if found[0] is not None:
                    count: int = yield ("remove", ([target], [found[0]]))
                    removed += count
        if core.lex is not None:  # the remove op cleared a secondary board's tie values
            for window_id in ordered:
                yield ("hash_delete", (core.ties_key(window_id.decode()), [own]))
        data: int = yield ("hash_delete", (core.keys.data, [own]))
        friends: int = yield ("delete", ([core.keys.friends(own)],))
        yield ("set_remove", (core.friended_key, [own]))
        return bool(removed or data or friends)

    def clear(self) -> Steps[int]:
        """Delete every key of the board; returns how many existed."""
        keys = yield from self._all_keys()
        deleted = 0
        for start in range(0, len(keys), _DELETE_CHUNK):
            count: int = yield ("delete", (keys[start : start + _DELETE_CHUNK],))
            deleted += count
        self.windows.forget()
        self.core.deadline_ms = None
        return deleted

    def expire_at(self, deadline_ms: int) -> Steps[None]:
        """Expire every key of the board at ``deadline_ms``; later writes inherit it."""
        keys = yield from self._all_keys()
        for start in range(0, len(keys), _DELETE_CHUNK):
            yield ("expire_at", (keys[start : start + _DELETE_CHUNK], deadline_ms))
        self.core.deadline_ms = deadline_ms
