"""The SQLite journal's native lane (ranked.journal.lane): asyncio submissions of plain
boards written by the lane's own thread, applied on the loop once durable, with the same
events, numbers and answers as the store's committer gives."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from ranked.errors import InvalidEventError, InvalidScoreError, JournalError, OutOfRangeError
from ranked.journal import SQLiteJournal, open_journal
from ranked.journal.lane import lane_available
from ranked.journal.sqlite import MEMBER_INDEX_EVERY
from ranked.leaderboard import AsyncLeaderboard, Leaderboard

_HEADERS = Path("/usr/include/sqlite3.h")

pytestmark = pytest.mark.skipif(
    not lane_available() and not _HEADERS.exists(), reason="built without SQLite's headers"
)


def test_the_lane_is_built_where_sqlite_headers_are() -> None:
    """scripts/setup.sh installs the headers: the lane must be there (a build that quietly
    left it out would turn the lane's tests into skips)."""
    assert lane_available()


_names = itertools.count()


def _board_name() -> str:
    return f"lane{next(_names)}"  # memory:// is one store per process: a board each


def _store(board: AsyncLeaderboard) -> SQLiteJournal:
    store = board.journal_store
    assert isinstance(store, SQLiteJournal)
    return store


def _lane_events(board: AsyncLeaderboard) -> int:
    lane = _store(board).native_lane()
    assert lane is not None
    return lane.counts()[0]


async def _submit_all(
    board: AsyncLeaderboard, items: list[tuple[Any, Any]], tasks: int = 16, **kwargs: Any
) -> list[Any]:
    queue = iter(list(enumerate(items)))
    answers: list[Any] = [None] * len(items)

    async def worker() -> None:
        for i, (member, score) in queue:
            answers[i] = await board.submit(member, score, **kwargs)

    await asyncio.gather(*(worker() for _ in range(tasks)))
    return answers


def _rows(path: Path, board: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT seq, board_seq, member, operation, score, value, key, actor, reason"
            " FROM events WHERE board = ? ORDER BY seq",
            (board,),
        ).fetchall()


@pytest.mark.parametrize("durability", ["always", "batch", "none"])
def test_lane_writes_applies_and_restores(journal_path: Path, durability: str) -> None:
    name = _board_name()
    url = f"sqlite://{journal_path}?durability={durability}"
    items = [(f"m{i % 300}", 1 if i % 3 else 2.5) for i in range(3000)]
    expected: defaultdict[str, float] = defaultdict(float)
    for member, score in items:
        expected[member] += score

    async def run() -> None:
        board = AsyncLeaderboard("memory://", name, operator="incr", journal=url)
        answers = await _submit_all(board, items)
        assert _lane_events(board) > 2500  # all but the first round's
        for (member, _), answer in zip(items, answers, strict=True):
            assert answer.member == member and answer.score is not None
        assert {m: await board.score(m) for m in expected} == dict(expected)
        await board.close()

    asyncio.run(run())
    rows = _rows(journal_path, name)
    assert [row[1] for row in rows] == list(range(1, len(rows) + 1))  # board_seq 1, 2, 3...
    submits = [row for row in rows if row[3] == "incr"]
    assert len(submits) == len(items)
    # the lane's rows are the general path's: int scores flagged, floats not, no key
    assert {(row[5], row[6]) for row in submits} == {(b"i", None), (b"", None)}
    for row in submits:
        assert row[5] == (b"" if row[4] == 2.5 else b"i")
    reopened = Leaderboard("memory://lane-restore", name, operator="incr", journal=url)
    try:
        assert {m: reopened.score(m) for m in expected} == dict(expected)
    finally:
        reopened.close()


def test_lane_answers_like_the_general_path(journal_path: Path) -> None:
    """The same calls, one board through the lane and one through the store's committer
    (a blocking board): the same Submissions and the same events."""
    lane_name, plain_name = _board_name(), _board_name()
    url = f"sqlite://{journal_path}"
    items = [(f"p{i % 7}", float(i % 5) - 2) for i in range(200)]

    async def run() -> list[Any]:
        board = AsyncLeaderboard("memory://", lane_name, operator="best", journal=url)
        answers = [await board.submit(m, s) for m, s in items]
        assert _lane_events(board) >= len(items) - 1
        await board.close()
        return answers

    through_lane = asyncio.run(run())
    plain = Leaderboard("memory://", plain_name, operator="best", journal=url)
    general = [plain.submit(m, s) for m, s in items]
    plain.close()
    assert [a.primary for a in through_lane] == [g.primary for g in general]
    lane_rows = [row[1:] for row in _rows(journal_path, lane_name)]
    plain_rows = [row[1:] for row in _rows(journal_path, plain_name)]
    assert lane_rows[1:] == plain_rows[1:]  # the config events differ by name only


def test_notes_ride_in_the_lane_events(journal_path: Path) -> None:
    name = _board_name()

    async def run() -> None:
        board = AsyncLeaderboard("memory://", name, journal=f"sqlite://{journal_path}")
        await board.submit("a", 1)  # the first write finds the board's writer
        await board.submit("b", 2, actor="key:1", reason="accepted ip=1.2.3.4")
        await board.submit("c", 3, actor="key:2")
        assert _lane_events(board) == 2
        await board.close()

    asyncio.run(run())
    notes = [(row[2], row[7], row[8]) for row in _rows(journal_path, name)[-2:]]
    assert notes == [(b"b", "key:1", "accepted ip=1.2.3.4"), (b"c", "key:2", None)]


def test_keyed_and_timed_calls_take_the_general_path_in_order(journal_path: Path) -> None:
    """Calls the lane does not take interleave with those it takes: numbers stay
    contiguous, each event is applied once, in order, and retries answer as before."""
    name = _board_name()
    url = f"sqlite://{journal_path}"

    async def run() -> None:
        board = AsyncLeaderboard("memory://", name, operator="incr", journal=url)

        async def keyed(i: int) -> Any:
            return await board.submit("k", 1, key=f"key-{(i // 4) % 50}")

        async def plain(i: int) -> Any:
            return await board.submit(f"m{i % 10}", 1)

        await asyncio.gather(*(keyed(i) if i % 4 == 0 else plain(i) for i in range(800)))
        assert await board.score("k") == 50  # 200 keyed calls, 50 distinct keys
        assert sum([await board.score(f"m{i}") or 0 for i in range(10)]) == 600
        await board.remove("m1")
        await board.submit("m1", 5)
        assert await board.score("m1") == 5
        await board.close()

    asyncio.run(run())
    rows = _rows(journal_path, name)
    assert [row[1] for row in rows] == list(range(1, len(rows) + 1))
    reopened = Leaderboard("memory://lane-order", name, operator="incr", journal=url)
    try:
        assert reopened.score("k") == 50 and reopened.score("m1") == 5
    finally:
        reopened.close()


def test_a_value_the_index_refuses_is_refused_and_the_board_goes_on(journal_path: Path) -> None:
    """An increment past exact floats is journaled (the arguments were good) but the index
    refuses it: the caller gets the board's error and later writes still apply."""
    name = _board_name()

    async def run() -> None:
        board = AsyncLeaderboard(
            "memory://", name, operator="incr", journal=f"sqlite://{journal_path}"
        )
        await board.submit("a", 1)
        await board.submit("big", 1e308)
        with pytest.raises(OutOfRangeError, match="not exact"):
            await board.submit("big", 1)
        assert await board.score("big") == 1e308
        assert (await board.submit("a", 2)).score == 3
        assert _lane_events(board) == 3
        await board.close()

    asyncio.run(run())


def test_bad_arguments_are_refused_before_anything_is_written(journal_path: Path) -> None:
    name = _board_name()

    async def run() -> None:
        board = AsyncLeaderboard("memory://", name, journal=f"sqlite://{journal_path}")
        await board.submit("a", 1)
        before = _store(board).last_seq()
        for score in (float("nan"), float("inf"), True, "1"):
            with pytest.raises((InvalidScoreError, TypeError)):
                await board.submit("b", score)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            await board.submit("b", 1, operator="max")  # type: ignore[arg-type]
        with pytest.raises(InvalidEventError):
            await board.submit("b", 1, actor="")
        assert _store(board).last_seq() == before
        await board.close()

    asyncio.run(run())


def test_the_member_index_covers_lane_events_once(journal_path: Path) -> None:
    """The lane writes the member index's runs as the committer does; with both writing,
    no event is in two runs."""
    name = _board_name()
    url = f"sqlite://{journal_path}"
    count = MEMBER_INDEX_EVERY + 700

    async def run() -> None:
        board = AsyncLeaderboard("memory://", name, operator="incr", journal=url)
        await _submit_all(board, [(f"m{i % 40}", 1) for i in range(count)], tasks=32)
        await board.submit("m0", 1, key="through-the-committer")
        await _submit_all(board, [(f"m{i % 40}", 1) for i in range(count)], tasks=32)
        await board.close()

    asyncio.run(run())
    with sqlite3.connect(journal_path) as conn:
        runs = [row[0] for row in conn.execute("SELECT upto FROM member_runs ORDER BY upto")]
        doubled = conn.execute(
            "SELECT count(*) FROM (SELECT seq FROM member_seqs GROUP BY seq HAVING count(*) > 1)"
        ).fetchone()[0]
    assert len(runs) >= 2 and doubled == 0
    with open_journal(url) as store:
        history = store.member_events(name, b"m3")
    assert len(history) == 2 * len(range(3, count, 40))
    assert [e.seq for e in history] == sorted(e.seq for e in history)


def test_closing_the_store_answers_what_is_in_flight(journal_path: Path) -> None:
    name = _board_name()

    async def run() -> None:
        board = AsyncLeaderboard("memory://", name, journal=f"sqlite://{journal_path}")
        await board.submit("a", 1)
        pending = [asyncio.ensure_future(board.submit(f"m{i}", i)) for i in range(200)]
        await asyncio.sleep(0)
        await board.close()
        done = await asyncio.gather(*pending, return_exceptions=True)
        assert all(not isinstance(d, BaseException) for d in done[:1])
        written = {row[2] for row in _rows(journal_path, name)}
        for i, answer in enumerate(done):
            if not isinstance(answer, BaseException):  # answered: durable
                assert f"m{i}".encode() in written

    asyncio.run(run())


def test_a_new_event_loop_takes_the_lane_over(journal_path: Path) -> None:
    """A store outlives an event loop (asyncio.run twice): the lane follows the loop."""
    store = open_journal(f"sqlite://{journal_path}")
    name = _board_name()

    async def run(start: int) -> None:
        board = AsyncLeaderboard("memory://", name, operator="incr", journal=store)
        await _submit_all(board, [("m", 1)] * 100)
        assert await board.score("m") == start + 100

    try:
        asyncio.run(run(0))
        lane = store.native_lane()
        assert lane is not None
        first = lane.counts()[0]
        asyncio.run(run(100))
        assert lane.counts()[0] > first + 50  # all but the first round of the new board
    finally:
        store.close()


# -- blocking boards (threads) -------------------------------------------------------------


def test_blocking_boards_write_through_the_lane_from_threads(journal_path: Path) -> None:
    """Threads' submissions wait on the lane's thread, which applies each round in commit
    order with the GIL; the general path's calls (keyed, removes) interleave in order."""
    name = _board_name()
    url = f"sqlite://{journal_path}"
    board = Leaderboard("memory://", name, operator="incr", journal=url)
    items = [(f"m{i % 50}", 1 if i % 2 else 0.5) for i in range(4000)]
    expected: defaultdict[str, float] = defaultdict(float)
    for member, score in items:
        expected[member] += score
    expected["k"] = 25
    work = iter(enumerate(items))
    lock = threading.Lock()
    answers: list[Any] = [None] * len(items)

    def writer() -> None:
        while True:
            with lock:
                nxt = next(work, None)
            if nxt is None:
                return
            i, (member, score) = nxt
            answers[i] = board.submit(member, score)
            if i % 40 == 0:
                board.submit("k", 1, key=f"k{i % 1000}")  # 25 distinct keys, retried

    try:
        threads = [threading.Thread(target=writer) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        store = board.journal_store
        assert isinstance(store, SQLiteJournal)
        lane = store.native_lane()
        assert lane is not None and lane.counts()[0] > 3900
        assert all(a.member == m for a, (m, _) in zip(answers, items, strict=True))
        assert {m: board.score(m) for m in expected} == dict(expected)
        board.submit("big", 1e308)
        with pytest.raises(OutOfRangeError, match="not exact"):
            board.submit("big", 1)
        assert board.submit("m1", 1).score == expected["m1"] + 1
    finally:
        board.close()
    rows = _rows(journal_path, name)
    assert [row[1] for row in rows] == list(range(1, len(rows) + 1))
    expected["m1"] += 1
    expected["big"] = 1e308
    reopened = Leaderboard("memory://lane-threads", name, operator="incr", journal=url)
    try:
        assert {m: reopened.score(m) for m in expected} == dict(expected)
    finally:
        reopened.close()


# -- closing, failing, forking, several loops ------------------------------------------------


def test_closing_the_store_under_blocking_writers_leaves_nobody_waiting(journal_path: Path) -> None:
    """Threads still submitting while the store closes: each call answers or raises the
    journal's error, none waits for ever; a flush after close returns."""
    name = _board_name()
    store = open_journal(f"sqlite://{journal_path}")
    board = Leaderboard("memory://", name, operator="incr", journal=store)
    board.submit("m", 1)
    board.submit("m", 1)  # the lane is running
    lane = store.native_lane()
    assert lane is not None
    outcomes: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            try:
                board.submit("m", 1)
            except JournalError:
                outcomes.append("refused")
                return
        outcomes.append("stopped")

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)
    store.close()
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    assert len(outcomes) == 8
    lane.flush()  # closed: nothing to wait for
    assert store.native_lane() is None


def test_the_committer_and_the_lane_take_turns(journal_path: Path) -> None:
    """Under a steady stream of lane writes, the store's committer (keyed submissions) still
    gets the file every time it asks: no append fails for want of the write lock."""
    name = _board_name()

    async def run() -> None:
        board = AsyncLeaderboard(
            "memory://", name, operator="incr", journal=f"sqlite://{journal_path}"
        )
        await board.submit("a", 1)
        deadline = time.monotonic() + 1.5

        async def plain(w: int) -> int:
            n = 0
            while time.monotonic() < deadline:
                await board.submit(f"p{w}", 1)
                n += 1
            return n

        async def keyed() -> int:
            n = 0
            while time.monotonic() < deadline:
                await board.submit("k", 1, key=f"k{n}")
                n += 1
            return n

        counts = await asyncio.gather(keyed(), *(plain(w) for w in range(64)))
        assert counts[0] > 10 and sum(counts[1:]) > 1000
        assert await board.score("k") == counts[0]
        await board.close()

    asyncio.run(run())


def test_a_failure_recorded_at_the_gate_stops_both_writers(journal_path: Path) -> None:
    """Acknowledged events lost by one writer (batch mode) stop the other one too: the
    store's failure is shared at the file's write gate."""
    name = _board_name()

    async def run() -> None:
        board = AsyncLeaderboard("memory://", name, journal=f"sqlite://{journal_path}")
        await board.submit("a", 1)
        await board.submit("b", 2)  # through the lane
        store = _store(board)
        gate = store._gate
        assert gate is not None
        gate.fail("a commit failed after appends were acknowledged (test)")
        with pytest.raises(JournalError, match="acknowledged"):
            await board.submit("c", 3)  # the lane's way
        with pytest.raises(JournalError, match="acknowledged"):
            await board.submit("c", 3, key="k")  # the committer's way
        assert await board.score("c") is None

    asyncio.run(run())


_FORKING = """
import os, sys, time
from ranked import Leaderboard
board = Leaderboard("memory://", "fork", journal=sys.argv[1])
board.submit("a", 1)
board.submit("b", 2)  # the lane is running
pid = os.fork()
if pid == 0:
    sys.exit(0)  # a normal exit: the atexit hooks run in the child
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    time.sleep(0.05)
else:
    os.kill(pid, 9)
    sys.exit("the forked child hung at exit")
assert os.waitstatus_to_exitcode(status) == 0, status
assert board.submit("c", 3).score == 3  # the parent's lane goes on
board.close()
print("ok")
"""


def test_a_forked_child_exits_without_waiting_for_the_parents_lane(journal_path: Path) -> None:
    """In a process of its own (a fork of the test runner would run the runner's exit
    hooks in the child): a forked child's normal exit does not wait for the lane's thread,
    which stayed in the parent."""
    done = subprocess.run(
        [sys.executable, "-c", _FORKING, f"sqlite://{journal_path}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_a_second_open_loop_takes_the_general_path(journal_path: Path) -> None:
    """A lane answers on one event loop; another loop running at the same time (another
    thread) writes through the store's committer instead."""
    store = open_journal(f"sqlite://{journal_path}")
    first, second = _board_name(), _board_name()
    started, finish = threading.Event(), threading.Event()

    async def hold(name: str) -> None:
        board = AsyncLeaderboard("memory://", name, operator="incr", journal=store)
        await board.submit("m", 1)
        await board.submit("m", 1)  # the lane, bound to this loop
        started.set()
        while not finish.is_set():
            await asyncio.sleep(0.01)
        assert await board.submit("m", 1) and await board.score("m") == 3

    async def other(name: str) -> float | None:
        board = AsyncLeaderboard("memory://", name, operator="incr", journal=store)
        for _ in range(50):
            await board.submit("m", 1)
        return await board.score("m")

    holder = threading.Thread(target=lambda: asyncio.run(hold(first)))
    try:
        holder.start()
        assert started.wait(10)
        lane = store.native_lane()
        assert lane is not None
        before = lane.counts()[0]
        assert asyncio.run(other(second)) == 50
        assert lane.counts()[0] == before  # none of them through the lane
        finish.set()
        holder.join(10)
        assert not holder.is_alive()
    finally:
        finish.set()
        store.close()
