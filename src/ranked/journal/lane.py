"""The SQLite journal's native lane: durable one-member submissions with no Python between
the caller and the disk (``_lane.c``, ``write_gate.c``).

What it is for: a durable submission through the store's committer costs tens of
microseconds of Python per event (the event's objects, the hand-off, the committer's
records), all under the GIL, so the writers and the committer take turns rather than run
side by side. The lane takes a plain board's one-member submission (no idempotency key,
no instant, no tie value) as one C call, writes it from a thread of its own that holds no
GIL (its own SQLite connection, one transaction per round, the store's statements), and
applies it through the board's native one-call writer once it is durable: on the event
loop for an asyncio board, by the waiting threads for a blocking one. Anything it does not
take goes through the store's committer as before.

Guarantees are the store's: an event is numbered ``max(seq) + 1`` and its board's
``max(board_seq) + 1`` inside a ``BEGIN IMMEDIATE`` transaction (the lane and the
committer write the file one transaction at a time, taking turns at its write gate, so
numbers never repeat); a submission
is acknowledged as the durability mode says (``always`` and ``none`` after the commit,
``batch`` after the insert, committed at least every ``max_delay_ms``); it is applied to
the index after it is written and in commit order, and an event the native writer does not
apply goes to the board's general path with its numbers (:mod:`ranked.leaderboard
._journal_lane`). The lane keeps the member index's runs as the committer does.

Available when the native module was built and uses the very SQLite library Python's
``sqlite3`` uses (two copies of SQLite in one process would not see each other's file
locks); otherwise :meth:`~ranked.journal.sqlite.SQLiteJournal.native_lane` is None.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import functools
import os
import weakref
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

__all__ = ["GATE_TIMEOUT_MS", "NativeLane", "lane_available", "new_gate"]

_lane: ModuleType | None
try:
    from . import _lane
except ImportError:  # built without SQLite's headers
    _lane = None

if TYPE_CHECKING:
    from ._lane import Lane, WriteGate

_FILE_NAME: Final = "__file__"

GATE_TIMEOUT_MS: Final = 120_000
"""How long a writer waits for the file's write gate (the longest ``batch`` transaction,
60 s, and then some) before its round fails."""


@functools.cache
def lane_available() -> bool:
    """Whether the native lane can run here: built, and on the SQLite library Python's
    ``sqlite3`` module uses (compared by the address of one of its functions)."""
    if _lane is None:
        return False
    import _sqlite3

    try:
        library = ctypes.CDLL(getattr(_sqlite3, _FILE_NAME))
        address = ctypes.cast(library.sqlite3_libversion, ctypes.c_void_p).value
    except (AttributeError, OSError):  # built into the interpreter, or not a library
        return False
    return bool(address == _lane.sqlite_address())


_OPEN: weakref.WeakSet[NativeLane] = weakref.WeakSet()
"""The lanes not closed yet: closed at exit, while the interpreter still runs threads (what
they hold is written and committed first)."""


@atexit.register
def _close_open_lanes() -> None:
    for lane in list(_OPEN):
        lane.close()


def _forget_lanes_in_child() -> None:
    """After a fork, in the child: the lanes' threads did not come along; their copies
    take nothing and close nothing (the parent's lanes go on in the parent)."""
    for lane in list(_OPEN):
        lane.forget_after_fork()
    _OPEN.clear()


os.register_at_fork(after_in_child=_forget_lanes_in_child)


def new_gate() -> WriteGate | None:
    """A write gate for a journal file (``_lane.c``'s ``write_gate.c``): the store's
    committer and the lane take turns at it, and it holds the store's failure; None
    without the native module."""
    return None if _lane is None else _lane.WriteGate()


class NativeLane:
    """One store's lane (its thread and connection): bound to one event loop at a time for
    asyncio submissions; blocking submissions wait on the lane's thread."""

    def __init__(self, **options: Any) -> None:
        assert _lane is not None
        self._lane: Lane = _lane.Lane(**options)
        self._fd: int = self._lane.fileno()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        _OPEN.add(self)

    @property
    def blocking(self) -> Lane:
        """The native lane for blocking submissions (``submit_wait``: no loop involved)."""
        return self._lane

    def for_loop(self) -> Lane | None:
        """The native lane, bound to the running loop; None when it cannot be (closed, or
        bound to another loop that is still open: a lane answers on one loop, and only a
        closed loop hands it over). Called from a coroutine. O(1)."""
        loop = asyncio.get_running_loop()
        if loop is self._loop:
            return self._lane
        old = self._loop
        if self._closed or (old is not None and not old.is_closed()):
            return None
        self._lane.bind(loop.create_future)
        loop.add_reader(self._fd, self._lane.settle)
        self._loop = loop
        return self._lane

    def counts(self) -> tuple[int, int]:
        """(events written, commits) by the lane."""
        return self._lane.counts()

    def flush(self) -> None:
        """Commit what the lane has written (``batch`` mode's open transaction). Blocks."""
        self._lane.flush()

    def forget_after_fork(self) -> None:
        """In a forked child: this copy takes nothing and closes nothing."""
        self._closed = True
        self._loop = None
        self._lane.forget_after_fork()

    def close(self) -> None:
        """Write and commit what is queued, stop the thread, then answer what is written on
        the loop (at once when called on it). Idempotent."""
        if self._closed:
            return
        self._closed = True
        _OPEN.discard(self)
        self._lane.close()
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            if asyncio.get_running_loop() is loop:
                self._finish()
                return
        with contextlib.suppress(RuntimeError):  # closed meanwhile: nobody waits any more
            loop.call_soon_threadsafe(self._finish)

    def _finish(self) -> None:
        """On the loop: stop watching the lane, answer what it wrote."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.remove_reader(self._fd)
        self._lane.settle()
        self._lane.bind(None)
