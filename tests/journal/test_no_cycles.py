"""A journaled write leaves no reference cycle behind: everything it allocates is freed by
reference counting once the call returns. Garbage in cycles waits for the cyclic
collector, whose passes (each walking every young object) would then run every few
hundred writes and cost the service several microseconds a request.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterator

import pytest

from ranked.leaderboard import AsyncLeaderboard, Leaderboard

WRITERS, PER_WRITER = 16, 25


@pytest.fixture
def no_cycles() -> Iterator[Callable[[], list[object]]]:
    """Runs the test with the collector off, and gives a function that returns what a
    collection would free now (the cyclic garbage made since the fixture started)."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)

    def cyclic_garbage() -> list[object]:
        gc.collect()
        found = list(gc.garbage)
        gc.garbage.clear()
        return found

    try:
        yield cyclic_garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def _ours(objects: list[object]) -> list[str]:
    """The type names of the objects that come from ranked (the test's own are excluded)."""
    return sorted(
        {type(o).__qualname__ for o in objects if type(o).__module__.startswith("ranked")}
    )


@pytest.mark.parametrize("durability", ["always", "none"])
def test_async_journaled_submits_make_no_cyclic_garbage(
    journal_url: str, durability: str, no_cycles: Callable[[], list[object]]
) -> None:
    async def main() -> None:
        board = AsyncLeaderboard(
            "memory://", "arena", journal=f"{journal_url}?durability={durability}"
        )
        try:
            await board.submit("warm", 1)  # first-use caches are not garbage
            no_cycles()

            async def writer(w: int) -> None:
                for i in range(PER_WRITER):
                    await board.submit(f"p{w}-{i}", i)

            await asyncio.gather(*(writer(w) for w in range(WRITERS)))
            garbage = no_cycles()
            assert _ours(garbage) == []
            assert await board.count() == 1 + WRITERS * PER_WRITER
        finally:
            await board.close()

    asyncio.run(main())


def test_blocking_journaled_submits_make_no_cyclic_garbage(
    journal_url: str, no_cycles: Callable[[], list[object]]
) -> None:
    board = Leaderboard("memory://", "arena", journal=journal_url)
    try:
        board.submit("warm", 1)
        no_cycles()
        for i in range(WRITERS * PER_WRITER):
            board.submit(f"p{i}", i)
        garbage = no_cycles()
        assert _ours(garbage) == []
        assert board.count() == 1 + WRITERS * PER_WRITER
    finally:
        board.close()
