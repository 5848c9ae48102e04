"""Each layer of the write guard alone, then the pipeline's order, on every backend."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ranked.errors import GuardArgumentError, GuardConfigError
from ranked.guard import GuardConfig, Secret, sign
from ranked.ratelimit import ALGORITHMS, Policy

from .conftest import KEY, Env


def test_empty_config_accepts_and_applies(env: Env) -> None:
    board, guard = env.board(), env.guard()
    verdict = guard.submit(board, "alice", 300)
    assert verdict.accepted and verdict.submission is not None
    assert board.score("alice") == 300


def test_bounds(env: Env) -> None:
    board, guard = env.board(), env.guard(min_score=0, max_score=1000)
    assert guard.submit(board, "a", -1).reason == "out-of-bounds"
    assert guard.submit(board, "a", 1000.5).reason == "out-of-bounds"
    assert board.count() == 0
    assert guard.submit(board, "a", 1000).accepted
    assert guard.submit(board, "b", 0).accepted


def test_trusted_only(env: Env) -> None:
    board, guard = env.board(), env.guard(trusted_only=True)
    assert guard.submit(board, "a", 5).reason == "untrusted"
    assert guard.submit(board, "a", 5, key_scope="read").reason == "untrusted"
    assert guard.submit(board, "a", 5, key_scope="write").accepted
    assert guard.submit(board, "b", 5, key_scope="admin").accepted
    assert board.count() == 2


def test_a_client_writes_the_boards_operator_only(env: Env) -> None:
    """An untrusted writer's ``incr`` on a ``best`` board would be judged on the
    increment and move the score past the bounds; only trusted writers may choose."""
    board, guard = env.board(), env.guard(max_score=1000, max_step=1000)
    assert guard.submit(board, "c", 900, key_scope="read").accepted
    refused = guard.submit(board, "c", 900, key_scope="read", operator="incr")
    assert (refused.outcome, refused.reason) == ("rejected", "operator")
    assert guard.submit(board, "c", 950, key_scope="read", operator="best").accepted
    assert board.score("c") == 950
    assert guard.submit(board, "s", 5, key_scope="write", operator="incr").accepted


def test_player_rate_limit(env: Env) -> None:
    board = env.board()
    guard = env.guard(player_limit=Policy(2, 10, name="player"))
    assert guard.submit(board, "a", 1).accepted
    second = guard.submit(board, "a", 2)
    assert second.accepted and second.limit is not None and second.limit.remaining == 0
    third = guard.submit(board, "a", 3)
    assert third.reason == "rate-limited"
    assert third.limit is not None and not third.limit.allowed and third.limit.retry_after
    assert guard.submit(board, "b", 3).accepted  # per member
    env.clock.advance(10.5)
    assert guard.submit(board, "a", 4).accepted


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_ip_rate_limit_every_algorithm(env: Env, algorithm: str) -> None:
    board = env.board()
    guard = env.guard(ip_limit=Policy(2, 10, algorithm=algorithm, name="ip"))  # type: ignore[arg-type]
    assert guard.submit(board, "a", 1, ip="10.0.0.1").accepted
    assert guard.submit(board, "b", 1, ip="10.0.0.1").accepted
    refused = guard.submit(board, "c", 1, ip="10.0.0.1")
    assert refused.reason == "rate-limited-ip"
    assert guard.submit(board, "c", 1, ip="10.0.0.2").accepted
    assert guard.submit(board, "d", 1).accepted  # no address: no per-IP limit
    assert board.score("c") == 1


def test_trusted_writers_skip_rate_limits(env: Env) -> None:
    board, guard = env.board(), env.guard(player_limit=Policy(1, 10))
    assert guard.submit(board, "a", 1).accepted
    assert guard.submit(board, "a", 2).reason == "rate-limited"
    assert guard.submit(board, "a", 3, key_scope="write").accepted


def test_velocity_step(env: Env) -> None:
    board, guard = env.board(), env.guard(max_step=100)
    assert guard.submit(board, "a", 1000).accepted  # no history: no step to measure
    assert guard.submit(board, "a", 1101).reason == "velocity-step"
    assert guard.submit(board, "a", 1100).accepted
    assert guard.submit(board, "a", 1000).accepted
    assert board.score("a") == 1100  # best


def test_velocity_span(env: Env) -> None:
    board, guard = env.board(), env.guard(max_change=150, change_span=60)
    assert guard.submit(board, "a", 100).accepted
    assert guard.submit(board, "a", 200).accepted  # span starts at 100
    env.clock.advance(10)
    assert guard.submit(board, "a", 251).reason == "velocity-span"
    assert guard.submit(board, "a", 250).accepted
    env.clock.advance(61)  # a new span from the last accepted score
    assert guard.submit(board, "a", 400).accepted
    assert guard.submit(board, "a", 401).reason == "velocity-span"


def test_zscore_holds_an_outlier(env: Env) -> None:
    board = env.board()
    guard = env.guard(z_threshold=3.0, z_min_history=5)
    history = [100, 110, 90, 105, 95]
    for score in history:
        assert guard.submit(board, "a", score).accepted
    normal = guard.submit(board, "a", 112)
    assert normal.accepted
    assert normal.zscore is not None and 0 < normal.zscore < 3
    mean = sum(history) / 5
    var = sum((s - mean) ** 2 for s in history) / 4
    assert normal.zscore == pytest.approx((112 - mean) / var**0.5)
    outlier = guard.submit(board, "a", 400)
    assert outlier.pending and outlier.reason == "z-score" and outlier.zscore is not None
    assert outlier.zscore > 3
    assert board.score("a") == 112
    assert [e.id for e in guard.pending(board)] == [outlier.pending_id]


def test_zscore_needs_its_minimum_history(env: Env) -> None:
    board, guard = env.board(), env.guard(z_threshold=2.0, z_min_history=4)
    for score in (10, 11, 12):
        assert guard.submit(board, "a", score).accepted
    first = guard.submit(board, "a", 1000)  # n = 3 < 4: not judged
    assert first.accepted and first.zscore is None


def test_pending_rank_tier(env: Env) -> None:
    board, guard = env.board(), env.guard(pending_rank=2)
    for i in range(5):
        assert guard.submit(board, f"m{i}", 10 + i, key_scope="write").accepted
    assert guard.submit(board, "low", 11).accepted  # rank 4
    held = guard.submit(board, "top", 100)  # would be rank 1
    assert held.pending and held.reason == "rank-tier"
    assert board.score("top") is None
    assert guard.submit(board, "third", 12.5).accepted  # rank 3


def test_pending_rank_tier_low_first_board(env: Env) -> None:
    board = env.board(higher_is_better=False)
    guard = env.guard(pending_rank=1)
    assert guard.submit(board, "a", 50, key_scope="write").accepted
    assert guard.submit(board, "b", 60).accepted
    assert guard.submit(board, "c", 40).pending


def test_signature_required(env: Env) -> None:
    board = env.board()
    guard = env.guard(secrets=(Secret(KEY),))
    assert guard.submit(board, "a", 5).reason == "missing-signature"
    good = env.signed(board, "a", 5, "nonce-0001")
    assert guard.submit(board, "a", 5, **good).accepted
    tampered = env.signed(board, "a", 5, "nonce-0002")
    assert guard.submit(board, "a", 6, **tampered).reason == "bad-signature"
    other = env.signed(board, "a", 5, "nonce-0003", key=b"another-key-of-16-bytes")
    assert guard.submit(board, "a", 5, **other).reason == "bad-signature"
    assert guard.submit(board, "b", 5, key_scope="write").accepted  # a server identity
    assert board.score("a") == 5


def test_signature_covers_the_board(env: Env) -> None:
    one, two = env.board(), env.board()
    guard = env.guard(secrets=(Secret(KEY),))
    signed = env.signed(one, "a", 5, "nonce-0001")
    assert guard.submit(two, "a", 5, **signed).reason == "bad-signature"


def test_replayed_nonce_refused(env: Env) -> None:
    board = env.board()
    guard = env.guard(secrets=(Secret(KEY),))
    signed = env.signed(board, "a", 5, "nonce-replay")
    assert guard.submit(board, "a", 5, **signed).accepted
    assert guard.submit(board, "a", 5, **signed).reason == "replayed-nonce"


def test_clock_skew(env: Env) -> None:
    board = env.board()
    guard = env.guard(secrets=(Secret(KEY),), skew=30)
    ahead = env.signed(board, "a", 5, "nonce-ahead", skew=31)
    assert guard.submit(board, "a", 5, **ahead).reason == "clock-skew"
    behind = env.signed(board, "a", 5, "nonce-behind", skew=-31)
    assert guard.submit(board, "a", 5, **behind).reason == "clock-skew"
    inside = env.signed(board, "a", 5, "nonce-inside", skew=-29)
    assert guard.submit(board, "a", 5, **inside).accepted
    # kept twice the skew window: a replay is refused for as long as its time is valid
    env.clock.advance(58)
    assert guard.submit(board, "a", 5, **inside).reason == "clock-skew"


def test_nonce_is_kept_twice_the_skew_window(env: Env) -> None:
    """The nonce's TTL (on the backend's own clock) is 2 * skew: past it the nonce is
    forgotten. (In production the skew check refuses the payload by then; the guard's
    clock is held still here to show the TTL alone.)"""
    board = env.board()
    guard = env.guard(secrets=(Secret(KEY),), skew=0.5)
    signed = env.signed(board, "a", 5, "nonce-short")
    assert guard.submit(board, "a", 5, **signed).accepted
    assert guard.submit(board, "a", 5, **signed).reason == "replayed-nonce"
    time.sleep(1.1)
    assert guard.submit(board, "a", 5, **signed).accepted


def test_secret_rotation_with_grace(env: Env) -> None:
    old, new = b"old-secret-0123456789", b"new-secret-0123456789"
    board = env.board()
    grace_end = env.clock() + 60
    guard = env.guard(secrets=(Secret(new), Secret(old, until=grace_end)))
    assert guard.submit(board, "a", 1, **env.signed(board, "a", 1, "nonce-new1", key=new)).accepted
    assert guard.submit(board, "a", 2, **env.signed(board, "a", 2, "nonce-old1", key=old)).accepted
    env.clock.advance(61)
    late = env.signed(board, "a", 3, "nonce-old2", key=old)
    assert guard.submit(board, "a", 3, **late).reason == "bad-signature"
    assert guard.submit(board, "a", 3, **env.signed(board, "a", 3, "nonce-new2", key=new)).accepted


def test_ban_refuses_future_writes(env: Env) -> None:
    board, guard = env.board(), env.guard()
    assert guard.submit(board, "cheat", 5).accepted
    assert guard.ban(board, "cheat", by="mod", reason="aimbot")
    assert guard.banned(board) == ["cheat"]
    assert guard.submit(board, "cheat", 50).reason == "banned"
    assert guard.submit(board, "cheat", 50, key_scope="write").reason == "banned"
    assert board.score("cheat") == 5  # a ban keeps the scores: remove_everywhere takes them
    assert guard.unban(board, "cheat", by="mod", reason="appeal")
    assert guard.submit(board, "cheat", 50).accepted


def test_remove_everywhere(env: Env) -> None:
    board = env.board(windows=("all", "daily", "weekly"))
    guard = env.guard(pending_rank=1)
    assert guard.submit(board, "x", 5, key_scope="write").accepted
    assert guard.submit(board, "cheat", 3).accepted
    held = guard.submit(board, "cheat", 100)
    assert held.pending
    assert guard.remove_everywhere(board, "cheat", by="mod", reason="banned")
    for window in ("all", "daily", "weekly"):
        assert board.score("cheat", window=board.window_id(window)) is None
    assert guard.pending(board) == []
    assert board.score("x") == 5


def test_bad_arguments_change_nothing(env: Env) -> None:
    board = env.board()
    guard = env.guard(secrets=(Secret(KEY),), player_limit=Policy(1, 10))
    bad: list[tuple[Any, Any, dict[str, Any]]] = [
        ("", 1, {}),
        ("a", float("nan"), {}),
        ("a", True, {}),
        ("a", 1, {"nonce": "short"}),
        ("a", 1, {"client_time": 1.5}),
        ("a", 1, {"replay": object()}),
        ("a", 1, {"operator": "max"}),
    ]
    for member, score, extra in bad:
        with pytest.raises(GuardArgumentError):
            guard.submit(board, member, score, **extra)
    assert board.count() == 0
    signed = env.signed(board, "a", 1, "nonce-after")
    assert guard.submit(board, "a", 1, **signed).accepted  # the rate limit was not spent


def test_config_refusals() -> None:
    for bad in (
        {"min_score": 5, "max_score": 1},
        {"skew": 0},
        {"max_step": -1},
        {"max_change": 5},
        {"z_min_history": 1},
        {"pending_rank": 0},
        {"player_limit": "10/s"},
        {"webhook": "ftp://x"},
        {"secrets": (b"raw",)},
    ):
        with pytest.raises(GuardConfigError):
            GuardConfig(**bad)
    with pytest.raises(GuardConfigError):
        Secret(b"short")
    config = GuardConfig(
        secrets=(Secret(KEY, until=5.0),), player_limit=Policy(3, 60, name="p"), pending_rank=100
    )
    assert GuardConfig.from_json(config.to_json()) == config


def test_sign_is_stable() -> None:
    # the canonical message: whole scores without ".0"
    assert sign(KEY, "b", "m", 300, 1, "n0000000") == sign(KEY, "b", "m", 300.0, 1, "n0000000")
    assert sign(KEY, "b", "m", 0.5, 1, "n0000000") != sign(KEY, "b", "m", 1, 1, "n0000000")


def test_pending_rank_refused_on_a_composite_board(env: Env) -> None:
    board = env.board(tie_break="time")
    guard = env.guard(pending_rank=10)
    with pytest.raises(GuardConfigError):
        guard.submit(board, "a", 5)
    assert board.count() == 0
    assert env.guard(max_step=10).submit(board, "a", 5).accepted  # other layers are fine


def test_a_score_past_the_doubles_is_a_typed_error(env: Env) -> None:
    board = env.board()
    with pytest.raises(GuardArgumentError):
        env.guard().submit(board, "a", 2**1100)
    assert board.count() == 0


def test_the_accepted_verdict_is_the_dataclass_one() -> None:
    """``accepted`` (the verdict of every accepted submission, made through the slots)
    makes what the frozen dataclass's constructor makes, as frozen."""
    from dataclasses import FrozenInstanceError

    from ranked.guard.verdict import Verdict, accepted
    from ranked.ratelimit import Decision, Policy

    limit = Decision(True, 5, 4, 0.2, None, Policy(5, 1))
    made = accepted(None, limit, 1.5)  # type: ignore[arg-type]
    assert made == Verdict("accepted", submission=None, limit=limit, zscore=1.5)
    assert repr(made) == repr(Verdict("accepted", limit=limit, zscore=1.5))
    assert made.accepted and not made.pending and not made.rejected
    with pytest.raises(FrozenInstanceError):
        made.reason = "x"  # type: ignore[misc]
