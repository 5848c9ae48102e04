"""``backend.run``: a feature's procedure gives one answer on memory, redis and cluster."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ranked.backends.base import Backend
from ranked.backends.procedure import Procedure
from ranked.engine.keyspace import Keyspace

from .conftest import Case

COUNTER = b"{toy}:hits"

SCRIPT = """
local now = instant_us(ARGV[1])
return {redis.call('INCRBY', KEYS[1], ARGV[2]), now}
"""


def _count(keyspace: Keyspace, now_us: int, keys: Sequence[bytes], args: Sequence[Any]) -> Any:
    return [keyspace.execute("INCRBY", keys[0], args[0]), now_us]


def _decode(reply: Any) -> tuple[int, int]:
    return int(reply[0]), int(reply[1])


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Procedure[tuple[int, int]]:
    package = tmp_path / "toy_feature"
    (package / "lua").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "lua" / "count.lua").write_text(SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    return Procedure("toy_feature", "count", _count, _decode)


def test_run_gives_the_same_reply_everywhere(
    backend: Backend, toy: Procedure[tuple[int, int]]
) -> None:
    assert backend.run(toy, [COUNTER], [5], now_us=1_700_000_000_123_456) == (
        5,
        1_700_000_000_123_456,
    )
    assert backend.run(toy, [COUNTER], [2], now_us=7)[0] == 7


def test_run_without_an_instant_uses_the_backend_clock(
    backend: Backend, toy: Procedure[tuple[int, int]]
) -> None:
    before = time.time() * 1e6
    _, now_us = backend.run(toy, [COUNTER], [1])
    assert abs(now_us - before) < 5e6  # local clock and the loopback server's agree


def test_cluster_refuses_keys_of_two_slots(case: Case, toy: Procedure[tuple[int, int]]) -> None:
    if case.kind != "cluster":
        case.backend.run(toy, [b"{a}x", b"{b}y"], [1])
        return
    from ranked.backends.cluster import CrossSlotError

    with pytest.raises(CrossSlotError):
        case.backend.run(toy, [b"{a}x", b"{b}y"], [1])
