"""The child of the board crash test: submits to a journaled board from 4 threads (every
operator, batches too, two windows) and prints ``ack <key>`` for each call once it has
returned, until it is killed. argv: index URL, journal URL, round name."""

from __future__ import annotations

import sys
from pathlib import Path

from ranked import Leaderboard
from ranked.leaderboard._requests import Operator

sys.path.insert(0, str(Path(__file__).parents[1]))
from journal.kill import serve  # run as a script: tests/ on the path first

OPERATORS: tuple[Operator, ...] = ("incr", "best", "set", "decr")


def main() -> None:
    index, journal, round_name = sys.argv[1], sys.argv[2], sys.argv[3]
    board = Leaderboard(index, "crash", windows=("all", "daily"), journal=journal)

    def write(thread: int, i: int) -> str:
        key = f"{round_name}-{thread}-{i}"
        operator = OPERATORS[(thread + i) % 4]
        if i % 7 == 3:
            scores = {f"m{(i + j) % 40}": (i + j) % 11 for j in range(3)}
            board.submit_many(scores, operator=operator, key=key)
        else:
            board.submit(f"m{i % 40}", (thread * 13 + i) % 17, operator=operator, key=key)
        return f"ack {key}"

    serve(write)


if __name__ == "__main__":
    main()
