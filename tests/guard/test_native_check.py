"""The guard's native check step (``GuardCheck``, ``backends/native/guard_check.c``)
against its Python twin, side by side (PEP 399).

``memory://`` binds the guard's check operation to the C step when the C engine is loaded,
else to the twin under the backend's lock. Here both are bound on the C engine (the twin
by binding the same operation without its native name), each on a keyspace of its own
with one fake clock, and driven by the same random sequence of submissions (members,
scores, nonces, IPs, trusted or not, operators) mixed with clock steps, bans, a member's
state written as a plain hash (a restore, on a member with no state yet, as restores
write), foreign values (WRONGTYPE), the board's window filling (the pending tier) and
flushes. Every reply (compared by ``repr``), every error (type and text) and the whole
live state after every step must be identical: the C step's native tables
(``guard_state``) are read back as the twin's keys and values, under what its keyspace
holds (a value there is what the step reads first).
"""

from __future__ import annotations

import contextlib
import random
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ranked import Leaderboard
from ranked.backends.memory import MemoryBackend
from ranked.backends.native import native_factory
from ranked.backends.native._native import guard_state
from ranked.backends.procedure import Operation, Procedure
from ranked.engine.keyspace import Keyspace
from ranked.engine.zset import IMPLEMENTATION, SortedSet
from ranked.errors import ResponseError
from ranked.guard import GuardConfig, Secret
from ranked.guard._keys import GuardKeys
from ranked.guard._procedures import Checked, _Stats, check_operation
from ranked.guard._sync.guard import _Steps
from ranked.ratelimit import ALGORITHMS, Policy
from ranked.ratelimit._memory import BucketCell, Cell, TatCell

from .conftest import KEY

pytestmark = pytest.mark.skipif(IMPLEMENTATION != "c", reason="the C engine is not loaded")

T0 = 1_790_000_000.125


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def _policy(algorithm: str | None, limit: int) -> Policy | None:
    if algorithm is None:
        return None
    burst = 2 if algorithm in ("token_bucket", "gcra") else None
    return Policy(limit, 1, algorithm, burst)  # type: ignore[arg-type]


configs = st.builds(
    lambda player, ip, limit, step, span, z, zmin, tier, signed: GuardConfig(
        secrets=(Secret(KEY),) if signed else (),
        player_limit=_policy(player, limit),
        ip_limit=_policy(ip, limit + 1),
        max_step=step,
        max_change=None if span is None else 60,
        change_span=span,
        z_threshold=z,
        z_min_history=zmin,
        pending_rank=tier,
    ),
    st.sampled_from([None, *ALGORITHMS]),
    st.sampled_from([None, *ALGORITHMS]),
    st.integers(2, 6),
    st.sampled_from([None, 25, 40.5]),
    st.sampled_from([None, 0.5, 5]),
    st.sampled_from([None, 1.5, 3]),
    st.integers(2, 4),
    st.sampled_from([None, 1, 3]),
    st.booleans(),
)

MEMBERS = [b"a", b"b", b"c\xff", b"d"]
SCORES: list[Any] = [0.0, 1.0, 10, 12.5, 30.0, -7.25, 100.0, 55, 70.5, 1e300]

submits = st.tuples(
    st.just("submit"),
    st.sampled_from(MEMBERS),
    st.sampled_from(SCORES),
    st.sampled_from([None, "n1", "n2", "n3", "n4"]),
    st.sampled_from([None, "10.0.0.1", "10.0.0.2"]),
    st.booleans(),
    st.sampled_from([None, "best", "set", "incr", "decr"]),
)

