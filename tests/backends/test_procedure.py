"""A feature's procedure, bound with its script's own arguments (``Operation.raw``), gives one
answer on memory, redis and cluster."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ranked.backends.procedure import Operation, Procedure
from ranked.engine.keyspace import Keyspace
from ranked.errors import CrossSlotError

from .conftest import AsyncRunner, Case, Steps

COUNTER = b"{toy}:hits"

SCRIPT = """
local now = instant_us(ARGV[1])
return {redis.call('INCRBY', KEYS[1], ARGV[2]), now}
"""


def _count(keyspace: Keyspace, now_us: int, keys: Sequence[bytes], args: Sequence[Any]) -> Any:
    return [keyspace.execute("INCRBY", keys[0], args[0]), now_us]


def _decode(reply: Any) -> tuple[int, int]:
    return int(reply[0]), int(reply[1])


def run(
    backend: Any,
    procedure: Procedure[Any],
    keys: Sequence[bytes],
    args: Sequence[Any],
    now_us: int | None = None,
) -> Any:
    """The procedure run once on ``backend`` with its script's own keys and arguments."""
    return backend.bind(Operation.raw(procedure))(keys, args, now_us)


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Procedure[tuple[int, int]]:
    package = tmp_path / "toy_feature"
    (package / "lua").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "lua" / "count.lua").write_text(SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    return Procedure("toy_feature", "count", _count, _decode)


def test_run_gives_the_same_reply_everywhere(
    backend: Steps, toy: Procedure[tuple[int, int]]
) -> None:
    assert run(backend, toy, [COUNTER], [5], now_us=1_700_000_000_123_456) == (
        5,
        1_700_000_000_123_456,
    )
    assert run(backend, toy, [COUNTER], [2], now_us=7)[0] == 7


def test_run_without_an_instant_uses_the_backend_clock(
    backend: Steps, toy: Procedure[tuple[int, int]]
) -> None:
    before = time.time() * 1e6
    _, now_us = run(backend, toy, [COUNTER], [1])
    assert abs(now_us - before) < 5e6  # local clock and the loopback server's agree


def test_cluster_refuses_keys_of_two_slots(case: Case, toy: Procedure[tuple[int, int]]) -> None:
    if case.kind != "cluster":
        run(case.backend, toy, [b"{a}x", b"{b}y"], [1])
        return
    with pytest.raises(CrossSlotError):
        run(case.backend, toy, [b"{a}x", b"{b}y"], [1])


def _toy_operation(toy: Procedure[tuple[int, int]]) -> Operation[tuple[int, int]]:
    """The toy step as a feature binds it: ``(key name, amount) -> (count, instant)``."""

    def encode(name: str, amount: int) -> tuple[list[bytes], list[int], int]:
        return [b"{toy}:" + name.encode()], [amount], 1_700_000_000_000_000

    return Operation(toy, encode)


def test_bind_runs_the_operation_with_its_own_arguments(
    backend: Steps, toy: Procedure[tuple[int, int]]
) -> None:
    count = backend.bind(_toy_operation(toy))
    assert count("hits", 5) == (5, 1_700_000_000_000_000)
    assert count("hits", 2) == (7, 1_700_000_000_000_000)
    assert run(backend, toy, [COUNTER], [1], now_us=1)[0] == 8  # the same key as run's


def test_bind_on_the_asyncio_backends(
    async_backend: AsyncRunner, toy: Procedure[tuple[int, int]]
) -> None:
    counts: list[int] = []

    async def scenario(backend: Steps) -> None:
        count = backend.bind(_toy_operation(toy))
        counts.extend([(await count("hits", 3))[0], (await count("hits", 4))[0]])

    async_backend.run(scenario)
    assert counts == [3, 7]


def test_memory_prefers_a_registered_native_implementation(
    toy: Procedure[tuple[int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory backend asks the native registry for ``procedure.native`` and uses what it
    returns; a factory answering None (parameters it does not handle) leaves the reference."""
    from ranked.backends import memory as memory_module
    from ranked.backends.memory import MemoryBackend

    calls: list[tuple[Any, ...]] = []

    def factory(keyspace: Keyspace, lock: Any, operation: Operation[Any]) -> Any:
        if operation.native_args.get("decline"):
            return None

        def native_call(*args: Any) -> Any:
            calls.append(args)
            return ("native", operation.native_args["tag"])

        return native_call

    monkeypatch.setattr(memory_module, "native_factory", lambda name: factory if name else None)
    native = Procedure(toy.script.name.split(":")[0], "count", _count, _decode, native="toy")
    backend = MemoryBackend()
    encode = _toy_operation(toy).encode
    answer: Any = backend.bind(Operation(native, encode, {"tag": 1}))("hits", 5)
    assert answer == ("native", 1)
    assert calls == [("hits", 5)]
    declined = backend.bind(Operation(native, encode, {"decline": True}))
    assert declined("hits", 5) == (5, 1_700_000_000_000_000)
