"""``AwaitNow``: the asyncio memory backend's bound calls, awaitable without a coroutine.

A call runs at once; awaiting what it returns gives the result, or raises the call's
exception at the await, as ``async def`` would. Without the C engine ``awaitable`` wraps the
call in ``async def``: both are checked here.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from ranked.backends import native
from ranked.engine.zset import IMPLEMENTATION


def pair(x: object, y: object = 1) -> tuple[object, object]:
    return (x, y)


def fail() -> None:
    raise KeyError("k")


@pytest.fixture(params=["native", "coroutine"])
def make(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    if request.param == "native" and IMPLEMENTATION != "c":
        pytest.skip("AwaitNow needs the C engine")
    if request.param == "coroutine":
        monkeypatch.setattr(native, "IMPLEMENTATION", "python")
    return native.awaitable


def run(awaitable: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await awaitable

    return asyncio.run(main())


def test_the_result_comes_back_at_the_await(make: Any) -> None:
    call: Callable[..., Awaitable[Any]] = make(pair)
    assert run(call(1, y=2)) == (1, 2)
    assert run(make(lambda: None)()) is None
    exception = ValueError("a value, not raised")
    assert run(make(lambda: exception)()) is exception  # not raised, not unpacked
    assert run(make(lambda: ())()) == ()


def test_the_exception_is_raised_at_the_await(make: Any) -> None:
    with pytest.raises(KeyError, match="k"):
        run(make(fail)())


def test_gather_takes_them(make: Any) -> None:
    async def main() -> list[Any]:
        return list(await asyncio.gather(make(pair)(1), make(pair)(2, 3)))

    assert asyncio.run(main()) == [(1, 1), (2, 3)]


@pytest.mark.skipif(IMPLEMENTATION != "c", reason="AwaitNow needs the C engine")
def test_native_refuses_what_is_not_callable_and_holds_its_callable() -> None:
    from ranked.backends.native._native import AwaitNow

    with pytest.raises(TypeError, match="callable"):
        AwaitNow(3)  # type: ignore[arg-type]
    holder: list[Any] = []

    def drops_itself() -> str:
        holder.clear()  # the last reference to the AwaitNow and to this function
        gc.collect()
        return "done"

    holder.append(AwaitNow(drops_itself))
    assert run(holder[0]()) == "done"


@pytest.mark.skipif(IMPLEMENTATION != "c", reason="AwaitNow needs the C engine")
def test_native_leaks_nothing() -> None:
    from ranked.backends.native._native import AwaitNow

    value = object()
    before = sys.getrefcount(value)
    call = AwaitNow(lambda: value)
    for _ in range(1000):
        run(call())
        with pytest.raises(KeyError):
            run(AwaitNow(fail)())
        call()  # never awaited: the result waits in the spare Ready until the next call
    # the closure's cell, and the last result never awaited, at most
    assert sys.getrefcount(value) <= before + 2
    del call
    assert sys.getrefcount(value) == before


@pytest.mark.skipif(IMPLEMENTATION != "c", reason="AwaitNow needs the C engine")
def test_a_ready_is_reused_only_when_nobody_else_holds_it() -> None:
    from ranked.backends.native._native import AwaitNow

    call = AwaitNow(lambda x: x)
    kept = call(1)  # held here: the next call must not refill it
    second = call(2)
    assert kept is not second
    assert run(kept) == 1 and run(second) == 2
    del kept, second
    first = call(3)
    assert run(first) == 3
    address = id(first)
    del first
    assert id(call(4)) == address  # nobody held it: filled again, no new object


@pytest.mark.skipif(IMPLEMENTATION != "c", reason="AwaitNow needs the C engine")
def test_a_coroutine_result_is_handed_over_to_be_awaited() -> None:
    from ranked.backends.native._native import AwaitNow

    async def waits(x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    call = AwaitNow(waits)
    pending = call(41)
    assert asyncio.iscoroutine(pending)
    assert asyncio.run(pending) == 42
