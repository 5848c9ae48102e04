"""Accepted verdicts ride in the board's own submission events (no journal row of their
own); the audit and the state restore read them back from there, and replay ignores them."""

from __future__ import annotations

import json

import pytest

from ranked.errors import InvalidEventError
from ranked.guard import Guard, GuardConfig, Secret
from ranked.guard._audit import accepted_note, verdict_event
from ranked.journal.events import Event, audit_stream
from ranked.journal.store import JournalStore

from .conftest import KEY, Env


def _writes(store: JournalStore, board: str) -> list[Event]:
    """The board's events but its recorded configuration."""
    return [e for e in store.board_events(board) if e.operation != "config"]


def test_accepted_verdict_adds_no_journal_row(env: Env) -> None:
    store = env.journal()
    board = env.board(journal=store)
    guard = Guard(GuardConfig(secrets=(Secret(KEY),)), clock=env.clock)
    signed = env.signed(board, "a", 7, "nonce-0001")
    assert guard.submit(board, "a", 7, ip="10.0.0.1", actor="key:9", **signed).accepted
    store.flush()
    assert list(store.read(board=audit_stream(board.name))) == []
    (event,) = _writes(store, board.name)
    assert event.operation == "best" and event.actor == "key:9"
    assert event.reason is not None and event.reason.startswith("guard:accepted ")
    (found,) = guard.audit(board)
    assert (found.action, found.member, found.score, found.actor, found.reason) == (
        "accepted",
        "a",
        7.0,
        "key:9",
        None,
    )
    assert found.detail["nonce"] == "nonce-0001" and found.detail["ip"] == "10.0.0.1"
    assert found.seq == event.seq
    assert [r.action for r in guard.audit(board, "a")] == ["accepted"]
    assert guard.audit(board, "b") == []


def test_accepted_and_audited_verdicts_in_journal_order(env: Env) -> None:
    store = env.journal()
    board = env.board(journal=store)
    guard = env.guard(max_score=100)
    guard.submit(board, "a", 1)
    guard.submit(board, "a", 500)
    guard.submit(board, "b", 2, actor="key:1")
    guard.ban(board, "a", by="mod", reason="x")
    guard.submit(board, "a", 3)
    board.submit("c", 4)  # not through the guard: no verdict
    board.submit("c", 5, actor="ops", reason="import")  # a note that is not a verdict
    records = guard.audit(board)
    assert [(r.action, r.member, r.reason) for r in records] == [
        ("accepted", "a", None),
        ("rejected", "a", "out-of-bounds"),
        ("accepted", "b", None),
        ("banned", "a", "x"),
        ("rejected", "a", "banned"),
    ]
    assert [r.seq for r in records] == sorted(r.seq for r in records)
    assert [r.action for r in guard.audit(board, "a", limit=2)] == ["banned", "rejected"]


def test_accepted_verdicts_not_journaled_when_off(env: Env) -> None:
    store = env.journal()
    board = env.board(journal=store)
    guard = env.guard(audit_accepted=False)
    assert guard.submit(board, "a", 1, actor="key:1").accepted
    (event,) = _writes(store, board.name)
    assert event.actor is None and event.reason is None
    assert guard.audit(board) == []


def test_rebuild_ignores_the_attached_verdicts(env: Env) -> None:
    """A board fed through the guard and one fed directly rebuild to the same scores."""
    store = env.journal()
    guarded = env.board(journal=store)
    plain = env.board(journal=store)
    guard = env.guard(max_score=100)
    for i in range(40):
        member, score = f"m{i % 7}", (i * 37) % 150
        if guard.submit(guarded, member, score, actor="key:1").accepted:
            plain.submit(member, score)
    before = guarded.top(10)
    assert before == plain.top(10)
    replayed = guarded.rebuild()
    assert guarded.top(10) == before
    plain.rebuild()
    assert plain.top(10) == before
    assert replayed <= store.last_board_seq(guarded.name)
    assert len([r for r in guard.audit(guarded, limit=1000) if r.action == "accepted"]) == len(
        _writes(store, guarded.name)
    )


def test_submit_notes_are_checked_and_kept(env: Env) -> None:
    store = env.journal()
    board = env.board(journal=store)
    with pytest.raises(InvalidEventError):
        board.submit("a", 1, actor="")
    with pytest.raises(InvalidEventError):
        board.submit("a", 1, reason=5)  # type: ignore[arg-type]
    assert board.score("a") is None  # a refused call changes nothing
    assert _writes(store, board.name) == []
    board.submit("a", 2, actor="ops", reason="backfill")
    (event,) = _writes(store, board.name)
    assert (event.actor, event.reason) == ("ops", "backfill")
    board.rebuild()
    assert board.score("a") == 2


def test_accepted_verdicts_of_an_older_journal_still_read(env: Env) -> None:
    """A journal written before accepted verdicts moved keeps them in the audit stream."""
    store = env.journal()
    board = env.board(journal=store)
    guard = env.guard()
    old = verdict_event(
        board.name, "accepted", b"a", 5.0, 1_790_000_000_000_000, actor="k", reason=None
    )
    store.append([old])
    board.submit("b", 1, actor="k", reason="guard:accepted")
    assert [(r.action, r.member) for r in guard.audit(board)] == [
        ("accepted", "a"),
        ("accepted", "b"),
    ]


@pytest.mark.parametrize(
    "detail",
    [
        {"ip": "127.0.0.1", "scope": "read", "nonce": "n0001-000000001", "z": 0.5, "rank": None},
        {"ip": 'a"b\\c', "scope": None},
        {"ip": "é", "nonce": None},
        {"z": float("inf"), "rank": 3},
        {"z": -1e-300, "rank": 12},
        {"nonce": "n0001-000000002", "rank": 1},
        {},
    ],
)
def test_accepted_note_is_the_json_of_its_detail(detail: dict[str, object]) -> None:
    fields = {"ip": None, "scope": None, "nonce": None, "z": None, "rank": None, **detail}
    kept = {k: v for k, v in fields.items() if v is not None}
    expected = "guard:accepted" + (" " + json.dumps(kept, separators=(",", ":")) if kept else "")
    assert accepted_note(**fields) == expected  # type: ignore[arg-type]
    assert accepted_note(**fields) == expected  # type: ignore[arg-type]  # the head made once
