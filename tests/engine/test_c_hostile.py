"""Python code that runs in the middle of a C call and frees what the call was using.

Every C entry point of the ``_zset`` extension may run Python code: a finaliser run by
a garbage collection when the call allocates a tracked object. (The memory backend's
native procedures meet more of it: ``tests/backends/test_native_hostile.py``.) That
code may empty a set whose nodes the call walks. The
rule of the C files: no borrowed reference and no pointer into a set is held across
such a call. Each test here makes one of those callbacks free what the call used; before
the fixes each one crashed, or read freed memory under ``make asan``.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any

import pytest

from ranked.engine import _zset

SortedSet = _zset.SortedSet


def churn() -> None:
    """Reuse freed memory, so a read of a freed object sees other data (or crashes)."""
    junk: list[Any] = [SortedSet({f"junk{i}:{j}": float(j) for j in range(40)}) for i in range(40)]
    junk.append([{b"k%d" % i: i} for i in range(200)])
    del junk


# -- a collection in the middle of a read ------------------------------------------

THRESHOLD = 200  # gen 0 threshold while armed: small ints only, no allocation to count
# Up to 3.11 a collection runs inside the allocation that crosses the threshold, so in
# the middle of a C call; from 3.12 it waits for the interpreter's next check, after the
# call, and these tests can only check that nothing goes wrong.
COLLECTS_IN_ALLOCATION = sys.version_info < (3, 12)


def call_with_collection(action: Callable[[], Any], finaliser: Callable[[], object]) -> Any:
    """``action()`` with the collector armed so that the first tracked object the call
    allocates runs a collection, which finds a garbage cycle whose ``__del__`` calls
    ``finaliser``. ``gc.get_count()`` counts tracked allocations minus frees since the
    last collection; it is padded up to the threshold, so the next allocation collects."""

    class Finalised:
        def __init__(self) -> None:
            self.cycle = self

        def __del__(self) -> None:
            finaliser()

    old = gc.get_threshold()
    gc.collect()
    gc.set_threshold(THRESHOLD)
    try:
        Finalised()  # unreachable at once: a cycle only the collector frees
        pad: list[list[int]] = []
        while gc.get_count()[0] < THRESHOLD - 1:
            pad.append([])
        pad.append([])  # now at the threshold: the next tracked allocation collects
        return action()
    finally:
        gc.set_threshold(*old)


def big_set() -> Any:
    return SortedSet((f"m{i:04}", float(i % 300)) for i in range(1000))


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda zs: zs.range_by_index(0, 99), id="range_by_index"),
        pytest.param(lambda zs: zs.range_by_index(-50, -1, reverse=True), id="range_reverse"),
        pytest.param(lambda zs: zs.random_members(2000), id="random_members_all"),
        pytest.param(lambda zs: zs.random_members(50), id="random_members_some"),
        pytest.param(lambda zs: zs.random_members(-50), id="random_members_draws"),
        pytest.param(lambda zs: zs.range_by_score(100, 200), id="range_by_score"),
        pytest.param(lambda zs: zs.range_by_score(100, 200, reverse=True), id="score_reverse"),
        pytest.param(lambda zs: zs.range_by_lex("m0100", "m0200"), id="range_by_lex"),
        pytest.param(lambda zs: zs.items_after(5.0, "m0005", 20), id="items_after"),
        pytest.param(lambda zs: zs.range_around("m0500", 10, 10), id="range_around"),
    ],
)
def test_a_collection_that_empties_the_set_before_a_range_read(
    read: Callable[[Any], Any],
) -> None:
    """The first tracked allocation of a range read is its result list; a finaliser
    run then empties the set. The read must notice (RuntimeError), not walk positions
    or nodes found before the allocation."""
    zs, full = big_set(), big_set()
    try:
        result = call_with_collection(lambda: read(zs), zs.clear)
    except RuntimeError as error:
        assert "changed during a range read" in str(error)
    else:
        assert not COLLECTS_IN_ALLOCATION, "a collection changed the set and the read went on"
        rows = result[1] if isinstance(result, tuple) else result
        assert rows and all(full.score(member) == score for member, score in rows)
    gc.collect()
    zs._check()
    assert len(zs) == 0


def test_a_collection_that_empties_the_set_in_a_pop() -> None:
    zs = big_set()
    top = zs.range_by_index(0, 9, reverse=True)
    popped = call_with_collection(lambda: zs.pop_max(10), zs.clear)
    assert popped == ([] if COLLECTS_IN_ALLOCATION else top)
    zs = big_set()
    top = zs.range_by_index(0, 2, reverse=True)
    removed: list[Any] = []
    popped = call_with_collection(lambda: zs.pop_max(3), lambda: removed.append(zs.pop_min()))
    assert popped == top  # the finaliser's pop_min ran before or between rows: no harm
    gc.collect()
    assert len(removed) == 1
    zs._check()