actions = st.one_of(
    submits,
    submits,
    submits,
    submits,
    st.tuples(st.just("advance"), st.sampled_from([0.0, 1e-6, 0.3, 1.0, 7.0, 90.0])),
    st.tuples(st.just("ban"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("hash"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("foreign"), st.sampled_from(["player", "limiter", "banned", "window"])),
    st.tuples(st.just("window"), st.sampled_from(MEMBERS), st.sampled_from(SCORES)),
    st.tuples(st.just("flush")),
)


def _raw(operation: Operation[Checked], native: bool) -> Operation[Any]:
    """The check returning its raw reply: natively (the C step without a decoder) or by
    the twin (the procedure without its native name)."""
    procedure = operation.procedure
    plain: Procedure[Any] = Procedure(
        procedure.package, procedure.name, procedure.local, lambda reply: reply
    )
    if native:
        plain = Procedure(
            procedure.package,
            procedure.name,
            procedure.local,
            lambda reply: reply,
            native=procedure.native,
        )
    return Operation(plain, operation.encode, {**operation.native_args, "decode": None})


Algorithms = tuple[str | None, str | None]
"""The per-member and the per-IP limits' algorithms."""


def _live(ks: Keyspace, algorithms: Algorithms = (None, None)) -> dict[bytes, Any]:
    """Every key a command would see, with its deadline and the type of every number;
    with the C step's native tables read back as the twin's keys (``algorithms``: the
    per-member and the per-IP limits')."""
    now_ms = ks.now_ms()
    values, deadlines = _with_tables(ks, now_ms, algorithms)
    live: dict[bytes, Any] = {}
    for key, value in list(values.items()):
        deadline = deadlines.get(key)
        if deadline is not None and now_ms > deadline:
            continue
        if isinstance(value, _Stats | Cell):
            names: tuple[str, ...] = type(value).__slots__
            fields = {}
            for name in names:
                field = getattr(value, name, "<unset>")
                if not isinstance(field, int | float | str | None):
                    field = list(field)
                fields[name] = repr(field)
            live[key] = (type(value).__name__, dict(value), fields, deadline)
        elif isinstance(value, SortedSet):
            live[key] = (list(value.items()), deadline)
        elif isinstance(value, set):
            live[key] = (sorted(value), deadline)
        else:
            live[key] = (repr(value), deadline)
    return live


def _limiter_cell(algorithm: str | None, value: float, is_int: int, aux: int) -> Cell:
    """A limit of fixed state as the limiter's cell holds it."""
    if algorithm == "gcra":
        tat = TatCell()
        tat.tat = value
        return tat
    bucket = BucketCell()
    bucket.tokens, bucket.last = (int(value) if is_int else value), aux
    return bucket


def _with_tables(
    ks: Keyspace, now_ms: int, algorithms: Algorithms
) -> tuple[dict[bytes, Any], dict[bytes, int]]:
    """The keyspace's values and deadlines, with what the native tables hold as the twin
    holds it: a nonce as ``b"1"`` until its deadline, a member's history as a state cell,
    a limit of fixed state as the limiter's cell until its deadline; a key the keyspace
    holds itself stays as it is."""
    values, deadlines = dict(ks.raw_values), dict(ks.raw_deadlines)
    for records, nonces, limits in guard_state(ks).values():
        for key, found in limits.items():
            if found is not None and now_ms <= found[3] and key not in values:
                values[key] = _limiter_cell(algorithms[1], *found[:3])
                deadlines[key] = found[3]
        for key, deadline in nonces.items():
            if now_ms <= deadline and key not in values:
                values[key], deadlines[key] = b"1", deadline
        for key, record in records.items():
            has_stats, last, base, bt, n, mean, m2, limit_key, limit = record
            if has_stats and key not in values:
                cell = _Stats()
                cell.last, cell.base, cell.bt, cell.n, cell.mean, cell.m2 = (
                    last,
                    base,
                    bt,
                    n,
                    mean,
                    m2,
                )
                values[key] = cell
            if limit_key is None or limit is None or limit_key in values:
                continue
            value, is_int, aux, deadline = limit
            if now_ms <= deadline:
                values[limit_key] = _limiter_cell(algorithms[0], value, is_int, aux)
                deadlines[limit_key] = deadline
    return values, deadlines


def _perturb(
    ks: Keyspace, action: Any, config: GuardConfig, board_keys: GuardKeys, window: bytes
) -> None:
    kind = action[0]
    if kind == "ban":
        ks.execute("SADD", board_keys.banned, action[1])
    elif kind == "hash":
        ks.execute(
            "HSET",
            board_keys.player(action[1]),
            "n",
            "3",
            "mean",
            "5.5",
            "m2",
            "8",
            "last",
            "6",
            "base",
            "2",
            "bt",
            str(int(T0 * 1e6)),
        )
    elif kind == "foreign":
        target = {
            "player": board_keys.player(b"a"),
            "banned": board_keys.banned,
            "window": window,
            "limiter": (
                board_keys.limiter(b"rp", config.player_limit, b"b")[0]
                if config.player_limit is not None
                else board_keys.player(b"b")
            ),
        }[action[1]]
        ks.execute("SET", target, "foreign")
    elif kind == "window":
        if ks.execute("TYPE", window) in (b"zset", b"none"):
            ks.execute("ZADD", window, action[2], action[1])
    elif kind == "flush":
        ks.flush()


def _called(check: Any, keys: Any, args: Any, now: int | None) -> Any:
    """The check's answer, or the exception it raised."""
    try:
        return check(keys, args, now)
    except Exception as error:
        return error


def _outcome(check: Any, keys: Any, args: Any, now: int | None) -> str:
    return _shown(_called(check, keys, args, now))


def _shown(found: Any) -> str:
    """An answer as text that tells its types apart (1 from 1.0), or an exception's."""
    if isinstance(found, Exception):
        return f"{type(found).__name__}: {found}"
    return repr(found)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(configs, st.lists(actions, min_size=1, max_size=100), st.booleans())
def test_native_check_matches_the_twin(
    config: GuardConfig, script: list[Any], pinned: bool
) -> None:
    _run(config, script, pinned)


@pytest.mark.parametrize("seed", range(16))
def test_native_check_matches_the_twin_long(seed: int) -> None:
    """Longer random sequences than hypothesis draws (it keeps lists short)."""
    rng = random.Random(seed)
    limit = rng.randint(2, 6)
    span = rng.choice([None, 0.5, 5])
    config = GuardConfig(
        secrets=(Secret(KEY),) if rng.random() < 0.7 else (),
        player_limit=_policy(rng.choice([None, *ALGORITHMS]), limit),
        ip_limit=_policy(rng.choice([None, *ALGORITHMS]), limit + 1),
        max_step=rng.choice([None, 25, 40.5, 90]),
        max_change=None if span is None else 60,
        change_span=span,
        z_threshold=rng.choice([None, 1.5, 3]),
        z_min_history=rng.randint(2, 4),
        pending_rank=rng.choice([None, None, 1, 3]),
    )
    script: list[Any] = []
    for i in range(300):
        roll = rng.random()
        if roll < 0.65:
            script.append(
                (
                    "submit",
                    rng.choice(MEMBERS),
                    rng.choice(SCORES),
                    rng.choice([None, f"n{i}", f"n{i}", "n1"]),
                    rng.choice([None, "10.0.0.1", "10.0.0.2"]),
                    rng.random() < 0.2,
                    rng.choice([None, "best", "set", "incr", "decr"]),
                )
            )
        elif roll < 0.85:
            script.append(("advance", rng.choice([0.0, 1e-6, 0.1, 0.3, 1.0, 7.0, 90.0])))
        elif roll < 0.88:
            script.append(("ban", rng.choice(MEMBERS)))
        elif roll < 0.91:
            script.append(("hash", rng.choice(MEMBERS)))
        elif roll < 0.93:
            script.append(("foreign", rng.choice(["player", "limiter", "banned", "window"])))
        elif roll < 0.99:
            script.append(("window", rng.choice(MEMBERS), rng.choice(SCORES)))
        else:
            script.append(("flush",))
    _run(config, script, rng.random() < 0.5)


def _run(config: GuardConfig, script: list[Any], pinned: bool) -> None:
    clock = Clock()
    backends = [MemoryBackend(clock=clock) for _ in range(3)]
    board = Leaderboard(MemoryBackend(clock=clock), "g")
    board_keys = GuardKeys("g")
    steps = _Steps(board, config, board_keys)
    operation = check_operation(config.player_limit, config.ip_limit)
    native = backends[0].bind(_raw(operation, True))
    assert type(native).__name__ == "GuardCheck"
    twin = backends[1].bind(_raw(operation, False))
    assert type(twin).__name__ != "GuardCheck"
    decoding = backends[2].bind(operation)  # the C step decoding its own replies
    assert type(decoding).__name__ == "GuardCheck"
    window = board_keys.board.window(board.window_id())
    for action in script:
        kind = action[0]
        if kind == "advance":
            clock.now += action[1]
            continue
        if kind == "hash" and board_keys.player(action[1]) in backends[1].keyspace.raw_values:
            continue  # a restore writes a member's state only where there is none
        for backend in backends:
            with contextlib.suppress(ResponseError):  # a foreign value there: alike on both
                _perturb(backend.keyspace, action, config, board_keys, window)
        if kind != "submit":
            continue
        _, member, score, nonce, ip, trusted, operator = action
        use_nonce = nonce is not None and config.signed and not trusted
        keys = steps.keys_of(board, member, nonce if use_nonce else None, ip, trusted)
        args = steps.args_of(member, float(score), use_nonce, trusted, ip is not None, operator)
        now = round(clock.now * 1e6) if pinned else None
        answers = [_called(check, keys, args, now) for check in (native, twin, decoding)]
        assert _shown(answers[0]) == _shown(answers[1]), action
        reference = answers[1]
        if not isinstance(reference, Exception):
            reference = operation.procedure.decode(reference)
        assert _shown(answers[2]) == _shown(reference), action
        player, by_ip = config.player_limit, config.ip_limit
        algorithms: Algorithms = (
            None if player is None else player.algorithm,
            None if by_ip is None else by_ip.algorithm,
        )
        expected = _live(backends[1].keyspace)
        assert _live(backends[0].keyspace, algorithms) == expected, action
        assert _live(backends[2].keyspace, algorithms) == expected, action
    board.close()


def test_native_check_decodes_as_the_reference() -> None:
    """Bound with its decoder (as the guard binds it), the C step answers the reference's
    ``Checked``."""
    config = GuardConfig(player_limit=Policy(2, 1, "gcra", 1), ip_limit=Policy(5, 1), z_threshold=1)
    clock = Clock()
    operation = check_operation(config.player_limit, config.ip_limit)
    reference = Operation(
        Procedure("ranked.guard", "check", operation.procedure.local, operation.procedure.decode),
        operation.encode,
        operation.native_args,
    )
    native = MemoryBackend(clock=clock).bind(operation)
    twin = MemoryBackend(clock=clock).bind(reference)
    assert type(native).__name__ == "GuardCheck"
    board = Leaderboard(MemoryBackend(clock=clock), "g")
    steps = _Steps(board, config, GuardKeys("g"))
    for score in (1.0, 2.0, 3.0, 40.0, 4.0):
        keys = steps.keys_of(board, b"a", None, "1.2.3.4", False)
        args = steps.args_of(b"a", score, False, False, True, None)
        assert native(keys, args) == twin(keys, args)
        clock.now += 0.6
    board.close()


def test_factory_declines_foreign_keyspaces() -> None:
    """A keyspace of another type keeps the reference (its tables are read directly)."""

    class Other(Keyspace):
        pass

    factory = native_factory("guard")
    assert factory is not None
    operation = check_operation(None, None)
    assert factory(Other(), threading.Lock(), operation) is None
    assert factory(Keyspace(), threading.Lock(), operation) is not None


HOSTILE: list[tuple[Any, Any]] = [
    ((), ()),
    ([b"k"] * 5, [b"a"]),  # too few arguments
    ([b"k", 5, b"k", b"k", b"k"], None),  # a key that is not bytes
]


def test_native_check_hostile_calls() -> None:
    """Calls the guard never makes: the C step refuses any other shape than its own with
    TypeError, and changes nothing; the twin answers what Python makes of them."""
    clock = Clock()
    config = GuardConfig(player_limit=Policy(3, 1, "gcra", 1), z_threshold=2)
    board = Leaderboard(MemoryBackend(clock=clock), "g")
    steps = _Steps(board, config, GuardKeys("g"))
    operation = check_operation(config.player_limit, config.ip_limit)
    backend = MemoryBackend(clock=clock)
    native = backend.bind(_raw(operation, True))
    good = steps.args_of(b"a", 1.0, False, False, False, None)
    keys = steps.keys_of(board, b"a", None, None, False)
    odd = list(good)
    odd[1] = "1.5"  # a score of another type
    for bad_keys, bad_args in [*HOSTILE, (None, None), (keys, odd)]:
        args = good if bad_args is None else bad_args
        assert _outcome(native, bad_keys, args, None).startswith("TypeError: check()"), args
    assert _live(backend.keyspace, ("gcra", "token_bucket")) == {}
    odd[1] = 2**80  # an int score: float() of it, as the twin takes it
    twin = MemoryBackend(clock=clock).bind(_raw(operation, False))
    assert _outcome(native, keys, odd, None) == _outcome(twin, keys, odd, None)
    with pytest.raises(TypeError):
        native(keys)
    with pytest.raises(TypeError):
        native(keys, good, None, None)
    with pytest.raises(TypeError):
        native(keys, good, now_us=None)
    with pytest.raises(TypeError):
        native(5, good)
    board.close()


@pytest.mark.parametrize("repeat", [(1, 0), (5, 0), (5, 1), (6, 5), (3, 0)])
def test_native_check_repeated_keys(repeat: tuple[int, int]) -> None:
    """A key given for two (a call the guard never makes): the tables keep the state the
    twin keeps under separate keys, so the C step refuses it (TypeError) and changes
    nothing."""
    clock = Clock()
    config = GuardConfig(
        secrets=(Secret(KEY),),
        player_limit=Policy(3, 1, "gcra", 1),
        ip_limit=Policy(5, 1, "token_bucket", 2),
    )
    board = Leaderboard(MemoryBackend(clock=clock), "g")
    steps = _Steps(board, config, GuardKeys("g"))
    operation = check_operation(config.player_limit, config.ip_limit)
    backend = MemoryBackend(clock=clock)
    native = backend.bind(_raw(operation, True))
    keys = steps.keys_of(board, b"a", "nonce-1", "1.2.3.4", False)
    at, source = repeat
    keys[at] = keys[source]
    args = steps.args_of(b"a", 1.0, True, False, True, None)
    assert _outcome(native, keys, args, None).startswith("TypeError: check()")
    assert _live(backend.keyspace, ("gcra", "token_bucket")) == {}
    board.close()
