"""Blocking file work of the asyncio board, run in a worker thread so that its event loop
keeps answering meanwhile (writing and fsyncing a snapshot of a large board takes tenths
of a second). ``scripts/generate_sync.py`` maps ``off_loop`` to ``in_line`` in the
generated blocking board, which does the work where it stands."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

__all__ = ["in_line", "off_loop"]

T = TypeVar("T")


async def off_loop(function: Callable[..., T], *args: object) -> T:
    """``function(*args)`` in a worker thread (it must not touch the board or its index)."""
    return await asyncio.to_thread(function, *args)


def in_line(function: Callable[..., T], *args: object) -> T:
    """``function(*args)``, here."""
    return function(*args)
