"""Running commands on two sides (a real redis-server and ranked's Keyspace) and comparing.

A *side* executes one command and returns an :class:`Outcome`: the RESP2-shaped reply, or
the error text without the leading ``-``. :func:`compare` runs a command on both sides and
judges the pair as the command's :class:`~diff_gen.Check` says. :class:`Differential` runs
whole streams, keeps the history since the sides were last known equal, and turns the
first mismatch into a small reproduction (the earlier commands that touched the keys
involved, then shrunk while the mismatch still reproduces on fresh sides).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis
from diff_gen import ALLKEYS, Check, Command, StreamGenerator

__all__ = [
    "TOTALS",
    "Differential",
    "KeyspaceSide",
    "Mismatch",
    "Outcome",
    "RedisSide",
    "Side",
    "compare",
]

TTL_TOLERANCE = {b"TTL": 2, b"PTTL": 2000}
SCAN_MAX_CALLS = 100_000
SHRINK_BUDGET = 60_000  # commands executed while shrinking one mismatch
STATE_CHECK_EVERY = 250
REPRO_SHOWN = 60

TOTALS: Counter[str] = Counter()


@dataclass(frozen=True)
class Outcome:
    """A reply value, or an error text (never both)."""

    value: object = None
    error: str | None = None

    def canonical(self) -> object:
        return ("error", self.error) if self.error is not None else _canonical(self.value)

    def __str__(self) -> str:
        return f"(error) {self.error}" if self.error is not None else repr(self.value)


def _canonical(value: object) -> object:
    """A comparable form that keeps RESP2 types apart (b"1" != 1, True is not 1)."""
    if isinstance(value, bytes):
        return ("bulk", value)
    if isinstance(value, int) and not isinstance(value, bool):
        return ("int", value)
    if value is None:
        return ("nil",)
    if isinstance(value, list):
        return ("array", tuple(_canonical(item) for item in value))
    return ("unexpected", type(value).__name__, repr(value))


class Side(Protocol):
    name: str

    def call(self, *args: bytes) -> Outcome: ...

    def reset(self) -> None: ...


class RedisSide:
    """A real server through redis-py (hiredis parser, RESP2, raw bytes, no reply callbacks)."""

    name = "redis"

    def __init__(self, port: int, db: int = 0) -> None:
        self.client = redis.Redis(
            host="127.0.0.1", port=port, db=db, protocol=2, decode_responses=False
        )
        self.client.response_callbacks.clear()  # keep replies exactly as the server sent them
        self._execute: Callable[..., Any] = self.client.execute_command

    def call(self, *args: bytes) -> Outcome:
        try:
            return Outcome(self._execute(*args))
        except redis.ResponseError as error:
            # redis-py splits a known error code ("ERR") off the text; put it back.
            code = getattr(error, "status_code", None)
            return Outcome(error=f"{code} {error}" if code else str(error))

    def reset(self) -> None:
        self._execute(b"FLUSHDB")

    def close(self) -> None:
        self.client.close()


class KeyspaceSide:
    """ranked's embedded keyspace; any exception but ResponseError is reported as a crash."""

    name = "keyspace"

    def __init__(self) -> None:
        from ranked import Keyspace
        from ranked.errors import ResponseError

        self._factory = Keyspace
        self._response_error = ResponseError
        self.keyspace = Keyspace()

    def call(self, *args: bytes) -> Outcome:
        try:
            return Outcome(self.keyspace.execute(*args))
        except self._response_error as error:
            return Outcome(error=str(error))
        except Exception as error:  # a crash is a mismatch to report, not a test error
            return Outcome(error=f"<crash {type(error).__name__}: {error}>")

    def reset(self) -> None:
        self.keyspace = self._factory()


# -- judging one command ---------------------------------------------------------------
def _run(side: Side, command: Command) -> Outcome:
    if command.check is Check.SCAN:
        return _scan_all(side, command.args)
    if command.check is Check.RANDMEMBER:
        return _randmember(side, command.args)
    outcome = side.call(*command.args)
    if outcome.error is not None or not isinstance(outcome.value, list):
        return outcome
    if command.check is Check.UNORDERED:
        return Outcome(sorted(outcome.value, key=repr))
    if command.check is Check.HASH:
        values = outcome.value
        return Outcome(sorted(zip(values[::2], values[1::2], strict=True), key=repr))
    return outcome


