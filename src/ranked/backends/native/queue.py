"""The memory backend's queue steps (registered as ``queue``): the C lane and the waits.

``memory://`` binds every queue operation whose procedure is marked ``native="queue"``
through :func:`factory`, with the operation's ``native_args``:

- ``step``: ``push``, ``push_many``, ``pop``, ``pop_with_priority``, ``pop_many``,
  ``reserve``, ``nack`` or ``dead``;
- ``keys``: the queue's ready, seq, delayed, leases and attempts keys;
- ``text``: items come back as ``str``; ``track``: the queue keeps push instants
  (``max_age``), which the C lane leaves to the reference;
- ``waits``: how a blocking step's caller waits, ``"thread"`` or ``"task"`` (asyncio);
  ``poll_cap``: how often a waiter looks again for what signals nobody;
  ``max_timeout``: the longest timeout the operation's ``encode`` accepts.

What it hands back, the operation's reference being its ``encode`` and then its
procedure's Python reference under the backend's lock:

- ``push``: a C :class:`QueueLane`: a push visible now straight on the ready set's core,
  one C call; any other call or key state goes to the reference, then the waiters wake;
- ``pop`` / ``pop_with_priority``: a C lane popping the head when nothing needs
  settling (with or without a timeout); anything else, a timeout with nothing ready
  included, goes to the waiting reference;
- ``push_many`` / ``pop_many``: C lanes for a batch visible now / a batch of heads when
  nothing needs settling (under the lock), else the reference;
- ``reserve``: the waiting reference (a blocking reserve waits for a write);
- ``nack``, ``dead``: the reference.

After a write that may make items ready (``push``, ``push_many``, ``nack``, ``dead``)
the queue's waiters wake.

For asyncio (``waits="task"``) a blocking step that must wait returns a coroutine
awaiting a future a write resolves, instead of sleeping in the thread: the asyncio memory
backend's ``AwaitNow`` passes a coroutine result through to be awaited, and an answer
found at once (by the lane or by the first try) comes back without one.

A lane also offers ``method``: the same step taking the queue method's own signature,
which the queue installs as that method (one C call, no Python frame; a synchronous
queue only: the asyncio backend's ``AwaitNow`` around a lane offers none). Nothing here
imports the queue: the lane reads keys and flags from ``native_args`` and falls back on
the operation's own reference.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

from ...engine.keyspace import Keyspace
from ..procedure import Operation
from ._native import QueueLane
from ._queue_wakeup import Wakeup, notify_after, wakeup_of

__all__ = ["LANES", "factory", "reference"]

LANES: Final = {"push": 0, "pop": 1, "pop_with_priority": 2, "push_many": 3, "pop_many": 4}
"""The steps done by a C lane, and the lane's kind for each (queue_lane.c)."""
_WAITING: Final = ("pop", "pop_with_priority", "reserve")
"""Steps that wait for a write when given a timeout (their first argument)."""
_WAKING: Final = ("push", "push_many", "nack", "dead")
"""Steps after which the queue's waiters wake (items may have become ready)."""


def reference(
    keyspace: Keyspace, lock: threading.Lock, operation: Operation[Any]
) -> Callable[..., Any]:
    """The operation's reference: ``encode``, then the procedure's Python twin under the
    lock, at the call's instant or the keyspace's clock. Atomic: one hold of the lock."""
    procedure, encode = operation.procedure, operation.encode
    local, decode, clock = procedure.local, procedure.decode, keyspace.now_us

    def run(*args: Any) -> Any:
        keys, arguments, now_us = encode(*args)
        with lock:
            return decode(local(keyspace, clock() if now_us is None else now_us, keys, arguments))

    return run


def _attempts(keyspace: Keyspace, operation: Operation[Any]) -> Callable[..., Callable[[], Any]]:
    """``(timeout, *rest) -> attempt``: the call encoded once (checking its arguments),
    and a try of the step to run under the lock as often as a wait needs."""
    procedure, encode = operation.procedure, operation.encode
    local, decode, clock = procedure.local, procedure.decode, keyspace.now_us

    def attempts(*args: Any) -> Callable[[], Any]:
        keys, arguments, now_us = encode(*args)
        return lambda: decode(
            local(keyspace, clock() if now_us is None else now_us, keys, arguments)
        )

    return attempts


def waiting(
    keyspace: Keyspace, lock: threading.Lock, operation: Operation[Any], wakeup: Wakeup, cap: float
) -> Callable[..., Any]:
    """A blocking step, ``(timeout, *rest)``: one try under the lock, or with a timeout,
    tries until one answers (not None) or the timeout passes, sleeping on ``wakeup``
    between them (in the calling thread)."""
    procedure, encode = operation.procedure, operation.encode
    local, decode, clock = procedure.local, procedure.decode, keyspace.now_us

    def run(timeout: float | None, *rest: Any) -> Any:
        keys, arguments, now_us = encode(timeout, *rest)
        if not timeout:
            with lock:
                now = clock() if now_us is None else now_us
                return decode(local(keyspace, now, keys, arguments))

        def attempt() -> Any:
            now = clock() if now_us is None else now_us
            return decode(local(keyspace, now, keys, arguments))

        return wakeup.wait(attempt, timeout, cap)

    return run


def waiting_task(
    keyspace: Keyspace, lock: threading.Lock, operation: Operation[Any], wakeup: Wakeup, cap: float
) -> Callable[..., Any]:
    """:func:`waiting` for an asyncio task, ``(timeout, *rest)``: one try under the lock
    answers at once; when it found nothing and there is a timeout, the wait is handed back
    as a coroutine awaiting the wake-up (the asyncio memory backend's ``AwaitNow`` passes
    it through, so the awaiting task waits; a try that answers makes no coroutine)."""
    attempts = _attempts(keyspace, operation)

    def run(timeout: float | None, *rest: Any) -> Any:
        attempt = attempts(timeout, *rest)
        with lock:
            answer = attempt()
        if answer is not None or not timeout:
            return answer
        return wakeup.wait_async(attempt, timeout, cap)

    return run


def factory(
    keyspace: Keyspace, lock: threading.Lock, operation: Operation[Any]
) -> Callable[..., Any] | None:
    """The memory backend's callable for a queue step (see the module text)."""
    args = operation.native_args
    step: str = args["step"]
    keys: tuple[bytes, ...] = args["keys"]
    wakeup = wakeup_of(keyspace, lock, keys[0])
    # The lane reads the keyspace's own tables: a plain Keyspace, no max_age bookkeeping.
    lane = LANES.get(step) if type(keyspace) is Keyspace and not args["track"] else None
    if step in _WAITING:
        # For a task the fallback is a coroutine function: a lane over it answers an
        # item ready now at once and hands a wait over as a coroutine (the asyncio
        # backend's AwaitNow passes a coroutine result through, to be awaited).
        wait = waiting_task if args["waits"] == "task" else waiting
        fallback = wait(keyspace, lock, operation, wakeup, args["poll_cap"])
    elif step in _WAKING:
        fallback = notify_after(reference(keyspace, lock, operation), wakeup, lock)
    else:
        fallback = reference(keyspace, lock, operation)
    if lane is None:
        return fallback
    text, max_timeout = bool(args["text"]), float(args["max_timeout"])
    native: Callable[..., Any] = QueueLane(
        lane, keyspace, lock, wakeup, keys, text, fallback, max_timeout
    )
    return native
