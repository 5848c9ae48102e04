"""``ranked demo``: the service with a few boards and simulated players submitting to
them, and a printed guide (where to look, a key, a curl to try)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import sys
from typing import Final

from ..errors import RankedError
from .app import Service
from .keys import Scope
from .schemas import BoardSettings

__all__ = ["Demo"]

BOARDS: Final = {
    "arena": BoardSettings(operator="best", public_reads=True),
    "daily-runs": BoardSettings(operator="incr", windows=["daily", "all"], public_reads=True),
    "speedrun": BoardSettings(order="asc", operator="best", tie_break="time", public_reads=True),
}
"""The demo's boards: best score of all time, points summed per day, fastest time (in
milliseconds: a time tie-break board takes whole scores)."""

PLAYERS: Final = 500

_log = logging.getLogger("ranked.demo")


class Demo:
    """Creates the demo boards once the service is up and runs the players until it
    stops."""

    def __init__(self, service: Service, rate: float = 20.0) -> None:
        self.service = service
        self.rate = rate
        self._task: asyncio.Task[None] | None = None

    def install(self) -> None:
        self.service.on_started.append(self._start)
        self.service.on_stopping.append(self._stop)

    async def _start(self) -> None:
        boards = self.service.boards
        for name, settings in BOARDS.items():
            if name not in boards.names():
                await boards.put(name, settings)
        _, key = self.service.keys.create(Scope.WRITE, name="demo")
        self._task = asyncio.get_running_loop().create_task(self._play())
        self._guide(key)

    async def _stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _play(self) -> None:
        rng = random.Random()
        boards = self.service.boards
        hub = self.service.hub
        while True:
            player = f"player-{rng.randrange(PLAYERS):03d}"
            try:
                for name, score in (
                    ("arena", rng.randrange(100, 10_000)),
                    ("daily-runs", rng.randrange(1, 50)),
                    ("speedrun", rng.randrange(60_000, 600_000)),
                ):
                    result = await boards.get(name).submit(player, score)
                    hub.submitted(name, (result,))  # the live channels see the players too
            except RankedError as error:  # keep playing: the demo must not stop on one refusal
                _log.warning("demo player: %s", error)
            await asyncio.sleep(1 / self.rate)

    def _guide(self, key: str) -> None:
        config = self.service.config
        base = f"http://{config.host}:{config.port}"
        print(
            f"""
ranked demo is running at {base}  (Ctrl-C stops it)

  Live page:  {base}/boards/arena   (every board: {base}/)
  API page:   {base}/docs
  Metrics:    {base}/metrics
  Top 5:      curl '{base}/v1/boards/arena/top?limit=5'
  Submit:     curl -X POST {base}/v1/boards/arena/scores \\
                -H 'Authorization: Bearer {key}' \\
                -H 'Content-Type: application/json' -d '{{"member": "you", "score": 9999}}'
  Your rank:  curl '{base}/v1/boards/arena/members/you'

The key above may write scores (a demo key, scope write). Boards: {", ".join(BOARDS)}.
Simulated players submit {self.rate:.0f} times a second to each board.
""",
            file=sys.stdout,
            flush=True,
        )
