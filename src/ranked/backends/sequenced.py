"""Sequenced steps: a write step that also records, atomically with its effect, which
event of a journal it applies, so replaying a journal applies each event exactly once and
in order.

``sequenced(step)`` is a step whose call arguments are ``(seq_key, after, last, *step's
own)``: it applies the events numbered ``after + 1`` to ``last`` (one, or a batch applied
atomically as a whole). ``seq_key`` holds the number of the last event applied (an
integer string; absent: 0). The step runs only when that number is ``after``, and then
sets it to ``last`` in the same atomic step (on Redis inside the same Lua script).
Otherwise it changes nothing and answers:

- :data:`APPLIED` when the number is ``last`` or more (the events are already in the
  index: a replay after a crash, or another process applied them);
- :class:`Gap` when it is below ``after`` (earlier events are missing: apply them first).

A step that fails (a typed error, WRONGTYPE) records nothing: its event is not applied.
:data:`RECORD_SEQ` is the same check and record with no effect of its own, for operations
made of several idempotent steps (run them, then record); :data:`READ_SEQ` reads the
number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from ..engine.commands.common import WRONGTYPE
from ..engine.keyspace import Keyspace
from ..errors import ResponseError
from ._scripts import Arg, Script
from .procedure import Bindable, Call, Step

__all__ = ["APPLIED", "READ_SEQ", "RECORD_SEQ", "Applied", "Gap", "sequenced"]

T = TypeVar("T")


class Applied:
    """The answer of a sequenced step whose event the index already holds."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "APPLIED"


APPLIED: Final = Applied()


@dataclass(frozen=True, slots=True)
class Gap:
    """The answer of a sequenced step when events before it are missing: ``applied`` is
    the last one the index holds."""

    applied: int


_APPLIED_REPLY: Final = b"RANKED_APPLIED"
_GAP_REPLY: Final = b"RANKED_GAP "

# The wrapper around a step's script: its whole text becomes a function of its own KEYS
# and ARGV (the last key, the sequence key, and the last two arguments, after and last,
# taken off), run only when the index holds event ``after``. An error reply records
# nothing.
_PRELUDE: Final = b"local function __ranked_step(KEYS, ARGV)\n"
_WRAPPER: Final = b"""
end
local nkeys, nargs = #KEYS, #ARGV
local after, last = tonumber(ARGV[nargs - 1]), tonumber(ARGV[nargs])
local applied = tonumber(redis.call('GET', KEYS[nkeys]) or '0')
if applied >= last then
  return redis.status_reply('RANKED_APPLIED')
end
if applied ~= after then
  return redis.status_reply('RANKED_GAP ' .. string.format('%d', applied))
end
local keys, args = {}, {}
for i = 1, nkeys - 1 do keys[i] = KEYS[i] end
for i = 1, nargs - 2 do args[i] = ARGV[i] end
local reply = __ranked_step(keys, args)
if type(reply) == 'table' and reply.err then
  return reply
end
redis.call('SET', KEYS[nkeys], ARGV[nargs])
return reply
"""

_COMMAND: Final = b"return redis.call(unpack(ARGV))\n"
"""A plain command as a script body (its arguments in ARGV, its keys declared)."""

_wrapped: dict[str, Script] = {}


def _sequenced_script(inner: Script | None) -> Script:
    """``inner`` (None: a plain command) wrapped by the sequence check, built once."""
    name = "command" if inner is None else inner.name
    found = _wrapped.get(name)
    if found is None:
        body = _COMMAND if inner is None else inner.source
        found = Script(f"sequenced:{name}", _PRELUDE + body + _WRAPPER)
        _wrapped[name] = found
    return found


def _answer(decode: Any) -> Any:
    def read(reply: Any) -> Any:
        if isinstance(reply, bytes | str):
            text = reply.encode() if isinstance(reply, str) else reply
            if text == _APPLIED_REPLY:
                return APPLIED
            if text.startswith(_GAP_REPLY):
                return Gap(int(text[len(_GAP_REPLY) :]))
        return decode(reply)

    return read


def applied_seq(keyspace: Keyspace, seq_key: bytes) -> int:
    """The number ``seq_key`` holds (0 when absent); WRONGTYPE when it holds no string."""
    raw = keyspace.get(seq_key)
    if raw is None:
        return 0
    if not isinstance(raw, bytes):
        raise ResponseError(WRONGTYPE)
    return int(raw)


def _check(keyspace: Keyspace, seq_key: bytes, after: int, last: int) -> Applied | Gap | None:
    applied = applied_seq(keyspace, seq_key)
    if applied >= last:
        return APPLIED
    if applied != after:
        return Gap(applied)
    return None


def sequenced(step: Bindable[T]) -> Step[T | Applied | Gap]:
    """``step`` run only when ``seq_key`` holds ``after``, recording ``last`` atomically
    with its effect (see the module docstring). Call arguments: ``(seq_key, after, last,
    *the step's own)``. O(the step) plus O(1)."""
    inner_reference = step.reference

    def call(seq_key: bytes, after: int, last: int, *args: Any) -> Call[T | Applied | Gap]:
        inner = step.call(*args)
        arguments: Sequence[Arg] = inner.args
        return Call(
            _sequenced_script(inner.script),
            (*inner.keys, seq_key),
            (*arguments, after, last),
            _answer(inner.decode),
        )

    def reference(keyspace: Keyspace, seq_key: bytes, after: int, last: int, *args: Any) -> Any:
        skip = _check(keyspace, seq_key, after, last)
        if skip is not None:
            return skip
        result = inner_reference(keyspace, *args)
        keyspace.store(seq_key, b"%d" % last)
        return result

    return Step(call, reference, writes=True)


_NOTHING: Final = Script("record", b"return 0\n")


def _record_call(seq_key: bytes, after: int, last: int) -> Call[Applied | Gap | None]:
    return Call(
        _sequenced_script(_NOTHING), (seq_key,), (after, last), _answer(lambda _reply: None)
    )


def _record(keyspace: Keyspace, seq_key: bytes, after: int, last: int) -> Applied | Gap | None:
    skip = _check(keyspace, seq_key, after, last)
    if skip is None:
        keyspace.store(seq_key, b"%d" % last)
    return skip


RECORD_SEQ: Final = Step(_record_call, _record)
"""``(seq_key, after, last) -> None | APPLIED | Gap``: record ``last`` when the index holds
``after``. Redis: one script (GET, SET)."""


def _read_call(seq_key: bytes) -> Call[int]:
    return Call(None, (seq_key,), ["GET", seq_key], lambda reply: int(reply or 0))


def _read(keyspace: Keyspace, seq_key: bytes) -> int:
    return applied_seq(keyspace, seq_key)


READ_SEQ: Final = Step(_read_call, _read, writes=False)
"""``(seq_key) -> the last applied sequence number`` (0: none). Redis: GET."""
