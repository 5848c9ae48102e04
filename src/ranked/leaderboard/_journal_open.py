"""When a journaled board restores itself: the blocking board in its constructor, the
asyncio board later (a constructor cannot await). ``scripts/generate_sync.py`` maps
``restore_later`` to ``restore_now`` in the generated blocking board."""

from __future__ import annotations

from typing import Any

__all__ = ["restore_later", "restore_now"]


def restore_later(board: Any) -> None:
    """asyncio: nothing now; the board restores itself on ``async with``, on
    :meth:`restore`, or before its first write."""


def restore_now(board: Any) -> None:
    """Restore the board before its constructor returns."""
    board.restore()
