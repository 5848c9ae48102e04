"""The child of the board crash test: submits to a journaled board from 4 threads (every
operator, batches too, two windows) and prints ``ack <key>`` for each call once it has
returned, until it is killed. argv: index URL, journal URL, round name."""

from __future__ import annotations

import sys
import threading

from ranked import Leaderboard
from ranked.leaderboard._requests import Operator

OPERATORS: tuple[Operator, ...] = ("incr", "best", "set", "decr")


def main() -> None:
    index, journal, round_name = sys.argv[1], sys.argv[2], sys.argv[3]
    board = Leaderboard(index, "crash", windows=("all", "daily"), journal=journal)
    out = threading.Lock()

    def work(thread: int) -> None:
        i = 0
        while True:
            key = f"{round_name}-{thread}-{i}"
            operator = OPERATORS[(thread + i) % 4]
            if i % 7 == 3:
                board.submit_many(
                    {f"m{(i + j) % 40}": (i + j) % 11 for j in range(3)},
                    operator=operator,
                    key=key,
                )
            else:
                board.submit(f"m{i % 40}", (thread * 13 + i) % 17, operator=operator, key=key)
            with out:
                sys.stdout.write(f"ack {key}\n")
                sys.stdout.flush()
            i += 1

    threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(4)]
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
