"""The child of the board crash test: submits to a journaled board from 4 threads, or from
16 asyncio tasks (every operator, batches too), and prints ``ack <key>`` for each call
once it has returned, until it is killed. Every other one-member call carries no
idempotency key but its key as its ``reason`` note: on a plain board on memory:// with
SQLite those go through the journal's native lane (which takes no keyed call). argv:
index URL, journal URL, round name, ``threads`` or ``tasks``, the board's windows
(comma-separated: ``all,daily``, or ``all`` alone: a plain board, whose submissions
memory:// applies through the native one-call submit)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from ranked import AsyncLeaderboard, Leaderboard
from ranked.leaderboard._requests import Operator

sys.path.insert(0, str(Path(__file__).parents[1]))
from journal.kill import serve  # run as a script: tests/ on the path first

OPERATORS: tuple[Operator, ...] = ("incr", "best", "set", "decr")


def call(round_name: str, writer: int, i: int) -> tuple[str, Operator, Any]:
    """The key, operator and scores (a dict: a batch) or (member, score) of one call."""
    key = f"{round_name}-{writer}-{i}"
    operator = OPERATORS[(writer + i) % 4]
    if i % 7 == 3:
        return key, operator, {f"m{(i + j) % 40}": (i + j) % 11 for j in range(3)}
    return key, operator, (f"m{i % 40}", (writer * 13 + i) % 17)


def main() -> None:
    index, journal, round_name, mode, windows = sys.argv[1:6]
    kept = tuple(windows.split(","))
    if mode == "tasks":
        asyncio.run(tasks(index, journal, round_name, kept))
        return
    board = Leaderboard(index, "crash", windows=kept, journal=journal)

    def write(thread: int, i: int) -> str:
        key, operator, scores = call(round_name, thread, i)
        if isinstance(scores, dict):
            board.submit_many(scores, operator=operator, key=key)
        elif i % 2:
            board.submit(*scores, operator=operator, reason=key)
        else:
            board.submit(*scores, operator=operator, key=key)
        return f"ack {key}"

    serve(write)


async def tasks(index: str, journal: str, round_name: str, windows: tuple[str, ...]) -> None:
    """16 tasks writing through one asyncio board (its appender batches their appends)."""
    async with AsyncLeaderboard(index, "crash", windows=windows, journal=journal) as board:

        async def work(task: int) -> None:
            i = 0
            while True:
                key, operator, scores = call(round_name, task, i)
                if isinstance(scores, dict):
                    await board.submit_many(scores, operator=operator, key=key)
                elif i % 2:
                    await board.submit(*scores, operator=operator, reason=key)
                else:
                    await board.submit(*scores, operator=operator, key=key)
                sys.stdout.write(f"ack {key}\n")
                sys.stdout.flush()
                i += 1

        sys.stdout.write("ready\n")
        sys.stdout.flush()
        await asyncio.gather(*(work(task) for task in range(16)))


if __name__ == "__main__":
    main()