def _scan_all(side: Side, args: Sequence[bytes]) -> Outcome:
    """Follow the cursor to the end; the result is the sorted member/score pairs seen."""
    pairs: dict[bytes, bytes] = {}
    call = list(args)
    for _ in range(SCAN_MAX_CALLS):
        outcome = side.call(*call)
        if outcome.error is not None:
            return outcome
        reply = outcome.value
        if not (isinstance(reply, list) and len(reply) == 2 and isinstance(reply[1], list)):
            return Outcome(error=f"<malformed ZSCAN reply {reply!r}>")
        cursor, flat = reply
        if len(flat) % 2 or not isinstance(cursor, bytes):
            return Outcome(error=f"<malformed ZSCAN reply {reply!r}>")
        for member, score in zip(flat[::2], flat[1::2], strict=True):
            if pairs.setdefault(member, score) != score:
                return Outcome(error=f"<ZSCAN gave {member!r} two scores>")
        if cursor == b"0":
            return Outcome(sorted(pairs.items()))
        call[2] = cursor
    return Outcome(error="<ZSCAN cursor loop did not end>")


def _randmember(side: Side, args: Sequence[bytes]) -> Outcome:
    """Check a ZRANDMEMBER reply against the side's own set; equal summaries mean both
    sides kept the contract (not the same random draw)."""
    outcome = side.call(*args)
    if outcome.error is not None or outcome.value is None or outcome.value == []:
        return outcome
    dump = side.call(b"ZRANGE", args[1], b"0", b"-1", b"WITHSCORES")
    if not isinstance(dump.value, list):
        return Outcome(error=f"<ZRANGE for the check failed: {dump}>")
    scores = dict(zip(dump.value[::2], dump.value[1::2], strict=True))
    if len(args) == 2:
        ok = outcome.value in scores
        return Outcome(b"one member") if ok else Outcome(error=f"<not a member: {outcome}>")
    count = int(args[2])
    withscores = len(args) > 3
    reply = outcome.value
    if not isinstance(reply, list):
        return Outcome(error=f"<not an array: {outcome}>")
    if withscores and len(reply) % 2:
        return Outcome(error=f"<odd WITHSCORES reply: {outcome}>")
    members = reply[::2] if withscores else reply
    pairs = zip(reply[::2], reply[1::2], strict=True) if withscores else ()
    if any(scores.get(member) != score for member, score in pairs):
        return Outcome(error=f"<a score does not match the set: {outcome}>")
    expected = min(count, len(scores)) if count > 0 else -count
    problems = []
    if len(members) != expected:
        problems.append(f"{len(members)} members, expected {expected}")
    if any(member not in scores for member in members):
        problems.append("a non-member")
    if count > 0 and len(set(members)) != len(members):
        problems.append("repeats with a positive count")
    if problems:
        return Outcome(error=f"<contract broken ({', '.join(problems)}): {outcome}>")
    return Outcome([b"members", len(members), b"withscores" if withscores else b"plain"])


def _close_enough(command: Command, a: Outcome, b: Outcome) -> bool:
    if command.check is not Check.TTL:
        return False
    if not (isinstance(a.value, int) and isinstance(b.value, int)):
        return False
    if a.value < 0 or b.value < 0:
        return False
    return abs(a.value - b.value) <= TTL_TOLERANCE.get(command.args[0].upper(), 0)


def _mixed_scores(side: Side, key: bytes) -> bool:
    """True when ``key`` is a sorted set whose lowest and highest scores differ."""
    low = side.call(b"ZRANGE", key, b"0", b"0", b"WITHSCORES").value
    high = side.call(b"ZRANGE", key, b"-1", b"-1", b"WITHSCORES").value
    if not (isinstance(low, list) and isinstance(high, list) and low and high):
        return False
    return float(low[1]) != float(high[1])


def compare(command: Command, left: Side, right: Side) -> tuple[bool, Outcome, Outcome]:
    """Run ``command`` on both sides; True when the replies agree under its check.

    A lex-range command over a key with mixed scores runs on neither side: Redis leaves its
    answer undefined (the sides stay equal since neither changes).
    """
    if command.lex_key is not None and _mixed_scores(left, command.lex_key):
        TOTALS["skipped (lex range over mixed scores)"] += 1
        skipped = Outcome(b"<skipped>")
        return True, skipped, skipped
    a, b = _run(left, command), _run(right, command)
    TOTALS["commands"] += 1
    same = a.canonical() == b.canonical() or _close_enough(command, a, b)
    return same, a, b


# -- streams, mismatches and reproductions ---------------------------------------------
@dataclass
class Mismatch:
    seed: int | str
    step: int
    command: Command
    expected: Outcome
    actual: Outcome
    repro: list[Command] = field(default_factory=list)
    shrunk: bool = False
    reproducible: bool = True

    def report(self) -> str:
        lines = [f"seed {self.seed}, step {self.step}: {self.command}"]
        lines.append(f"  redis:    {self.expected}")
        lines.append(f"  keyspace: {self.actual}")
        kind = "minimal" if self.shrunk else "closure (not shrunk)"
        if not self.reproducible:
            kind += "; did NOT reproduce on fresh sides"
        lines.append(f"  repro ({kind}, {len(self.repro) + 1} commands):")
        if len(self.repro) > REPRO_SHOWN:
            lines.append(f"    ... {len(self.repro) - REPRO_SHOWN} earlier commands not shown")
        lines += [f"    {command}" for command in self.repro[-REPRO_SHOWN:]]
        lines.append(f"    {self.command}")
        return "\n".join(lines)


