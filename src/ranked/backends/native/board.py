"""The memory backend's native one-call submit of a plain board: ``BoardWriter``
(``board_fast.c``).

Registered as ``board``: the native name of the leaderboard's plain-submit step. The
factory builds one writer per board from the step's ``native_args``; it knows nothing of
the feature beyond them (no import from ``ranked.leaderboard``):

- ``key``, ``window``: the board's one sorted set and its window id;
- ``high_first``, ``style``, ``operator``: the board's order, rank style and default
  operator;
- ``result_type``, ``submission_type``: the results' types; the writer returns
  ``submission_type(member, result, MappingProxyType({window: result}))`` with ``result =
  result_type(window, score, previous_score, rank, previous_rank, changed)``;
- ``seq_key`` (optional): a journaled board's key of the number of the last event applied
  (:mod:`ranked.backends.sequenced`). The writer is then sequenced: it takes ``(after,
  last, member, score, operator or None)`` and writes only when that key holds ``after``,
  recording ``last`` with the write, as the ``sequenced`` submit step does (it answers
  None, having changed nothing, for an absent key and for any other number too: the
  general step then answers APPLIED or a Gap).

The writer takes ``(member, score, operator or None)``. It validates, writes (atomic: it
runs only while nobody holds the lock, and runs no Python code in the middle), ranks
before and after, and builds the result in one C call. It returns None having changed
nothing for anything else (a member or score of another type, an int of magnitude 2**53
or more, an unknown operator, a non-finite or inexact ``incr``/``decr`` result, a key
that is missing, empty, expiring or of another type, a held lock): the board's general
path then runs and raises the same errors as always. Every ``HOUSEKEEPING_EVERY`` writes
it first deletes a few expired keys, as the backend's own writes do.

Registered as ``board_entry``: :func:`reader_factory` builds a ``BoardReader``
(``board_read.c``), the one-call read of a member's entry on such a board (``native_args``:
``key``, ``high_first``, ``style``, ``entry_type``). ``reader(member)`` answers
``entry_type(member, score, rank, None)``, None when the member is absent, or False
having read nothing (another member type, the key missing, empty or expiring, a held
lock): the board's general path then answers.

Registered as ``board_method`` too: :func:`method_factory` builds a ``BoardSubmit``, the
method shortcut a synchronous board puts in its instance ``__dict__`` under ``submit``
(``native_args``: ``fallback``, the class's ``submit`` bound to the board). It calls its
``writer`` (set by the board, or None) and hands every call the writer does not finish to
``fallback``, unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ...engine.keyspace import Keyspace
from ..procedure import Bindable
from . import HOUSEKEEPING_DELETES, HOUSEKEEPING_EVERY
from ._native import BoardReader, BoardSubmit, BoardWriter

__all__ = ["factory", "method_factory", "reader_factory"]


def factory(
    keyspace: Keyspace, lock: threading.Lock, operation: Bindable[Any]
) -> Callable[..., Any] | None:
    """The C writer of the board ``operation.native_args`` describes. O(1)."""
    args = operation.native_args

    def housekeeping() -> None:
        with lock:
            keyspace.expire_pending(HOUSEKEEPING_DELETES)

    writer: Callable[..., Any] = BoardWriter(
        vars(keyspace),
        args["key"],
        args["window"],
        args["high_first"],
        args["style"],
        args["operator"],
        lock,
        housekeeping,
        HOUSEKEEPING_EVERY,
        args["result_type"],
        args["submission_type"],
        args.get("seq_key"),
    )
    return writer


def method_factory(
    keyspace: Keyspace, lock: threading.Lock, operation: Bindable[Any]
) -> Callable[..., Any] | None:
    """A ``BoardSubmit`` standing for ``operation.native_args["fallback"]``. O(1)."""
    shortcut: Callable[..., Any] = BoardSubmit(operation.native_args["fallback"])
    return shortcut


def reader_factory(
    keyspace: Keyspace, lock: threading.Lock, operation: Bindable[Any]
) -> Callable[..., Any] | None:
    """The C reader of one member's entry on the board ``operation.native_args``
    describes. O(1)."""
    args = operation.native_args
    reader: Callable[..., Any] = BoardReader(
        vars(keyspace), args["key"], args["high_first"], args["style"], lock, args["entry_type"]
    )
    return reader
