"""The memory backend's one-call entry read (``BoardReader``, ``board_read.c``).

An eligible board on ``memory://`` with the C engine reads ``entry`` and ``rank`` in its
own style through the reader; every answer must equal the general path's (the ``ranks``
step), and anything unusual must leave the answer to the general path (the reader says
False). The hostile cases build the C type directly on a plain :class:`Keyspace`, as
``test_native_hostile.py`` does for the writer.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ranked import AsyncLeaderboard, Leaderboard
from ranked.core.models import Entry
from ranked.engine.zset import IMPLEMENTATION

if IMPLEMENTATION != "c":  # pragma: no cover - the C types need the C engine
    pytest.skip("the native reader needs the C engine", allow_module_level=True)

from ranked.backends.native import _native
from ranked.engine._zset import SortedSet
from ranked.engine.keyspace import Keyspace

from .test_native_hostile import Colliding, churn

STYLES = ("unique", "competition", "dense")


@pytest.fixture
def boards() -> Iterator[list[Leaderboard]]:
    made: list[Leaderboard] = []
    yield made
    for board in made:
        board.close()


def _board(made: list[Leaderboard], name: str, **options: Any) -> Leaderboard:
    board = Leaderboard("memory://", f"{name}-{uuid.uuid4().hex}", **options)
    made.append(board)
    return board


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("higher", [True, False])
def test_reader_answers_as_the_general_path(
    boards: list[Leaderboard], style: str, higher: bool
) -> None:
    """Ties, absent members, bytes and non-ASCII members: the same Entry and rank."""
    fast = _board(boards, "fast", rank_style=style, higher_is_better=higher)
    slow = _board(boards, "slow", rank_style=style, higher_is_better=higher)
    rng = random.Random(7)
    items = [(f"m{i}", float(rng.randrange(20))) for i in range(300)]
    items += [("zoë", 3.0), ("日本", 3.0)]
    fast.submit_many(items)
    slow.submit_many(items)
    assert fast._reader is not None
    slow._reader = None  # the general path only
    for member in [m for m, _ in items] + ["absent", "m9999", "ZOË"]:
        assert fast._reader(member) is not False, member  # the fast path answers
        assert fast.entry(member) == slow.entry(member), member
        assert fast.rank(member) == slow.rank(member), member
    for raw in (b"m1", "zoë".encode()):
        assert fast.entry(raw) == slow.entry(raw)
    found = fast.entry("m1")
    assert isinstance(found, Entry) and found.member == "m1"


def test_other_styles_and_windows_take_the_general_path(boards: list[Leaderboard]) -> None:
    board = _board(boards, "b", rank_style="competition")
    board.submit_many([("a", 5.0), ("b", 5.0), ("c", 1.0)])
    assert board.entry("b") == Entry("b", 5.0, 1, None)
    assert board.entry("a", style="unique") == Entry("a", 5.0, 2, None)  # ZREVRANK order
    assert board.rank("c", style="dense") == 2
    assert board.entry("c", window="all") == Entry("c", 1.0, 3, None)


def test_an_empty_or_expiring_board_reads_through_the_general_path(
    boards: list[Leaderboard],
) -> None:
    board = _board(boards, "b")
    assert board._reader is not None
    assert board._reader("a") is False  # no set yet: the general path answers
    assert board.entry("a") is None and board.rank("a") is None
    board.submit("a", 1.0)
    assert board.entry("a") == Entry("a", 1.0, 1, None)
    with pytest.raises(TypeError):
        board.entry(5)  # type: ignore[arg-type]


def test_expired_and_cleared_boards_read_through_the_general_path(
    boards: list[Leaderboard],
) -> None:
    board = _board(boards, "b")
    board.submit_many([("a", 1.0), ("b", 2.0)])
    board.expire_at(time.time() + 3600)  # a deadline: the reader declines, the general path reads
    assert board._reader is not None and board._reader("a") is False
    assert board.entry("a") == Entry("a", 1.0, 2, None)
    board.clear()
    assert board._reader("a") is False
    assert board.entry("a") is None and board.rank("b") is None


def test_an_asyncio_board_reads_through_the_reader() -> None:
    async def main() -> None:
        fast = AsyncLeaderboard("memory://", f"async-{uuid.uuid4().hex}")
        slow = AsyncLeaderboard("memory://", f"async-{uuid.uuid4().hex}")
        try:
            items = [(f"m{i}", float(i % 7)) for i in range(50)]
            await fast.submit_many(items)
            await slow.submit_many(items)
            slow._reader = None
            assert fast._reader is not None
            for member in ["m0", "m13", "m49", "absent"]:
                assert fast._reader(member) is not False
                assert await fast.entry(member) == await slow.entry(member)
                assert await fast.rank(member) == await slow.rank(member)
        finally:
            await fast.close()
            await slow.close()

    asyncio.run(main())


def test_boards_without_a_reader(boards: list[Leaderboard]) -> None:
    """Windows, time tie-breaks and trimmed boards keep the general path only."""
    assert _board(boards, "w", windows=["daily"])._reader is None
    assert _board(boards, "t", tie_break="time")._reader is None
    assert _board(boards, "k", keep=10)._reader is None


# -- the C type on a plain keyspace ---------------------------------------------------


def _reader(keyspace: Keyspace, lock: threading.Lock | None = None, key: bytes = b"b") -> Any:
    return _native.BoardReader(
        vars(keyspace), key, True, "competition", lock or threading.Lock(), Entry
    )


def _keyspace() -> Keyspace:
    keyspace = Keyspace()
    keyspace._values[b"b"] = SortedSet({b"ann": 10.0, b"bob": 20.0, b"cat": 20.0}, raw=True)
    return keyspace


def test_reader_declines_while_the_lock_is_held() -> None:
    lock = threading.Lock()
    reader = _reader(_keyspace(), lock)
    assert reader("ann") == Entry("ann", 10.0, 3, None)
    with lock:
        assert reader("ann") is False
    assert reader("nobody") is None


def test_reader_declines_odd_members_and_keys() -> None:
    keyspace = _keyspace()
    reader = _reader(keyspace)
    assert reader(5) is False
    assert reader("\udcff") is False  # not UTF-8: the general path raises
    keyspace._deadlines[b"b"] = 2**60  # expiring: Keyspace.zset_fast's test
    assert reader("ann") is False
    del keyspace._deadlines[b"b"]
    keyspace._values[b"b"] = b"a string"
    assert reader("ann") is False
    with pytest.raises(TypeError):
        reader()
    with pytest.raises(TypeError):
        _native.BoardReader(vars(keyspace), b"b", True, "competition", threading.Lock(), dict)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        _native.BoardReader(vars(keyspace), b"b", True, "olympic", threading.Lock(), Entry)


def test_reader_survives_a_key_comparison_that_drops_the_board() -> None:
    """A key in the deadline table whose ``__eq__`` drops the set while the reader checks
    the deadline: the reader must not read the freed set."""
    keyspace = _keyspace()

    def drop() -> None:
        keyspace._values.pop(b"b", None)
        churn()

    keyspace._deadlines[Colliding(b"b", drop)] = 2**60
    reader = _reader(keyspace)
    assert reader("ann") is False
    assert b"b" not in keyspace._values


def test_reader_survives_a_key_comparison_that_replaces_the_tables() -> None:
    """A key stored beside the set, hashing like it, whose ``__eq__`` replaces the
    keyspace's value table while the reader looks the set up: the reader holds the
    table it looks in, reads nothing freed, and answers from what it found."""
    keyspace = Keyspace()

    def replace() -> None:
        keyspace._values = {}
        churn()

    keyspace._values[Colliding(b"b", replace)] = b"first in the probe"
    keyspace._values[b"b"] = SortedSet({b"ann": 10.0}, raw=True)
    reader = _reader(keyspace)
    found = reader("ann")
    assert found in (Entry("ann", 10.0, 1, None), False)
    assert keyspace._values == {}
    assert reader("ann") is False


def test_reader_key_is_its_own_bytes() -> None:
    """A bytes-subclass key: the reader keeps a plain copy, so no key code runs."""
    calls: list[int] = []

    class HookedKey(bytes):
        def __hash__(self) -> int:
            calls.append(1)
            return bytes.__hash__(self)

        def __eq__(self, other: object) -> bool:
            return bytes.__eq__(self, other)

    reader = _reader(_keyspace(), key=HookedKey(b"b"))
    calls.clear()
    assert reader("bob") == Entry("bob", 20.0, 1, None)
    assert calls == []


@pytest.mark.parametrize("style", ["dense\x00junk", "\udcff", "Dense", ""])
def test_board_rank_refuses_what_names_no_style(style: str) -> None:
    """The writer's and the reader's style names are matched whole (board_common.h)."""
    zset = SortedSet({b"a": 1.0}, raw=True)
    with pytest.raises(ValueError, match="unknown rank style"):
        _native.board_rank(zset, b"a", style, True)
    assert _native.board_rank(zset, b"a", "dense", True) == 1
