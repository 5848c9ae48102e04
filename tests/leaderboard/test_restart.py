"""A Redis restart in the middle of a run: clear errors while it is down, recovery after.

A writer thread keeps submitting to a board while the server is stopped and started again
on the same port (no persistence, so the board comes back empty). While the server is down
every call fails with ``BackendUnavailableError`` and nothing else; once it is back, the
same Leaderboard object (no new backend, no app restart) writes and reads correctly, with
its scripts reloaded on NOSCRIPT and its clock measured again.
"""

from __future__ import annotations

import threading
import time

from ranked import BackendUnavailableError, Leaderboard
from servers import RedisServer

RUN_SECONDS = 3.0


def _writer(board: Leaderboard, stop: threading.Event, outcomes: list[str]) -> None:
    player = 0
    while not stop.is_set():
        player += 1
        try:
            board.submit(f"p{player}", player)
            outcomes.append("ok")
        except BackendUnavailableError:
            outcomes.append("unavailable")
            time.sleep(0.01)
        except Exception as error:  # anything else is a failure of the contract
            outcomes.append(f"unexpected {type(error).__name__}: {error}")


def test_redis_restart_mid_run_gives_clear_errors_then_recovers() -> None:
    with RedisServer() as server:
        board = Leaderboard(server.url, "restart-run")
        stop, outcomes = threading.Event(), list[str]()
        writer = threading.Thread(target=_writer, args=(board, stop, outcomes))
        writer.start()
        try:
            time.sleep(RUN_SECONDS / 3)
            server.stop()
            time.sleep(RUN_SECONDS / 3)
            down = len(outcomes)
            server.start()
            time.sleep(RUN_SECONDS / 3)
        finally:
            stop.set()
            writer.join(timeout=30)
        assert not writer.is_alive()

        unexpected = [outcome for outcome in outcomes if outcome.startswith("unexpected")]
        assert unexpected == []
        assert "unavailable" in outcomes[:down], "the outage was not reported"
        assert outcomes[-1] == "ok", "writes did not recover after the restart"
        assert outcomes.index("ok") < outcomes.index("unavailable")

        # The same object works fully after the restart: writes, ranks and pages agree.
        board.clear()
        board.submit("alice", 10)
        board.submit("bob", 30)
        board.submit("carol", 20)
        assert [entry.member for entry in board.top(3)] == ["bob", "carol", "alice"]
        assert board.rank("carol") == 2
        assert board.count() == 3
        board.close()
