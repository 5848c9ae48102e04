"""The guard's C in-process stage (``_front.c``) against the Python path it skips: for the
same arguments, what the C stage hands the backend step (keys and arguments) is what the
Python path hands it, and the C stage passes nothing the Python path refuses or raises on.

The stage reads no state, so the Python path runs on the same guard with the stage off and
the step replaced by a probe that records its keys and arguments and stops there (no state
changes). The stage does not depend on the backend: this runs on memory only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ranked import Leaderboard
from ranked.guard import Guard, GuardConfig, Secret, sign
from ranked.guard._native import Front
from ranked.ratelimit import Policy

pytestmark = pytest.mark.skipif(Front is None, reason="the C build is not in use")

KEY = b"0123456789abcdef-secret"
NOW = 1_790_000_000.0
NOW_MS = round(NOW * 1000)


class Probed(Exception):
    """The step was reached: its keys and arguments."""

    def __init__(self, keys: list[bytes], args: list[Any]) -> None:
        super().__init__()
        self.keys, self.step_args = keys, args


CONFIGS = {
    "full": GuardConfig(
        min_score=0,
        max_score=1e7,
        secrets=(Secret(KEY),),
        skew=60,
        player_limit=Policy(100, 1, "gcra", name="p"),
        ip_limit=Policy(100, 1, "sliding_log", name="i:p{x}%"),
        max_step=5e6,
        max_change=5e6,
        change_span=60,
        z_threshold=3,
        z_min_history=2,
    ),
    "unsigned": GuardConfig(player_limit=Policy(5, 1, "token_bucket", burst=9)),
    "ip only, signed": GuardConfig(secrets=(Secret(KEY),), ip_limit=Policy(5, 2)),
    "trusted only": GuardConfig(trusted_only=True),
    "empty": GuardConfig(),
}


@pytest.fixture(scope="module")
def guards() -> Iterator[dict[str, tuple[Guard, Leaderboard]]]:
    found: dict[str, tuple[Guard, Leaderboard]] = {}
    for name, config in CONFIGS.items():
        board = Leaderboard("memory://", f"front-{len(found)}")
        found[name] = (Guard(config, clock=lambda: NOW), board)
    yield found
    for _, board in found.values():
        board.close()


def _python_path(guard: Guard, board: Leaderboard, call: dict[str, Any]) -> object:
    """What the Python path does with ``call``: Probed, a Verdict or the exception."""
    state = guard._board(board)
    front, check = state.front, state.check
    state.front = None

    def probe(keys: list[bytes], args: list[Any], now_us: int | None) -> Any:
        raise Probed(keys, args)

    state.check = probe
    try:
        return guard.submit(board, **call)
    except Exception as error:  # the outcome under test
        return error
    finally:
        state.front, state.check = front, check


def mostly(valid: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``valid`` nine times in ten, else ``odd``."""
    return st.integers(0, 9).flatmap(lambda n: odd if n == 0 else valid)


