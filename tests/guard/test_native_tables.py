"""The guard's native tables on ``memory://`` (``backends/native/guard_tables.c``): what
they keep is bounded by what is live. The check's answers against its twin are
``test_native_check.py``'s; here, what the tables drop once it has expired."""

from __future__ import annotations

from typing import Any

import pytest

from ranked import Leaderboard
from ranked.backends.memory import MemoryBackend
from ranked.backends.native._native import guard_state
from ranked.engine.zset import IMPLEMENTATION
from ranked.guard import Guard, GuardConfig, Secret, sign
from ranked.ratelimit import Policy

from .conftest import KEY, T0, FakeClock

pytestmark = pytest.mark.skipif(IMPLEMENTATION != "c", reason="the C engine is not loaded")


Tables = tuple[dict[bytes, Any], dict[bytes, int], dict[bytes, Any]]


def _tables(backend: MemoryBackend) -> Tables:
    (found,) = guard_state(backend.keyspace).values()
    return found


def test_expired_nonces_leave_the_table() -> None:
    """Each new nonce drops up to two expired ones, oldest first: after a quiet spell the
    table holds about the live nonces only. An expired nonce is accepted again."""
    clock = FakeClock()
    backend = MemoryBackend(clock=clock)
    board = Leaderboard(backend, "n")
    guard = Guard(GuardConfig(secrets=(Secret(KEY),), skew=1.0), clock=clock)

    def submit(nonce: str) -> str:
        now = round(clock.now * 1000)
        signature = sign(KEY, "n", "a", 5, now, nonce)
        return guard.submit(
            board, "a", 5, client_time=now, nonce=nonce, signature=signature
        ).outcome

    for i in range(100):
        assert submit(f"first-{i:04d}") == "accepted"
    assert len(_tables(backend)[1]) == 100
    assert submit("first-0000") == "rejected"  # replayed
    clock.advance(3.0)  # past the nonces' TTL, twice the skew window
    for i in range(60):
        assert submit(f"second-{i:04d}") == "accepted"
    nonces = _tables(backend)[1]
    assert len(nonces) == 60 and all(n.startswith(b"rk:guard:{n}:n:second-") for n in nonces)
    assert submit("first-0001") == "accepted"  # expired: a nonce like any other now
    board.close()


def test_expired_ip_limits_are_swept() -> None:
    """A limit record of an IP past its deadline goes as new IPs come: the table holds
    about the IPs whose state is live."""
    clock = FakeClock()
    backend = MemoryBackend(clock=clock)
    board = Leaderboard(backend, "i")
    guard = Guard(GuardConfig(ip_limit=Policy(5, 1, "gcra")), clock=clock)
    for i in range(300):
        assert guard.submit(board, "a", i, ip=f"10.0.{i // 256}.{i % 256}").accepted
    assert len(_tables(backend)[2]) == 300
    clock.advance(10.0)  # every IP's state past its deadline
    for i in range(300):
        assert guard.submit(board, "a", i, ip=f"10.1.{i // 256}.{i % 256}").accepted
    limits = _tables(backend)[2]
    expired = [k for k, v in limits.items() if v is None or v[3] < round(clock.now * 1000)]
    assert len(limits) >= 300 and len(expired) < 60
    board.close()


def test_a_flush_empties_the_tables() -> None:
    clock = FakeClock(T0)
    backend = MemoryBackend(clock=clock)
    board = Leaderboard(backend, "f")
    guard = Guard(GuardConfig(player_limit=Policy(5, 1, "token_bucket", 2)), clock=clock)
    assert guard.submit(board, "a", 1).accepted
    members, _, _ = _tables(backend)
    assert set(members) == {b"rk:guard:{f}:p:a"}
    backend.keyspace.flush()
    assert guard_state(backend.keyspace) == {}
    board.close()


def test_a_restored_state_and_a_promotion_go_into_the_record() -> None:
    """A member's history written to the keyspace (as ``restore`` writes it) is taken
    into its record and its key deleted; a promoted score is counted in the record."""
    clock = FakeClock()
    backend = MemoryBackend(clock=clock)
    board = Leaderboard(backend, "r")
    guard = Guard(GuardConfig(z_threshold=2, z_min_history=3), clock=clock)
    assert guard.submit(board, "b", 1).accepted  # the guard's state restored: none
    state_key = b"rk:guard:{r}:p:a"
    backend.keyspace.execute("HSET", state_key, "n", "3", "mean", "11", "m2", "2", "last", "12")
    held = guard.submit(board, "a", 30)  # far from the restored history: held
    assert held.pending and held.pending_id
    assert state_key not in backend.keyspace.raw_values
    members = _tables(backend)[0]
    assert members[state_key][:7] == (1, 12.0, None, 0, 3, 11.0, 2.0)
    guard.promote(board, held.pending_id, by="mod")
    has_stats, last, base, bt, n, mean, m2 = _tables(backend)[0][state_key][:7]
    assert (has_stats, last, base, n) == (1, 30.0, 30.0, 4)
    assert bt == round(clock.now * 1e6) and mean == 15.75 and m2 == 2 + (30 - 11) * (30 - 15.75)
    assert guard.submit(board, "a", 25).accepted  # 30 is history now: 25 is no outlier
    board.close()
