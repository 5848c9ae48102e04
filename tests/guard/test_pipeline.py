"""The pipeline's order and its promises: cheap checks first, a refused write touches no
board and costs no nonce, replay refused across guards and processes, the pending flow,
and the verdict journal (which never changes a rebuild)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ranked import AsyncLeaderboard
from ranked.errors import PendingNotFoundError
from ranked.guard import AsyncGuard, Guard, GuardConfig, PendingEntry, Secret
from ranked.journal.events import audit_stream
from ranked.ratelimit import Policy

from .conftest import KEY, Env

SRC = Path(__file__).resolve().parents[2] / "src"


def test_cheap_checks_run_before_the_step(env: Env) -> None:
    """A write refused by bounds or signature spends no rate limit."""
    board = env.board()
    guard = env.guard(min_score=0, secrets=(Secret(KEY),), player_limit=Policy(1, 60))
    assert guard.submit(board, "a", -5, **env.signed(board, "a", -5, "nonce-0001")).reason == (
        "out-of-bounds"
    )
    assert guard.submit(board, "a", 5, **env.signed(board, "a", 6, "nonce-0002")).reason == (
        "bad-signature"
    )
    assert guard.submit(board, "a", 5, **env.signed(board, "a", 5, "nonce-0003")).accepted


def test_refused_write_touches_no_board_and_costs_no_nonce(env: Env) -> None:
    board = env.board()
    guard = env.guard(secrets=(Secret(KEY),), max_step=10)
    assert guard.submit(board, "a", 100, **env.signed(board, "a", 100, "nonce-base")).accepted
    signed = env.signed(board, "a", 500, "nonce-kept")
    refused = guard.submit(board, "a", 500, **signed)
    assert refused.reason == "velocity-step"
    assert board.score("a") == 100
    # the nonce was not recorded: with a looser guard the same signed payload passes once
    loose = env.guard(secrets=(Secret(KEY),))
    assert loose.submit(board, "a", 500, **signed).accepted
    assert loose.submit(board, "a", 500, **signed).reason == "replayed-nonce"


def test_rate_limit_counts_refusals_of_later_layers(env: Env) -> None:
    """The rate limit is decided first in the step: a flood of refused writes is limited too."""
    board = env.board()
    guard = env.guard(player_limit=Policy(2, 60), max_step=1)
    assert guard.submit(board, "a", 1).accepted
    assert guard.submit(board, "a", 50).reason == "velocity-step"
    assert guard.submit(board, "a", 2).reason == "rate-limited"


def test_ban_is_checked_before_the_rate_limit(env: Env) -> None:
    board, guard = env.board(), env.guard(player_limit=Policy(1, 60))
    guard.ban(board, "a", by="mod", reason="x")
    assert guard.submit(board, "a", 1).reason == "banned"
    guard.unban(board, "a", by="mod", reason="y")
    assert guard.submit(board, "a", 1).accepted  # the banned attempt spent nothing


def test_replay_refused_after_a_restart(env: Env) -> None:
    board = env.board()
    config = GuardConfig(secrets=(Secret(KEY),))
    signed = env.signed(board, "a", 5, "nonce-restart")
    assert Guard(config, clock=env.clock).submit(board, "a", 5, **signed).accepted
    again = Guard(config, clock=env.clock)  # a new guard (a restarted service) on the store
    assert again.submit(board, "a", 5, **signed).reason == "replayed-nonce"


_SECOND_PROCESS = """
import sys
from ranked import Leaderboard
from ranked.backends.factory import open_backend
from ranked.guard import Guard, GuardConfig, Secret
url, name, key, client_time, nonce, signature = sys.argv[1:]
backend = open_backend(url)
board = Leaderboard(backend, name)
config = GuardConfig(secrets=(Secret(key.encode()),))
guard = Guard(config, clock=lambda: int(client_time) / 1000)
signed = {"client_time": int(client_time), "nonce": nonce, "signature": signature}
verdict = guard.submit(board, "a", 5, **signed)
print(verdict.reason or verdict.outcome)
backend.close()
"""


@pytest.mark.parametrize("env", ["redis", "cluster"], indirect=True)
def test_replay_refused_from_a_second_process(env: Env) -> None:
    board = env.board()
    signed = env.signed(board, "a", 5, "nonce-process")
    guard = env.guard(secrets=(Secret(KEY),))
    assert guard.submit(board, "a", 5, **signed).accepted
    args = [str(signed["client_time"]), signed["nonce"], signed["signature"]]
    done = subprocess.run(
        [sys.executable, "-c", _SECOND_PROCESS, env.url, board.name, KEY.decode(), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "replayed-nonce", done.stderr


def test_pending_then_promote_with_the_original_instant(env: Env) -> None:
    store = env.journal()
    board = env.board(journal=store)
    guard = env.guard(pending_rank=1)
    assert guard.submit(board, "x", 5, key_scope="write").accepted
    held = guard.submit(board, "cheat", 99, replay={"inputs": [1, 2, 3]}, ip="10.1.1.1")
    assert held.pending and held.pending_id is not None
    (entry,) = guard.pending(board)
    assert entry.id == held.pending_id and entry.member == "cheat" and entry.score == 99
    assert entry.replay == {"inputs": [1, 2, 3]} and entry.ip == "10.1.1.1"
    assert entry.at == env.clock() and entry.reason == "rank-tier"
    env.clock.advance(3600)
    promoted = guard.promote(board, held.pending_id, by="mod")
    assert promoted.accepted and promoted.submission is not None
    assert board.score("cheat") == 99
    assert guard.pending(board) == []
    (event,) = [e for e in store.member_events(board.name, b"cheat") if e.operation == "best"]
    assert event.at_us == round(entry.at * 1000) * 1000  # the original instant, not the promotion's
    with pytest.raises(PendingNotFoundError):
        guard.promote(board, held.pending_id, by="mod")


def test_pending_then_reject(env: Env) -> None:
    board, guard = env.board(), env.guard(pending_rank=1)
    held = guard.submit(board, "cheat", 99)
    assert held.pending and held.pending_id is not None
    entry = guard.reject(board, held.pending_id, by="mod", reason="replay does not match")
    assert entry.member == "cheat"
    assert guard.pending(board) == [] and board.count() == 0
    with pytest.raises(PendingNotFoundError):
        guard.reject(board, held.pending_id, by="mod", reason="again")


def test_promotion_counts_in_the_history(env: Env) -> None:
    board = env.board()
    guard = env.guard(z_threshold=2, z_min_history=3)
    for score in (10, 12, 11):
        assert guard.submit(board, "a", score).accepted
    held = guard.submit(board, "a", 30)
    assert held.pending and held.pending_id
    guard.promote(board, held.pending_id, by="mod")
    after = guard.submit(board, "a", 25)  # 30 is history now: 25 is no outlier
    assert after.accepted, after


def test_validator_promotes_and_rejects(env: Env) -> None:
    seen: list[PendingEntry] = []

    def validator(entry: PendingEntry) -> bool | str:
        seen.append(entry)
        return True if entry.replay == "good" else "replay mismatch"

    board = env.board()
    guard = Guard(GuardConfig(pending_rank=1), clock=env.clock, validator=validator)
    good = guard.submit(board, "a", 10, replay="good")
    bad = guard.submit(board, "b", 20, replay="bad")
    assert good.pending and bad.pending
    assert [e.member for e in seen] == ["a", "b"]
    assert board.score("a") == 10 and board.score("b") is None
    assert guard.pending(board) == []


def test_async_validator_runs_after_the_answer(env: Env) -> None:
    async def scenario() -> None:
        from ranked.backends.base import AsyncBackend
        from ranked.backends.factory import open_async_backend
        from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend

        aback: AsyncBackend
        if isinstance(env.backend, MemoryBackend):
            aback = AsyncMemoryBackend(sync=env.backend)
        else:
            aback = open_async_backend(env.url)
        gate = asyncio.Event()

        async def validator(entry: PendingEntry) -> bool:
            await gate.wait()
            return True

        board = AsyncLeaderboard(aback, "async-board")
        guard = AsyncGuard(GuardConfig(pending_rank=1), validator=validator)
        held = await guard.submit(board, "a", 10)
        assert held.pending
        assert len(await guard.pending(board)) == 1  # answered before the validator
        gate.set()
        await guard.drain()
        assert await board.score("a") == 10
        assert await guard.pending(board) == []
        await aback.close()

    asyncio.run(scenario())


def test_verdicts_journaled(env: Env) -> None:
    store = env.journal()
    board = env.board(journal=store)
    guard = env.guard(min_score=0, pending_rank=2)
    guard.submit(board, "a", 5, actor="key:1", key_scope="write")
    guard.submit(board, "b", -1, actor="key:1")
    held = guard.submit(board, "c", 9, actor="key:2")
    assert held.pending_id
    guard.promote(board, held.pending_id, by="mod")
    held2 = guard.submit(board, "d", 10)
    assert held2.pending_id
    guard.reject(board, held2.pending_id, by="mod", reason="no")
    guard.ban(board, "d", by="mod", reason="cheat")
    guard.remove_everywhere(board, "a", by="mod", reason="cheat")
    records = guard.audit(board)
    assert [(r.action, r.member) for r in records] == [
        ("accepted", "a"),
        ("rejected", "b"),
        ("held", "c"),
        ("promoted", "c"),
        ("held", "d"),
        ("dismissed", "d"),
        ("banned", "d"),
        ("removed", "a"),
    ]
    assert records[1].reason == "out-of-bounds" and records[1].actor == "key:1"
    assert records[3].actor == "mod" and records[3].detail["id"] == held.pending_id
    assert [r.action for r in guard.audit(board, "d")] == ["held", "dismissed", "banned"]
    assert len(guard.audit(board, limit=2)) == 2
    # the board's own stream holds its writes only; the remove is journaled there too
    ops = [e.operation for e in store.board_events(board.name)]
    assert "verdict" not in ops and "remove" in ops
    assert audit_stream(board.name) not in board.recorded_configs(store)


def test_verdicts_do_not_change_a_rebuild(env: Env) -> None:
    store = env.journal()
    board = env.board(journal=store)
    guard = env.guard(max_score=100)
    for i in range(50):
        guard.submit(board, f"m{i % 7}", i * 3)  # some refused: above the bound
    before = board.top(10)
    events = store.last_board_seq(board.name)
    replayed = board.rebuild()
    assert board.top(10) == before
    assert store.last_board_seq(board.name) == events
    assert replayed <= events  # only the board's own events are read
    assert len(guard.audit(board, limit=1000)) == 50


def test_state_restored_from_the_audit_stream(env: Env, tmp_path: Path) -> None:
    """A store that lost the guard's state (an embedded store restarted, a Redis flushed)
    gets it back from the journal: bans, held submissions, nonces, histories."""
    from ranked import Leaderboard
    from ranked.journal import open_journal

    url = f"sqlite:///{tmp_path}/restore.db"
    store = open_journal(url)
    board = env.board("restore-board", journal=store)
    config = GuardConfig(secrets=(Secret(KEY),), z_threshold=2, z_min_history=3, pending_rank=3)
    guard = Guard(config, clock=env.clock)
    for i in range(3):
        assert guard.submit(board, f"top{i}", 1000 + i, key_scope="write").accepted
    for i, score in enumerate((10, 11, 12, 13)):
        signed = env.signed(board, "a", score, f"nonce-{i:04d}")
        assert guard.submit(board, "a", score, **signed).accepted
    replayed = env.signed(board, "a", 13, "nonce-0003")
    guard.ban(board, "cheat", by="mod", reason="x")
    held = guard.submit(board, "b", 5000, **env.signed(board, "b", 5000, "nonce-held"))
    assert held.pending
    board.close()
    store.close()
    _lose_guard_state(env)
    store = open_journal(url)
    env.opened.append(store)
    board = Leaderboard(env.backend, "restore-board", journal=store)
    env.opened.append(board)
    again = Guard(config, clock=env.clock)
    assert again.submit(board, "a", 13, **replayed).reason == "replayed-nonce"
    assert again.banned(board) == ["cheat"]
    assert [e.id for e in again.pending(board)] == [held.pending_id]
    outlier = again.submit(board, "a", 40, **env.signed(board, "a", 40, "nonce-late"))
    assert outlier.reason == "z-score"  # the history came back
    assert again.restore(board) is False  # once


def _lose_guard_state(env: Env) -> None:
    """Delete every key of the guards (memory: the whole store, as a restart would)."""
    from ranked.backends.memory import MemoryBackend

    if isinstance(env.backend, MemoryBackend):
        env.backend.flushall()
        return
    for client in env.clients:
        for key in client.keys("rk:guard:*"):
            client.delete(key)
