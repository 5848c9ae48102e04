"""Crash safety of a journaled board: a child submitting from 4 threads or 16 asyncio
tasks (every operator, batches, two windows; on memory:// also a plain all-time board,
whose events the native one-call submit applies) is SIGKILLed at random moments, many
rounds, on memory:// and on Redis, with SQLite and PostgreSQL. After each kill the board
is opened
again (restored: snapshot and journal tail on memory, the journal's tail on Redis) and
checked:

- every acknowledged call is in the journal, exactly once (its key is unique; every other
  one-member call carries no key but its key as its ``reason`` note: on the plain
  memory:// board with SQLite those are written by the journal's native lane);
- the board equals the journal folded by an independent model (each event applied once,
  every event of a batch or none: nothing half-applied);
- it goes on taking writes.

Totals (rounds, acknowledged calls checked, losses) are printed for the closing note.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from ranked import Leaderboard
from ranked.journal import open_journal
from servers import PostgresServer, RedisServer

from .conftest import flush_redis
from .kill import run_and_kill

ROUNDS = 12
CHILD = Path(__file__).with_name("board_crash_child.py")


def _run_and_kill(
    index: str,
    journal: str,
    round_no: int,
    writers: str,
    windows: tuple[str, ...],
    rng: random.Random,
) -> set[str]:
    """Run the child, SIGKILL it at a random moment, return the acknowledged keys."""
    args = [str(CHILD), index, journal, f"r{round_no}", writers, ",".join(windows)]
    lines = run_and_kill(args, rng, 400, (0.05, 0.6))
    return {line.split(" ")[1] for line in lines}


DAY_MS = 86_400_000


def _fold(events: list[Any], today: int) -> dict[str, dict[str, float]]:
    """The board the journal describes: per window (``all``, ``daily``: the UTC day
    ``today``), member -> score (high is better)."""
    boards: dict[str, dict[str, float]] = defaultdict(dict)
    for event in events:
        if event.member is None:  # the board's configuration
            continue
        member = event.member.decode()
        if event.operation == "remove":
            for scores in boards.values():
                scores.pop(member, None)
            continue
        windows = ["all"]
        if event.at_us // 1000 // DAY_MS == today:
            windows.append("daily")
        for window in windows:
            scores = boards[window]
            old = scores.get(member)
            if event.operation == "incr":
                scores[member] = (old or 0.0) + event.score
            elif event.operation == "decr":
                scores[member] = (old or 0.0) - event.score
            elif event.operation == "set":
                scores[member] = event.score
            else:
                scores[member] = event.score if old is None else max(old, event.score)
    return boards


def _settle(journal_url: str) -> None:
    """On PostgreSQL, wait until the killed child's session is gone: a COMMIT it sent
    before dying may still land, and the check must see the journal as it stays."""
    if not journal_url.startswith("postgresql://"):
        return
    import psycopg

    with psycopg.connect(journal_url, autocommit=True) as conn:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            (others,) = conn.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()  # type: ignore[misc]
            if others == 0:
                return
            time.sleep(0.02)
    raise AssertionError("the killed child's PostgreSQL session did not end")


def _check(index: str, journal_url: str, acked: set[str], windows: tuple[str, ...]) -> int:
    """Open the board on ``index`` (restored), compare it with the journal's fold."""
    _settle(journal_url)
    with open_journal(journal_url) as journal:
        events = [e for e in journal.read() if e.board == "crash"]
    # a keyed call's key, or an unkeyed one's key in its reason note (the native lane's)
    noted = [e.key if e.key is not None else e.reason for e in events]
    keys = [key for key in noted if key is not None]
    assert len(set(keys)) == len(keys)
    present = {key.split("#")[0] for key in keys}
    lost = acked - present
    assert lost == set(), f"acknowledged calls lost: {sorted(lost)[:5]}"
    board = Leaderboard(index, "crash", windows=windows, journal=journal_url)
    try:
        model = _fold(events, board.backend.now_ms() // DAY_MS)
        for window in windows:
            got = {e.member: e.score for e in board.top(1000, window=window)}
            assert got == model.get(window, {}), window
        board.submit("after-crash", 1, operator="set")
        board.remove("after-crash")
    finally:
        board.close()
    return len(acked)


@pytest.mark.parametrize("writers", ["threads", "tasks"])
@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
@pytest.mark.parametrize(
    ("kind", "windows"),
    [("memory", ("all", "daily")), ("memory", ("all",)), ("redis", ("all", "daily"))],
    ids=["memory", "memory-plain", "redis"],
)
def test_sigkill_loses_no_acknowledged_submission(
    kind: str,
    windows: tuple[str, ...],
    store: str,
    writers: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    if kind == "redis":
        redis_server: RedisServer = request.getfixturevalue("redis_server")
        flush_redis(redis_server)
        index = redis_server.url
    else:
        index = "memory://"
    if store == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        journal = server.new_database()
    else:
        journal = f"sqlite://{tmp_path / 'journal.db'}"
    rng = random.Random(16)
    checked = 0
    for round_no in range(ROUNDS):
        acked = _run_and_kill(index, journal, round_no, writers, windows, rng)
        # memory://: a fresh store each round (the child's died with it); Redis: the same
        fresh = f"memory://check-{store}-{writers}-{len(windows)}-{round_no}"
        checked += _check(fresh if kind == "memory" else index, journal, acked, windows)
    print(
        f"\nboard crash test [{kind}+{store}, {writers}, windows {','.join(windows)}]:"
        f" {ROUNDS} rounds, {checked} acknowledged calls checked, 0 lost"
    )
    assert checked > 0