def _closure(history: Sequence[Command], failing: Command) -> list[Command]:
    """The earlier commands that can have shaped the state ``failing`` reads."""
    if failing.whole_keyspace:
        return [command for command in history if not command.whole_keyspace]
    needed = set(failing.keys)
    picked: list[Command] = []
    for command in reversed(history):
        if not command.whole_keyspace and needed.intersection(command.keys):
            picked.append(command)
            needed.update(command.keys)
    picked.reverse()
    return picked


class Differential:
    """Runs streams on ``redis`` and ``keyspace``; ``fresh`` makes new sides for repros."""

    def __init__(
        self,
        left: Side,
        right: Side,
        fresh_left: Side,
        fresh_right: Side,
        *,
        shrink_limit: int = 3,
    ) -> None:
        self.left, self.right = left, right
        self.fresh_left, self.fresh_right = fresh_left, fresh_right
        self.shrink_limit = shrink_limit  # per run: shrinking costs up to SHRINK_BUDGET each
        self.shrinks_left = shrink_limit
        self.budget = 0
        self.history: list[Command] = []

    def reset(self) -> None:
        for side in (self.left, self.right):
            side.reset()
        self.history.clear()

    def run(
        self, seed: int | str, commands: Iterable[Command], *, max_mismatches: int = 10
    ) -> list[Mismatch]:
        """Compare every command; after a mismatch, record it and restart both sides empty."""
        self.reset()
        self.shrinks_left = self.shrink_limit
        found: list[Mismatch] = []
        for step, command in enumerate(commands):
            agreed = self._check(seed, step, command, found)
            if agreed and step % STATE_CHECK_EVERY == STATE_CHECK_EVERY - 1:
                self._state_check(seed, step, found)
            if len(found) >= max_mismatches:
                break
        else:
            self._state_check(seed, -1, found)
        return found

    def run_stream(self, seed: int, length: int, *, big: bool) -> list[Mismatch]:
        generator = StreamGenerator(seed, big=big)
        return self.run(seed, (generator.next() for _ in range(length)))

    def _check(self, seed: int | str, step: int, command: Command, found: list[Mismatch]) -> bool:
        same, expected, actual = compare(command, self.left, self.right)
        if same:
            self.history.append(command)
            return True
        TOTALS["mismatches"] += 1
        mismatch = Mismatch(seed, step, command, expected, actual)
        mismatch.repro = _closure(self.history, command)
        if self.shrinks_left > 0:
            self.shrinks_left -= 1
            self._shrink(mismatch)
        found.append(mismatch)
        self.reset()
        return False

    def _state_check(self, seed: int | str, step: int, found: list[Mismatch]) -> bool:
        """Compare every key's type and full contents (catches silent state drift)."""
        keys_reply = self.left.call(b"KEYS", b"*").value
        keys = set(ALLKEYS) | set(keys_reply if isinstance(keys_reply, list) else [])
        for key in sorted(keys):
            if not self._check(seed, step, Command((b"TYPE", key), (key,)), found):
                return False
            kind = self.left.call(b"TYPE", key).value
            dump = {
                b"zset": Command((b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"), (key,)),
                b"set": Command((b"SMEMBERS", key), (key,), Check.UNORDERED),
                b"hash": Command((b"HGETALL", key), (key,), Check.HASH),
                b"string": Command((b"GET", key), (key,)),
            }.get(kind if isinstance(kind, bytes) else b"")
            if dump is not None and not self._check(seed, step, dump, found):
                return False
        return True

    def _reproduces(self, prefix: Sequence[Command], failing: Command) -> bool:
        for side in (self.fresh_left, self.fresh_right):
            side.reset()
        for command in prefix:
            self.fresh_left.call(*command.args)
            self.fresh_right.call(*command.args)
        self.budget -= len(prefix) + 1
        same, _, _ = compare(failing, self.fresh_left, self.fresh_right)
        TOTALS["commands"] -= 1  # shrinking trials are not part of the comparison totals
        return not same

    def _shrink(self, mismatch: Mismatch) -> None:
        """Delta-debugging by chunks: drop runs of commands while the mismatch persists."""
        self.budget = SHRINK_BUDGET
        commands = mismatch.repro
        if not self._reproduces(commands, mismatch.command):
            mismatch.reproducible = False
            return
        chunk = max(1, len(commands) // 2)
        while commands:
            start = 0
            while start < len(commands) and self.budget > 0:
                trial = commands[:start] + commands[start + chunk :]
                if self._reproduces(trial, mismatch.command):
                    commands = trial
                else:
                    start += chunk
            if chunk == 1 or self.budget <= 0:
                break
            chunk //= 2
        mismatch.repro = commands
        mismatch.shrunk = self.budget > 0
