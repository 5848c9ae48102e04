"""The child of the crash test: appends events from 4 threads to the journal at argv[1]
(durability ``always``) and prints ``<seq> <key>`` for each append once it has returned,
until it is killed. Keys are ``<round>-<thread>-<i>`` (argv[2] is the round)."""

from __future__ import annotations

import sys
import threading

from ranked.journal import NewEvent, open_journal


def main() -> None:
    path, round_name = sys.argv[1], sys.argv[2]
    journal = open_journal(f"sqlite://{path}?durability=always")
    out = threading.Lock()

    def work(thread: int) -> None:
        i = 0
        while True:
            key = f"{round_name}-{thread}-{i}"
            batch = [
                NewEvent(
                    board=f"b{thread}",
                    operation="submit",
                    member=key.encode(),
                    value=key.encode() * (1 + i % 5),
                    at_us=1_700_000_000_000_000 + i,
                    key=key,
                )
            ]
            (record,) = journal.append(batch)
            with out:
                sys.stdout.write(f"{record.seq} {key}\n")
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
