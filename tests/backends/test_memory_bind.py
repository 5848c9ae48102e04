"""Memory backend only: what ``bind`` hands back for a step's Python reference (no native
implementation): the reference on the keyspace under the store's lock, of the reference's
own arity when it has a fixed one, a write taking the handle's share of the active expiry;
the asyncio twin in one coroutine without the C engine. An operation's ``direct`` runs in
place of its encoding, script twin and decoding."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from typing import Any

import pytest

from ranked.backends import memory as memory_module
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.backends.native import HOUSEKEEPING_DELETES, HOUSEKEEPING_EVERY
from ranked.backends.procedure import Call, Operation, Procedure, Step, answer
from ranked.engine.keyspace import Keyspace
from ranked.engine.zset import IMPLEMENTATION


def _call(*args: Any) -> Call[Any]:
    return answer(None)


def _locked_step(backend: MemoryBackend, writes: bool = True) -> tuple[Step[Any], list[Any]]:
    """A step whose reference records its arguments and whether the lock was held."""
    seen: list[Any] = []

    def reference(keyspace: Keyspace, member: bytes, score: float) -> tuple[bytes, float]:
        seen.append((keyspace is backend.keyspace, backend.lock.locked(), member, score))
        return member, score

    return Step(_call, reference, writes=writes), seen


@pytest.mark.parametrize("writes", [True, False])
def test_the_reference_runs_under_the_lock_with_the_call_arguments(writes: bool) -> None:
    backend = MemoryBackend()
    step, seen = _locked_step(backend, writes)
    bound = backend.bind(step)
    assert bound(b"m", 2.0) == (b"m", 2.0)
    assert seen == [(True, True, b"m", 2.0)]
    assert not backend.lock.locked()
    if IMPLEMENTATION == "c":
        assert type(bound).__name__ == "Locked"  # the lock and the call in C
    else:
        assert list(inspect.signature(bound).parameters) == ["a0", "a1"]  # no *args to forward
    with pytest.raises(TypeError):
        bound(b"m")  # the reference's arity


def test_an_exception_releases_the_lock() -> None:
    def reference(keyspace: Keyspace, value: int) -> int:
        raise KeyError(value)

    backend = MemoryBackend()
    bound = backend.bind(Step(_call, reference))
    with pytest.raises(KeyError):
        bound(1)
    assert not backend.lock.locked()


def test_references_of_no_fixed_arity_take_their_arguments_as_given() -> None:
    def defaults(keyspace: Keyspace, a: int, b: int = 2) -> tuple[int, int]:
        return a, b

    def star(keyspace: Keyspace, *args: int) -> tuple[int, ...]:
        return args

    class Method:
        def __call__(self, keyspace: Keyspace, a: int) -> int:
            return a

    backend = MemoryBackend()
    assert backend.bind(Step(_call, defaults))(1) == (1, 2)
    assert backend.bind(Step(_call, defaults))(1, 3) == (1, 3)
    assert backend.bind(Step(_call, star))(1, 2, 3) == (1, 2, 3)
    assert backend.bind(Step(_call, star))() == ()
    assert backend.bind(Step(_call, Method()))(4) == 4
    assert memory_module._arity(defaults) is None
    assert memory_module._arity(star) is None
    assert memory_module._arity(Method()) is None


def test_writes_take_the_handles_share_of_the_active_expiry() -> None:
    now = [1000.0]
    backend = MemoryBackend(clock=lambda: now[0])
    keyspace = backend.keyspace
    for n in range(2 * HOUSEKEEPING_DELETES):
        keyspace.execute("SET", f"gone{n}", "x", "PX", 10)
    now[0] += 1
    write = backend.bind(Step(_call, lambda ks, value: value))
    read = backend.bind(Step(_call, lambda ks, value: value, writes=False))
    for _ in range(3 * HOUSEKEEPING_EVERY):
        read(0)  # reads take no share
    for _ in range(HOUSEKEEPING_EVERY - 1):
        write(0)
    assert len(keyspace.raw_values) == 2 * HOUSEKEEPING_DELETES
    write(0)  # the handle's 32nd write
    assert len(keyspace.raw_values) == HOUSEKEEPING_DELETES
    other = backend.bind(Step(_call, lambda ks, a, b: a))
    for _ in range(HOUSEKEEPING_EVERY):
        other(0, 0)  # every step bound on the handle counts towards the same share
    assert len(keyspace.raw_values) == 0


def test_a_direct_operation_runs_in_place_of_encode_twin_and_decode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memory_module, "native_factory", lambda name: None)

    def twin(keyspace: Keyspace, now: int, keys: Sequence[bytes], args: Sequence[Any]) -> Any:
        raise AssertionError("the twin must not run")

    def encode(*args: Any) -> Any:
        raise AssertionError("nothing is encoded")

    def direct(keyspace: Keyspace, name: str, amount: int) -> tuple[str, int, bool]:
        return name, amount, backend.lock.locked()

    procedure = Procedure.__new__(Procedure)  # no script file: memory never reads it
    procedure.local, procedure.decode, procedure.native = twin, lambda reply: reply, None
    backend = MemoryBackend()
    bound = backend.bind(Operation(procedure, encode, direct=direct))
    assert bound("a", 3) == ("a", 3, True)
    assert not backend.lock.locked()


def test_the_asyncio_twin_awaits_the_same_call() -> None:
    backend = AsyncMemoryBackend()
    step, seen = _locked_step(backend.sync)
    bound = backend.bind(step)

    async def main() -> Any:
        return await bound(b"m", 1.5)

    assert asyncio.run(main()) == (b"m", 1.5)
    assert seen == [(True, True, b"m", 1.5)]
    assert not backend.sync.lock.locked()


def test_without_the_c_engine_the_asyncio_twin_is_one_coroutine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memory_module, "IMPLEMENTATION", "python")
    backend = AsyncMemoryBackend()
    step, seen = _locked_step(backend.sync)
    bound = backend.bind(step)
    assert inspect.iscoroutinefunction(bound)  # the lock and the reference inside it

    async def main() -> Any:
        return await bound(b"m", 1.5)

    assert asyncio.run(main()) == (b"m", 1.5)
    assert seen == [(True, True, b"m", 1.5)]