members = mostly(
    st.one_of(
        st.sampled_from(["alice", "bob", "é", "日本", "a:b{c}", "x" * 200]),
        st.binary(min_size=1, max_size=8),
        st.text(min_size=1, max_size=6),
    ),
    st.sampled_from(["\udcff", "", b"", 7, None]),
)
scores = mostly(
    st.one_of(st.integers(-10, 2 * 10**7), st.floats(-10.0, 2e7)),
    st.sampled_from([float("nan"), float("inf"), True, 2**1100, -0.0, "5", 2**60]),
)
times = mostly(
    st.sampled_from([NOW_MS, NOW_MS - 59_000, NOW_MS + 59_000]),
    st.sampled_from([None, NOW_MS + 61_000, 2**60, True, 1.5]),
)
nonces = mostly(
    st.from_regex(r"[A-Za-z0-9_.:~+/=-]{8,12}", fullmatch=True),
    st.sampled_from([None, "short", "bad nonce!", "é" * 9]),
)
ips = mostly(
    st.sampled_from([None, "10.0.0.1", "::1", "x" * 64]),
    st.sampled_from(["x" * 65, "", 5]),
)
scopes = mostly(st.sampled_from([None, "read"]), st.sampled_from(["write", "admin", "other"]))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=st.sampled_from(sorted(CONFIGS)),
    member=members,
    score=scores,
    client_time=times,
    nonce=nonces,
    signature=mostly(st.just("good"), st.sampled_from(["bad", None, "upper"])),
    ip=ips,
    key_scope=scopes,
)
def test_the_c_stage_hands_the_step_what_the_python_path_hands_it(
    guards: dict[str, tuple[Guard, Leaderboard]],
    config: str,
    member: Any,
    score: Any,
    client_time: Any,
    nonce: Any,
    signature: str | None,
    ip: Any,
    key_scope: str | None,
) -> None:
    guard, board = guards[config]
    state = guard._board(board)
    assert state.front is not None
    sig: Any = signature
    if signature in ("good", "upper"):
        try:
            sig = sign(KEY, board.name, member, score, client_time, nonce)
        except Exception:  # arguments no signature can cover
            sig = None
        else:
            sig = sig.upper() if signature == "upper" else sig
    elif signature == "bad":
        sig = "0" * 64
    call = dict(
        member=member,
        score=score,
        client_time=client_time,
        nonce=nonce,
        signature=sig,
        ip=ip,
        key_scope=key_scope,
    )
    window = state.window_key(board)
    found = state.front(member, score, client_time, nonce, sig, ip, key_scope, NOW, window)
    reference = _python_path(guard, board, call)
    event(
        "the C stage took it"
        if found is not None
        else f"the Python path: {type(reference).__name__}"
    )
    if found is not None:
        assert isinstance(reference, Probed), reference
        who, value, keys, args = found
        assert keys == reference.keys
        assert args == reference.step_args
        assert [type(a) for a in args] == [type(a) for a in reference.step_args]
        assert (who, value) == (args[0], args[1])
    elif isinstance(reference, Probed):
        # the C stage leaves to Python what it does not take: trusted writers, a member
        # that is not plain text or bytes, a client time beyond 2**53 ms
        assert (
            key_scope in ("write", "admin")
            or (isinstance(member, str) and not member.isprintable())
            or (isinstance(client_time, int) and abs(client_time) > 2**53)
        ), call


def test_the_c_stage_takes_the_common_submission(
    guards: dict[str, tuple[Guard, Leaderboard]],
) -> None:
    guard, board = guards["full"]
    state = guard._board(board)
    assert state.front is not None
    signature = sign(KEY, board.name, "alice", 5, NOW_MS, "nonce-0001")
    window = state.window_key(board)
    found = state.front(
        "alice", 5, NOW_MS, "nonce-0001", signature, "10.0.0.1", "read", NOW, window
    )
    assert found is not None
    # and a submission the Python path refuses is the Python path's to refuse
    assert state.front("alice", 5, NOW_MS, "nonce-0001", "0" * 64, None, None, NOW, window) is None
    assert guard.submit(
        board, "alice", 5, client_time=NOW_MS, nonce="nonce-0001", signature=signature
    ).accepted


class CountingClock:
    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return NOW + self.reads * 1e-3  # each read later: a second read would show


@pytest.mark.parametrize("refused", [False, True])
def test_the_clock_is_read_once_for_the_cheap_layers(refused: bool) -> None:
    """The C stage and the Python path judge one instant: a submission the stage hands
    back (here refused by its signature) reads the clock as often as one it passes."""
    clock = CountingClock()
    board = Leaderboard("memory://", f"front-clock-{refused}")
    guard = Guard(CONFIGS["ip only, signed"], clock=clock)
    try:
        client_time = NOW_MS
        first = sign(KEY, board.name, "bob", 1, client_time, "nonce-0000")
        assert guard.submit(
            board, "bob", 1, client_time=client_time, nonce="nonce-0000", signature=first
        ).accepted  # the guard's first call also restores the board's guard state
        clock.reads = 0
        signature = sign(KEY, board.name, "alice", 5, client_time, "nonce-0001")
        if refused:
            signature = "0" * 64
        verdict = guard.submit(
            board, "alice", 5, client_time=client_time, nonce="nonce-0001", signature=signature
        )
        assert verdict.accepted is not refused
        # one read for the cheap layers, one for the step's instant when it runs
        assert clock.reads == (1 if refused else 2)
    finally:
        board.close()


def test_the_c_stage_refuses_a_verifier_that_cannot_be_called() -> None:
    assert Front is not None
    with pytest.raises(TypeError):
        Front(
            5, False, None, None, 30.0, "b", b"p:", b"n:", b"h", b"x", None, None,
            ("",) * 9, ("",) * 6, b"best", 0,
        )  # fmt: skip
