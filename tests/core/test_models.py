"""Result models are immutable, slotted and small; the core package surface is complete."""

from __future__ import annotations

import dataclasses

import pytest

import ranked.core
from ranked.core.models import Around, Entry, MemberRank, Page, SubmitResult


def test_models_are_immutable_and_slotted() -> None:
    entry = Entry("alice", 100.0, 1)
    for value in (
        SubmitResult("alice", 100.0, None, 1, None, True),
        Page((entry,), None),
        Around((entry,), 0),
    ):
        assert dataclasses.is_dataclass(value)
        assert not hasattr(value, "__dict__")
        first_field = dataclasses.fields(value)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, first_field, "x")
    # Per-row results are named tuples: cheaper to build, just as immutable.
    for row in (entry, MemberRank("bob", None, None)):
        assert isinstance(row, tuple)
        assert not hasattr(row, "__dict__")
        with pytest.raises(AttributeError):
            row.member = "x"  # type: ignore[misc]
    assert entry == Entry(member="alice", score=100.0, rank=1)
    assert (entry.member, entry.score, entry.rank) == ("alice", 100.0, 1)


def test_member_rank_and_around_helpers() -> None:
    assert MemberRank("bob", None, None).found is False
    assert MemberRank(b"\x00", 3.0, 7).found is True
    entries = (Entry("a", 3.0, 1), Entry("b", 2.0, 2), Entry("c", 1.0, 3))
    assert Around(entries, 1).member == Entry("b", 2.0, 2)
    assert Around((), None).member is None


def test_core_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(ranked.core).items()
        if not name.startswith("_")
        and not isinstance(value, type(ranked.core))
        and name != "annotations"
    }
    assert public == set(ranked.core.__all__)
    for name in ranked.core.__all__:
        assert hasattr(ranked.core, name), name
