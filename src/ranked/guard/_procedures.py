"""The guard's atomic steps: each a Lua script (``lua/<name>.lua``) and its Python twin.

``check`` is the one step of a guarded submission's stateful layers (ban list, rate limits,
nonce, velocity, z-score, pending tier, and the record of what passed). Its script is
composed per configuration: the rate-limit algorithms of ``ranked.ratelimit`` (their own
``lua/<algorithm>.lua``) go in front as local functions ``rl_player`` / ``rl_ip``, so the
limits are the project's limiters, decided inside the same script. The twin calls the same
limiters' Python cores (``ranked.ratelimit._memory``) on the keyspace. O(1) but the pending
tier's ZCOUNT, O(log n).

State on memory: a member's history is a :class:`_Stats` cell (numbers in slots; a hash
to Redis commands), nonces are strings with a deadline, the held and banned keys are a
hash and a set, as on Redis.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final, NamedTuple

from ..backends._scripts import Script, feature_script
from ..backends.procedure import Local, Operation, Procedure
from ..engine.keyspace import Keyspace
from ..engine.zset import SortedSet
from ..errors import ResponseError
from ..ratelimit import Decision, Policy
from ..ratelimit._memory import CORES
from ..ratelimit._memory import native_args as limiter_native_args
from ..ratelimit._procedures import decoder
from ..ratelimit._procedures import policy_args as limiter_args

__all__ = [
    "CLAIM",
    "NATIVE",
    "PENDING",
    "Checked",
    "check_operation",
    "check_procedure",
    "claim_operation",
]

_PACKAGE: Final = "ranked.guard"
NATIVE: Final = "guard"
"""The check's native name: memory's C check (``ranked.backends.native.guard``)."""
_WRONGTYPE: Final = "WRONGTYPE Operation against a key holding the wrong kind of value"


class Checked(NamedTuple):
    """The check's decoded reply."""

    code: int
    """0 accepted, 1 rejected, 2 held."""
    reason: str
    player: Decision | None
    ip: Decision | None
    zscore: float | None
    rank: int | None


class _Stats(dict[bytes, bytes]):
    """A member's history on memory: numbers in slots; as a hash, one field naming it."""

    __slots__ = ("base", "bt", "last", "m2", "mean", "n")
    KIND: ClassVar[bytes] = b"guard member state"
    last: float | None
    base: float | None
    bt: int
    n: int
    mean: float
    m2: float

    def __init__(self) -> None:
        super().__init__({b"ranked": self.KIND})
        self.last = self.base = None
        self.bt = self.n = 0
        self.mean = self.m2 = 0.0


def _stats(ks: Keyspace, key: bytes, now_ms: int, create: bool) -> _Stats | None:
    cell = ks.get_at(key, now_ms)
    if cell is None:
        if not create:
            return None
        cell = _Stats()
        ks.store(key, cell)
    elif type(cell) is not _Stats:
        if type(cell) is not dict:
            raise ResponseError(_WRONGTYPE)
        cell = _from_fields(cell)  # written as a plain hash (a restore)
        ks.store(key, cell)
    return cell


def _from_fields(fields: dict[bytes, bytes]) -> _Stats:
    """A member's state from the hash fields the scripts write."""
    cell = _Stats()
    last, base = fields.get(b"last"), fields.get(b"base")
    cell.last = None if last is None else float(last)
    cell.base = None if base is None else float(base)
    cell.bt = int(float(fields.get(b"bt", b"0")))
    cell.n = int(float(fields.get(b"n", b"0")))
    cell.mean = float(fields.get(b"mean", b"0"))
    cell.m2 = float(fields.get(b"m2", b"0"))
    return cell


def restored_state(cell: object) -> tuple[float | None, float | None, int, int, float, float]:
    """A member's state from the value at its state key, as the twin reads it (a plain
    hash a restore wrote, or a state cell): ``(last, base, bt, n, mean, m2)``. Refuses
    any other value as the twin does (WRONGTYPE). The native check's and claim's reader
    of a state found in the keyspace (``ranked.backends.native.guard``)."""
    if type(cell) is not _Stats:
        if type(cell) is not dict:
            raise ResponseError(_WRONGTYPE)
        cell = _from_fields(cell)
    return (cell.last, cell.base, cell.bt, cell.n, cell.mean, cell.m2)


def _welford(cell: _Stats, score: float) -> None:
    """Count ``score`` in the running mean and M2 (Welford): O(1), as the scripts do."""
    n = cell.n + 1
    delta = score - cell.mean
    cell.mean += delta / n
    cell.m2 += delta * (score - cell.mean)
    cell.n = n


