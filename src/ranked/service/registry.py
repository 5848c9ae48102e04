"""The service's boards: opened from the journal at start, created and reconfigured
through the API, closed (with a snapshot) at shutdown.

Every board is an :class:`~ranked.leaderboard.AsyncLeaderboard` on the service's backend
with the service's journal; its configuration is journaled when it is created or changed
(:meth:`~ranked.leaderboard.AsyncLeaderboard.record_config`), so a restart opens the same
boards with the same settings. What the service adds to a board's configuration
(``public_reads``, ``batch_incr_ms``) is kept in the board's metadata under
``"service"``, which the journal keeps too.
"""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import UTC
from typing import Any, Final

from ..core.windows import Season, WindowKind, WindowPlan
from ..errors import RankedError
from ..journal import open_journal
from ..journal.store import JournalStore
from ..leaderboard import AsyncLeaderboard
from .http import HTTPProblem
from .schemas import BoardSettings, SeasonSpec

__all__ = ["Boards"]

_log = logging.getLogger("ranked.service")

FIXED: Final = ("order", "tie_break", "windows", "seasons")
"""Settings a board keeps for life: they decide how its scores are stored."""

_SERVICE_KEY: Final = "service"

BOARD_NAME: Final = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
"""What a board created through the API may be called."""


class Boards:
    """The boards one service process serves (one event loop)."""

    def __init__(self, backend: str, journal: str, snapshot_every: int | None) -> None:
        self._backend_url = backend
        self._journal_url = journal
        self._snapshot_every = snapshot_every
        self.store: JournalStore | None = None
        self.backend: Any = None
        self._boards: dict[str, AsyncLeaderboard] = {}
        self._settings: dict[str, BoardSettings] = {}
        self._lock = asyncio.Lock()
        self.ready = False

    # -- start and stop ---------------------------------------------------------------

    async def open(self) -> None:
        """Open the journal and the backend, and every board the journal knows,
        restored (newest snapshot, then the journal's tail). Sets :attr:`ready`."""
        from ..backends.factory import open_async_backend

        self.store = open_journal(self._journal_url)
        self.backend = open_async_backend(self._backend_url)
        for name, options in AsyncLeaderboard.recorded_configs(self.store).items():
            if options is None:
                _log.warning("board %r: its configuration cannot be reopened; skipped", name)
                continue
            board = self._board(name, options)
            await board.restore()
            self._boards[name] = board
            self._settings[name] = await _settings_of(board)
        self.ready = True
        _log.info("%d boards restored", len(self._boards))

    async def close(self) -> None:
        """Snapshot every board and close it, then the backend and the journal."""
        self.ready = False
        for board in self._boards.values():
            try:
                await board.close()  # snapshots a memory:// board with a journal
            except RankedError as error:
                _log.error("board %r: closing failed: %s", board.name, error)
        self._boards.clear()
        if self.backend is not None:
            await self.backend.close()
        if self.store is not None:
            self.store.close()

    # -- boards -------------------------------------------------------------------------

    def get(self, name: str) -> AsyncLeaderboard:
        """The board ``name``; :class:`HTTPProblem` 404 if there is none."""
        board = self._boards.get(name)
        if board is None:
            raise HTTPProblem(404, "unknown-board", f"there is no board {name!r}", "board")
        return board

    def settings(self, name: str) -> BoardSettings:
        self.get(name)
        return self._settings[name]

    def names(self) -> list[str]:
        return sorted(self._boards)

    async def put(self, name: str, settings: BoardSettings) -> bool:
        """Create board ``name`` or change its settings; True if it was created. A
        change of a setting a board keeps for life is refused (409), and so is a
        configuration the board refuses (422): nothing changes then."""
        if not BOARD_NAME.fullmatch(name):
            raise HTTPProblem(
                422,
                "invalid-name",
                "a board name is 1 to 64 characters: letters, digits, _ . : -",
                "board",
            )
        async with self._lock:
            old = self._settings.get(name)
            if old is not None:
                for setting in FIXED:
                    if getattr(old, setting) != getattr(settings, setting):
                        raise HTTPProblem(
                            409,
                            "fixed-setting",
                            f"{setting} of board {name!r} cannot change once it exists",
                            setting,
                        )
                if old == settings:
                    return False
            board = self._board(name, _options(settings))  # refused settings raise here
            await board.restore()
            await board.record_config()
            if old is None or _service_metadata(old) != _service_metadata(settings):
                await board.merge_metadata({_SERVICE_KEY: _service_metadata(settings)})
            previous = self._boards.get(name)
            self._boards[name] = board
            self._settings[name] = settings
            if previous is not None:
                await previous.close()  # the journal and the backend are the service's
            return old is None

    def _board(self, name: str, options: dict[str, Any]) -> AsyncLeaderboard:
        return AsyncLeaderboard(
            self.backend,
            name,
            journal=self.store,
            snapshot_every=self._snapshot_every,
            **options,
        )


def _service_metadata(settings: BoardSettings) -> dict[str, Any]:
    """What the service keeps of ``settings`` in the board's metadata."""
    kept: dict[str, Any] = {"public_reads": settings.public_reads}
    if settings.batch_incr_ms is not None:
        kept["batch_incr_ms"] = settings.batch_incr_ms
    return kept


def _options(settings: BoardSettings) -> dict[str, Any]:
    """The ``AsyncLeaderboard`` keyword arguments of ``settings``."""
    seasons = tuple(Season(s.name, s.start, s.end) for s in settings.seasons)
    return {
        "higher_is_better": settings.order == "desc",
        "operator": settings.operator,
        "tie_break": settings.tie_break,
        "windows": WindowPlan(
            kinds=tuple(WindowKind(k) for k in settings.windows), seasons=seasons, timezone=UTC
        ),
        "rank_style": settings.rank_style,
        "keep": settings.keep,
        "keep_buffer": settings.keep_buffer,
        "max_page_size": settings.max_page_size,
    }


async def _settings_of(board: AsyncLeaderboard) -> BoardSettings:
    """The API settings of an opened board (its configuration and service metadata)."""
    config = board.config
    service = (await board.metadata()).get(_SERVICE_KEY, {})
    return BoardSettings(
        order="desc" if config.higher_is_better else "asc",
        operator=config.operator,
        tie_break=config.tie_break,  # type: ignore[arg-type]
        windows=[str(kind) for kind in config.windows.kinds],  # type: ignore[misc]
        seasons=[SeasonSpec(s.name, s.start, s.end) for s in config.windows.seasons],
        rank_style=str(config.rank_style),  # type: ignore[arg-type]
        keep=config.keep,
        keep_buffer=config.keep_buffer,
        max_page_size=config.max_page_size,
        public_reads=bool(service.get("public_reads", False)),
        batch_incr_ms=service.get("batch_incr_ms"),
    )
