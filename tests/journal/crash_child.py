"""The child of the crash test: appends events from 4 threads to the journal at argv[1]
(durability ``always``) and prints ``<seq> <key>`` for each append once it has returned,
until it is killed. Keys are ``<round>-<thread>-<i>`` (argv[2] is the round)."""

from __future__ import annotations

import sys
from pathlib import Path

from ranked.journal import NewEvent, open_journal

sys.path.insert(0, str(Path(__file__).parents[1]))
from journal.kill import serve  # run as a script: tests/ on the path first


def main() -> None:
    path, round_name = sys.argv[1], sys.argv[2]
    journal = open_journal(f"sqlite://{path}?durability=always")

    def write(thread: int, i: int) -> str:
        key = f"{round_name}-{thread}-{i}"
        event = NewEvent(
            board=f"b{thread}",
            operation="submit",
            member=key.encode(),
            value=key.encode() * (1 + i % 5),
            at_us=1_700_000_000_000_000 + i,
            key=key,
        )
        (record,) = journal.append([event])
        return f"{record.seq} {key}"

    serve(write)


if __name__ == "__main__":
    main()
