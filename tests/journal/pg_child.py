"""A child process for test_postgres: appends ``count`` events to the journal at ``url``
(board ``p<name>``, one key each), and prints each record's seq as it is acknowledged."""

from __future__ import annotations

import sys

from ranked.journal import NewEvent, open_journal


def main() -> None:
    url, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open_journal(url) as journal:
        for i in range(count):
            event = NewEvent(board=f"p{name}", operation="submit", at_us=i, key=f"{name}-{i}")
            batch = [event, NewEvent(board=f"p{name}", operation="submit", at_us=i)]
            for record in journal.append(batch if i % 5 == 0 else batch[:1]):
                print(record.seq, flush=True)


if __name__ == "__main__":
    main()
