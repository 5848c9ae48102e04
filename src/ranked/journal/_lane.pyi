"""Types of the native lane (``_lane.c``; see :mod:`ranked.journal.lane`)."""

import asyncio
from collections.abc import Callable
from typing import Any

def sqlite_address() -> int:
    """Where this module's SQLite library is (the address of ``sqlite3_libversion``)."""

class WriteGate:
    """The write gate of one journal file: its two writers take turns; the store's failure."""

    def take(self, timeout_ms: int, /) -> bool: ...
    def give(self) -> None: ...
    def fail(self, why: str, /) -> None: ...
    def failure(self) -> str | None: ...

class Lane:
    """The SQLite journal's native lane (see :mod:`ranked.journal.lane`)."""

    def __init__(
        self,
        path: str,
        synchronous: str,
        batch: bool,
        max_delay_ms: int,
        insert: str,
        last_seq: str,
        last_board_seq: str,
        last_run: str,
        add_run: tuple[str, str],
        every: int,
        error_type: type[Exception],
        gate: WriteGate,
    ) -> None: ...
    def submit(
        self,
        ctx: tuple[str, str, Callable[..., Any], Callable[..., Any], Callable[[int], Any]],
        member: Any,
        score: Any,
        operator: str | None,
        actor: str | None,
        reason: str | None,
        at_us: int,
        /,
    ) -> asyncio.Future[Any] | None: ...
    def submit_wait(
        self,
        ctx: tuple[str, str, Callable[..., Any], Callable[..., Any], Callable[[int], Any]],
        member: Any,
        score: Any,
        operator: str | None,
        actor: str | None,
        reason: str | None,
        at_us: int,
        /,
    ) -> Any: ...
    def settle(self) -> None: ...
    def bind(self, create_future: Callable[[], asyncio.Future[Any]] | None, /) -> None: ...
    def fileno(self) -> int: ...
    def forget_after_fork(self) -> None: ...
    def counts(self) -> tuple[int, int]: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
