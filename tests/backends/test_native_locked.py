"""``Locked``: the memory backend's native wrapper running a step's reference under the
store's lock (C engine only)."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from ranked.engine.zset import IMPLEMENTATION

pytestmark = pytest.mark.skipif(IMPLEMENTATION != "c", reason="Locked is C")


def make(func: Any, every: int = 0, expire: Any = None) -> tuple[Any, threading.Lock]:
    from ranked.backends.native._native import Locked

    lock = threading.Lock()
    return Locked(func, "ks", lock, every, expire), lock


def test_the_reference_runs_holding_the_lock_with_the_keyspace_first() -> None:
    seen: list[Any] = []

    def reference(keyspace: str, *args: Any, **kwargs: Any) -> str:
        seen.append((keyspace, args, kwargs, lock.locked()))
        return "done"

    call, lock = make(reference)
    assert call(1, 2, x=3) == "done"
    many = tuple(range(20))  # more arguments than the stack buffer holds
    assert call(*many) == "done"
    assert seen == [("ks", (1, 2), {"x": 3}, True), ("ks", many, {}, True)]
    assert not lock.locked()


def test_an_exception_passes_through_and_the_lock_is_released() -> None:
    def reference(keyspace: str) -> None:
        raise KeyError("gone")

    call, lock = make(reference)
    with pytest.raises(KeyError, match="gone"):
        call()
    assert not lock.locked()


def test_housekeeping_runs_every_nth_call_before_the_reference() -> None:
    order: list[str] = []
    call, _ = make(lambda ks: order.append("step"), 3, lambda: order.append("expire"))
    for _ in range(7):
        call()
    assert order == ["step", "step", "expire", "step", "step", "step", "expire", "step", "step"]
    reads, _ = make(lambda ks: order.append("read"), 0, None)
    reads()
    assert order[-1] == "read"


def test_a_failing_housekeeping_releases_the_lock_and_skips_the_step() -> None:
    def expire() -> None:
        raise RuntimeError("expiry failed")

    steps: list[int] = []
    call, lock = make(lambda ks: steps.append(1), 1, expire)
    with pytest.raises(RuntimeError, match="expiry failed"):
        call()
    assert steps == [] and not lock.locked()


def test_bad_arguments_are_refused() -> None:
    from ranked.backends.native._native import Locked

    with pytest.raises(TypeError):
        Locked(42, "ks", threading.Lock(), 0, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Locked(print, "ks", threading.Lock(), -1, None)
    with pytest.raises(AttributeError):
        Locked(print, "ks", object(), 0, None)


def test_nothing_leaks() -> None:
    value = object()
    before = sys.getrefcount(value)
    call, _ = make(lambda ks, x: x)
    for _ in range(1000):
        assert call(value) is value
    assert sys.getrefcount(value) == before