def _limiter_reply(decision: Decision) -> tuple[int, int, int]:
    retry = decision.retry_after
    return (
        decision.remaining,
        round(decision.reset_after * 1e6),
        -1 if retry is None else round(retry * 1e6),
    )


def _check_twin(player: Policy | None, ip: Policy | None) -> Local:
    """The check's Python twin (the same reply as the composed script)."""
    player_core = None if player is None else CORES[player.algorithm](player)
    ip_core = None if ip is None else CORES[ip.algorithm](ip)

    def local(ks: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> list[Any]:
        now_ms = ks.now_ms()
        member, score = args[0], float(args[1])
        reply: list[Any] = [0, b"", 0, 0, -2, 0, 0, -2, b"", 0]
        banned = ks.get_at(keys[4], now_ms)
        if banned is not None and member in banned:
            reply[0], reply[1] = 1, b"banned"
            return reply
        at, np, ni = 5, int(args[12]), int(args[13])
        if np:
            assert player_core is not None
            r = _limiter_reply(player_core(ks, now, now_ms, keys[at : at + np], 1, 1))
            reply[2:5] = r
            if r[2] >= 0:
                reply[0], reply[1] = 1, b"rate-limited"
                return reply
            at += np
        if ni:
            assert ip_core is not None
            r = _limiter_reply(ip_core(ks, now, now_ms, keys[at : at + ni], 1, 1))
            reply[5:8] = r
            if r[2] >= 0:
                reply[0], reply[1] = 1, b"rate-limited-ip"
                return reply
        nonce_ttl = int(args[2])
        if nonce_ttl > 0 and ks.get_at(keys[1], now_ms) is not None:
            reply[0], reply[1] = 1, b"replayed-nonce"
            return reply
        cell = _stats(ks, keys[0], now_ms, False)
        last = None if cell is None else cell.last
        step = args[3]
        if step != b"" and last is not None and abs(score - last) > float(step):
            reply[0], reply[1] = 1, b"velocity-step"
            return reply
        span = int(args[4])
        base, bt = (None, 0) if cell is None else (cell.base, cell.bt)
        if span > 0 and last is not None:
            if base is None or now - bt >= span:
                base, bt = last, now
            if abs(score - base) > float(args[5]):
                reply[0], reply[1] = 1, b"velocity-span"
                return reply
        held: bytes | None = None
        threshold = args[6]
        if threshold != b"" and cell is not None and cell.n >= int(args[7]):
            var = cell.m2 / (cell.n - 1)
            if var > 0:
                z = (score - cell.mean) / math.sqrt(var)
                reply[8] = b"%.17g" % z
                if abs(z) > float(threshold):
                    held = b"z-score"
        tier = int(args[8])
        if held is None and tier > 0:
            reply[9], held = _tier(ks, now_ms, keys[2], member, score, args[9], args[20], tier)
        if nonce_ttl > 0:
            ks.store(keys[1], b"1")
            ks.put_deadline(keys[1], now_ms + nonce_ttl)
        if held is not None:
            reply[0], reply[1] = 2, held
            return reply
        cell = _stats(ks, keys[0], now_ms, True)
        assert cell is not None
        _welford(cell, score)
        cell.last = score
        if span > 0 and base is not None:
            cell.base, cell.bt = base, bt
        return reply

    return local


def _tier(
    ks: Keyspace,
    now_ms: int,
    key: bytes,
    member: bytes,
    score: float,
    high: bytes,
    operator: bytes,
    tier: int,
) -> tuple[int, bytes | None]:
    """The pending tier: the rank ``score`` would take in the window at ``key`` (after the
    operator), and ``b"rank-tier"`` when that is within ``tier`` and better than the
    member's current score, else None. O(log n). The twin's and the native step's."""
    higher = high == b"1"
    window = ks.get_at(key, now_ms)
    if window is not None and not isinstance(window, SortedSet):
        raise ResponseError(_WRONGTYPE)
    current = None if window is None else window.score(member)
    result = score
    if operator == b"incr":
        result = (current or 0.0) + score
    elif operator == b"decr":
        result = (current or 0.0) - score
    if window is None:
        better = 0
    elif higher:
        better = window.count_by_score(result, math.inf, min_exclusive=True)
    else:
        better = window.count_by_score(-math.inf, result, max_exclusive=True)
    gains = current is None or (result > current if higher else result < current)
    return better + 1, b"rank-tier" if better + 1 <= tier and gains else None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _check_decoder(player: Policy | None, ip: Policy | None) -> Callable[[Any], Checked]:
    player_decision = None if player is None else decoder(player)
    ip_decision = None if ip is None else decoder(ip)
    new = tuple.__new__  # the NamedTuple constructor costs a Python call more

    def decode(reply: Sequence[Any]) -> Checked:
        z = reply[8]
        return new(
            Checked,
            (
                int(reply[0]),
                _text(reply[1]),
                None if player_decision is None or reply[4] == -2 else player_decision(reply[2:5]),
                None if ip_decision is None or reply[7] == -2 else ip_decision(reply[5:8]),
                float(z) if z != b"" and z != "" else None,
                int(reply[9]) or None,
            ),
        )

    return decode


class _Composed(Procedure[Checked]):
    """The check, whose script is its own text with the limiters' scripts in front; its
    native implementation on memory is ``guard`` (``ranked.backends.native.guard``)."""

    __slots__ = ("_source", "native_args")

    def __init__(self, policies: tuple[Policy | None, Policy | None]) -> None:
        twin, decode = _check_twin(*policies), _check_decoder(*policies)
        super().__init__(_PACKAGE, "check", twin, decode, native=NATIVE)
        player, ip = policies
        self.native_args: dict[str, Any] = {
            "player": None if player is None else limiter_native_args(player),
            "ip": None if ip is None else limiter_native_args(ip),
            "restored": restored_state,
            "tier": _tier,
            "decode": decode,
            "checked": Checked,
        }
        """What the native check needs (see ``ranked.backends.native.guard``)."""
        parts = []
        names = []
        for name, policy in zip((b"rl_player", b"rl_ip"), policies, strict=True):
            if policy is None:
                continue
            body = feature_script("ranked.ratelimit", policy.algorithm).source
            parts.append(b"local function %s(KEYS, ARGV)\n%s\nend\n" % (name, body))
            names.append(f"{name.decode()}={policy.algorithm}")
        own = feature_script(_PACKAGE, "check")
        self._source = Script(f"{own.name}[{','.join(names)}]", b"".join(parts) + own.source)

    @property
    def script(self) -> Script:
        return self._source


def check_procedure(player: Policy | None, ip: Policy | None) -> Procedure[Checked]:
    """The check step for these limiters (either may be None)."""
    return _Composed((player, ip))


def _given(
    keys: Sequence[bytes], args: Sequence[Any], now_us: int | None = None
) -> tuple[Sequence[bytes], Sequence[Any], int | None]:
    return keys, args, now_us


def check_operation(player: Policy | None, ip: Policy | None) -> Operation[Checked]:
    """The check step as an operation called with the script's own arguments, ``(keys,
    args, now_us=None)``, with what its native implementation on memory needs."""
    procedure = _Composed((player, ip))
    return Operation(procedure, _given, native_args=procedure.native_args)


def _claim(ks: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> bytes | None:
    now_ms = ks.now_ms()
    held: Any = ks.get_at(keys[0], now_ms)
    if held is None:
        return None
    found: bytes | None = held.pop(args[0], None)
    if found is None:
        return None
    if not held:
        ks.delete(keys[0])
    if args[1] == b"1" or args[1] == 1:
        score = float(args[2])
        cell = _stats(ks, keys[1], now_ms, True)
        assert cell is not None
        _welford(cell, score)
        cell.last = cell.base = score
        cell.bt = now
    return found


def _pending(ks: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> list[bytes]:
    held: Any = ks.get_at(keys[0], ks.now_ms())
    flat: list[bytes] = []
    if held is not None:
        for field, value in held.items():
            flat += (field, value)
    return flat


def _pairs(reply: Any) -> dict[bytes, bytes]:
    return {reply[i]: reply[i + 1] for i in range(0, len(reply), 2)}


CLAIM_NATIVE: Final = "guard_claim"
"""The claim's native name: memory's claim that counts a promoted score in the native
check's tables (``ranked.backends.native.guard``)."""

CLAIM: Final[Procedure[bytes | None]] = Procedure(
    _PACKAGE, "claim", _claim, lambda r: r, native=CLAIM_NATIVE
)
"""Take a pending submission: keys (held, member stats), args (id, promote 1|0, score)."""


def claim_operation() -> Operation[bytes | None]:
    """The claim called with the script's own arguments, ``(keys, args, now_us=None)``,
    with what its native form on memory needs: the twin (it takes the held entry) and
    the reader of a state found in the keyspace."""
    return Operation(CLAIM, _given, native_args={"reference": _claim, "restored": restored_state})


PENDING: Final[Procedure[dict[bytes, bytes]]] = Procedure(_PACKAGE, "pending", _pending, _pairs)
"""Every pending submission: keys (held,), no args."""


def limiter_params(policy: Policy | None) -> tuple[Any, ...]:
    """The script's three policy arguments (limit, window us, burst; "" when absent)."""
    if policy is None:
        return ("", "", "")
    found = limiter_args(policy)
    return (*found, "") if len(found) == 2 else found
