"""The sequenced one-call submit (``BoardWriter`` built with ``seq_key``): it writes only
when the index holds the event before, records the event's number with the write, and
otherwise answers None having changed nothing, as the ``sequenced`` submit step's
contract asks (``ranked.backends.sequenced``); the general step then answers APPLIED, a
Gap or the error."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from ranked.engine.zset import IMPLEMENTATION

if IMPLEMENTATION != "c":  # pragma: no cover - the C types need the C engine
    pytest.skip("the native procedures need the C engine", allow_module_level=True)

from ranked.backends.native import _native
from ranked.engine._zset import SortedSet
from ranked.engine.keyspace import Keyspace

from .test_native_hostile import Result, Submission

SEQ = b"board:seq"


def _setup(seq: bytes | None = b"7") -> tuple[Keyspace, Any]:
    keyspace = Keyspace()
    keyspace._values[b"board"] = SortedSet({b"ann": 10.0, b"bob": 20.0}, raw=True)
    if seq is not None:
        keyspace._values[SEQ] = seq
    writer = _native.BoardWriter(
        vars(keyspace), b"board", "all", True, "competition", "best", threading.Lock(),
        lambda: None, 1000, Result, Submission, SEQ,
    )  # fmt: skip
    return keyspace, writer


def _state(keyspace: Keyspace) -> tuple[Any, ...]:
    board = keyspace._values[b"board"]
    assert isinstance(board, SortedSet)
    return tuple(board.range_by_index(0, -1)), keyspace._values.get(SEQ)


def test_writes_when_the_index_holds_the_event_before_and_records_its_number() -> None:
    keyspace, writer = _setup(b"7")
    done = writer(7, 8, "cat", 30.0, None)
    assert isinstance(done, Submission)
    assert (done.member, done.result.score, done.result.rank) == ("cat", 30.0, 1)
    assert keyspace._values[SEQ] == b"8"
    done = writer(8, 10, b"ann", 12, "set")  # a batch of events: the last one's number
    assert done.result.score == 12.0
    assert keyspace._values[SEQ] == b"10"


@pytest.mark.parametrize(
    ("seq", "after", "last"),
    [
        (b"7", 6, 7),  # applied already
        (b"7", 8, 9),  # a gap: event 8 is missing
        (None, 0, 1),  # no number yet: the general step records the first
        (b"07", 7, 8),  # not as Keyspace.store writes numbers
        (b"", 0, 1),
        (b"7x", 7, 8),
        (b"1" * 19, 7, 8),
        (b"7", 7, 7),  # not an event after
        (b"7", -1, 8),
        (b"7", True, 8),  # exact ints only
        (b"7", 7, 8.0),
        (b"7", 7, 10**19),
    ],
)
def test_any_other_number_changes_nothing(seq: bytes | None, after: Any, last: Any) -> None:
    keyspace, writer = _setup(seq)
    before = _state(keyspace)
    assert writer(after, last, "cat", 30.0, None) is None
    assert _state(keyspace) == before


def test_a_number_key_that_is_not_a_plain_string_changes_nothing() -> None:
    for change in ("deadline", "listpack", "type"):
        keyspace, writer = _setup(b"7")
        if change == "deadline":
            keyspace._deadlines[SEQ] = 2**60
        elif change == "listpack":
            keyspace._listpack.add(SEQ)
        else:
            keyspace._values[SEQ] = bytearray(b"7")  # type: ignore[assignment]
        before = _state(keyspace)
        assert writer(7, 8, "cat", 30.0, None) is None, change
        assert _state(keyspace) == before, change


def test_a_score_the_board_refuses_records_nothing() -> None:
    keyspace, writer = _setup(b"7")
    before = _state(keyspace)
    assert writer(7, 8, "cat", float("nan"), None) is None
    assert writer(7, 8, "cat", "30", None) is None
    assert _state(keyspace) == before


def test_takes_the_event_numbers_first() -> None:
    _, writer = _setup()
    with pytest.raises(TypeError, match="after, last, member, score, operator"):
        writer("cat", 30.0, None)
    with pytest.raises(TypeError):
        _native.BoardWriter(
            {}, b"board", "all", True, "competition", "best", threading.Lock(), lambda: None,
            1000, Result, Submission, "board:seq",  # type: ignore[arg-type]
        )  # fmt: skip
