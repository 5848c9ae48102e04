"""A board with a journal: every write journaled then applied; reopening restores the
board (snapshot, then the journal's tail) and answers as before; a rebuilt index equals
the live one; idempotency keys; a refused call journals nothing; two writers of one board
catch each other up. On memory://, Redis and Redis Cluster, with SQLite."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from ranked import AsyncLeaderboard, Leaderboard
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.errors import (
    BoardConfigError,
    InvalidScoreError,
    JournalError,
    OutOfRangeError,
    WindowError,
)
from ranked.journal import open_journal
from servers import PostgresServer, RedisServer

from .conftest import Index, flush_redis

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in ms


def url_of(path: Path, mode: str = "always") -> str:
    return f"sqlite://{path}?durability={mode}"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        self.now += 7
        return self.now


def open_board(index: Index, path: Path, clock: Clock, **options: Any) -> Leaderboard:
    return Leaderboard(
        index.backend(),
        "arena",
        windows=("all", "daily"),
        journal=url_of(path),
        clock=clock,
        **options,
    )


def standings(board: Leaderboard) -> dict[str, Any]:
    """Everything a board answers that writes change."""
    return {
        window: [(e.member, e.score, e.rank) for e in board.top(100, window=window, with_data=True)]
        for window in ("all", "daily")
    } | {
        "data": board.member_data(["ann", "bob", "cid"]),
        "meta": board.metadata(),
        "friends": board.friends("ann"),
        "count": board.count(),
    }


def write_everything(board: Leaderboard, rounds: int = 3) -> None:
    for r in range(rounds):
        board.submit("ann", 10 + r, operator="incr")
        board.submit("bob", 7.25 * r, operator="best")
        board.submit("cid", 3, operator="set")
        board.submit("dan", 1, operator="decr")
        board.submit_many({"eve": 2.5, "fay": 4.0, "ann": 1.0}, operator="incr")
    board.set_member_data("ann", "Ann", {"level": 3})
    board.add_friends("ann", ["bob", "cid"])
    board.remove_friends("ann", ["cid"])
    board.set_metadata({"season": 1})
    board.merge_metadata({"prize": "gold"})
    board.remove("dan", actor="mod-1", reason="cheating")


@pytest.fixture(params=["sqlite", "postgresql"])
def journal_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh journal's URL on each store."""
    if request.param == "sqlite":
        return url_of(tmp_path / "journal.db")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.new_database()


def test_reopening_restores_every_write(index: Index, journal_url: str, tmp_path: Path) -> None:
    clock = Clock()
    snapshots = str(tmp_path / "snapshots")

    def reopen() -> Leaderboard:
        return Leaderboard(
            index.backend(),
            "arena",
            windows=("all", "daily"),
            clock=clock,
            journal=journal_url,
            snapshots=snapshots,
        )

    board = reopen()
    write_everything(board)
    before = standings(board)
    board.close()
    board.backend.close()
    again = reopen()
    try:
        assert standings(again) == before
        again.submit("ann", 1, operator="incr")  # and it goes on from there
        assert again.score("ann") == before["all"][0][1] + 1
    finally:
        again.close()
        again.backend.close()


def test_a_rebuilt_index_equals_the_live_one(index: Index, tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "journal.db"
    board = open_board(index, path, clock, snapshots=str(tmp_path / "none"), snapshot_every=None)
    write_everything(board)
    before = standings(board)
    board.close()
    board.backend.close()
    for snapshot in (tmp_path / "none").glob("*"):
        snapshot.unlink()  # no snapshot: the whole journal is replayed
    index.flush()  # on Redis the index loses the board (FLUSHALL)
    again = open_board(index, path, clock, snapshots=str(tmp_path / "none"))
    try:
        assert standings(again) == before
    finally:
        again.close()
        again.backend.close()


def test_flushall_under_a_running_app_is_one_call(index: Index, tmp_path: Path) -> None:
    clock = Clock()
    board = open_board(index, tmp_path / "journal.db", clock)
    try:
        write_everything(board)
        before = standings(board)
        if index.kind == "memory":
            board.backend.keyspace.flush()  # type: ignore[attr-defined]
        else:
            index.flush()
        assert board.count() == 0
        assert board.restore() > 0
        assert standings(board) == before
        assert board.restore() == 0  # nothing twice
        assert standings(board) == before
    finally:
        board.close()
        board.backend.close()


def test_idempotency_key_applies_once_and_answers_as_first(index: Index, tmp_path: Path) -> None:
    board = open_board(index, tmp_path / "journal.db", Clock(), operator="incr")
    try:
        first = board.submit("ann", 5, key="req-1")
        again = board.submit("ann", 5, key="req-1")
        assert again == first
        assert board.score("ann") == 5
        board.submit_many({"bob": 1, "cid": 2}, key="batch-1")
        board.submit_many({"bob": 1, "cid": 2}, key="batch-1")
        assert board.score("bob") == 1
        assert board.score("cid") == 2
        board.submit("ann", 2)
    finally:
        board.close()
        board.backend.close()
    # after a restart the first answers are gone: a retry changes nothing and answers the
    # member's standing now
    board = open_board(index, tmp_path / "journal.db", Clock(), operator="incr")
    try:
        again = board.submit("ann", 5, key="req-1")
        assert (again.score, again.rank, again.changed) == (7, 1, False)
        assert (again.previous_score, again.previous_rank) == (7, 1)
        both = board.submit_many({"bob": 1, "cid": 2}, key="batch-1")
        assert [(s.member, s.score, s.changed) for s in both] == [
            ("bob", 1, False),
            ("cid", 2, False),
        ]
        assert board.score("ann") == 7 and board.score("bob") == 1
    finally:
        board.close()
        board.backend.close()


def test_an_event_the_index_refuses_is_consumed_not_stuck(index: Index, tmp_path: Path) -> None:
    """An increment the index refuses only given its state (past exact floats) is in the
    journal already: it is marked applied with no effect, so later writes go on, and a
    replay refuses it the same way and reaches the same board."""
    path = tmp_path / "journal.db"
    board = open_board(index, path, Clock(), operator="incr")
    try:
        board.submit("x", 1e308)
        with pytest.raises(OutOfRangeError, match="not exact"):
            board.submit("x", 1)
        board.submit_many([("y", 5), ("z", 2)])
        with pytest.raises(OutOfRangeError):
            board.submit_many([("z", 1), ("x", 1)])  # refused whole: z stays at 2
        assert board.submit("y", 1).score == 6
        live = [(e.member, e.score) for e in board.top(10)]
        assert live == [("x", 1e308), ("y", 6.0), ("z", 2.0)]
        assert board.rebuild() > 0  # a replay (the fold refuses inexact sums)
        assert [(e.member, e.score) for e in board.top(10)] == live
    finally:
        board.close()
    index.flush()
    again = open_board(index, path, Clock(), operator="incr", snapshots=str(tmp_path / "none"))
    try:
        assert [(e.member, e.score) for e in again.top(10)] == live
    finally:
        again.close()


def test_a_refused_call_journals_nothing(index: Index, tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    board = open_board(index, path, Clock())
    try:
        board.submit("ann", 1)
        last = board._journal.store.last_seq()  # type: ignore[union-attr]
        with pytest.raises(InvalidScoreError):
            board.submit("ann", float("nan"))
        with pytest.raises(OutOfRangeError):
            board.submit("ann", 2**60 + 1)
        with pytest.raises(TypeError):
            board.add_friends("ann", "bob")
        with pytest.raises(WindowError):
            board.submit("ann", 1, at=10**12)
        assert board._journal.store.last_seq() == last  # type: ignore[union-attr]
        assert board.score("ann") == 1
    finally:
        board.close()
        board.backend.close()


def test_two_writers_of_one_board_catch_each_other_up(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    client = redis_server.client()
    client.flushall()
    client.close()
    store = open_journal(url_of(tmp_path / "journal.db"))
    clock = Clock()
    boards = [
        Leaderboard(redis_server.url, "arena", operator="incr", journal=store, clock=clock)
        for _ in range(2)
    ]
    try:
        for i in range(40):
            boards[i % 2].submit("ann", 1)
            boards[(i * 7) % 2].submit(f"m{i % 5}", i)
        assert boards[0].score("ann") == 40
        assert boards[1].top(10) == boards[0].top(10)
        seq = redis_server.client().get(b"rk:{arena}:seq")
        assert int(seq) == store.last_board_seq("arena") == 81  # type: ignore[arg-type]  # + config
    finally:
        for board in boards:
            board.close()
        store.close()


def test_asyncio_board(index: Index, tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    clock = Clock()

    async def scenario() -> dict[str, Any]:
        async with AsyncLeaderboard(
            index.async_backend(), "arena", operator="incr", journal=url_of(path), clock=clock
        ) as board:
            await asyncio.gather(*(board.submit(f"m{i % 10}", 1) for i in range(200)))
            await board.set_member_data("m1", "One")
            top = [(e.member, e.score) for e in await board.top(20)]
            await board.backend.close()
            return {"top": top}

    first = asyncio.run(scenario())
    assert sorted(first["top"]) == [(f"m{i}", 20.0) for i in range(10)]
    sync = Leaderboard(index.backend(), "arena", operator="incr", journal=url_of(path), clock=clock)
    try:
        assert [(e.member, e.score) for e in sync.top(20)] == first["top"]
        assert sync.member_data(["m1"])["m1"].display_name == "One"
    finally:
        sync.close()
        sync.backend.close()


def test_a_torn_snapshot_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    index = Index("memory", None)
    clock = Clock()
    path = tmp_path / "journal.db"
    board = open_board(index, path, clock)
    write_everything(board, rounds=5)
    before = standings(board)
    board.close()
    snaps = sorted((tmp_path / "journal.db.snapshots").glob("*"))
    assert snaps
    data = snaps[-1].read_bytes()
    snaps[-1].write_bytes(data[: len(data) // 2])
    again = open_board(index, path, clock)
    try:
        assert standings(again) == before
    finally:
        again.close()


def test_fan_out_journals_each_journaled_board(tmp_path: Path) -> None:
    from ranked.leaderboard import asubmit_to_boards_nonatomic, submit_to_boards_nonatomic

    url = url_of(tmp_path / "journal.db")
    clock = Clock()
    backend = MemoryBackend()
    boards = [
        Leaderboard(backend, "daily-xp", operator="incr", journal=url, clock=clock),
        Leaderboard(backend, "plain", operator="incr", clock=clock),
    ]
    submit_to_boards_nonatomic(boards, "ann", 5)
    boards[0].close()

    async def more() -> None:
        async with AsyncLeaderboard(
            AsyncMemoryBackend(sync=backend), "daily-xp", operator="incr", journal=url
        ) as board:
            await asubmit_to_boards_nonatomic([board], "ann", 2)

    asyncio.run(more())
    again = Leaderboard(MemoryBackend(), "daily-xp", operator="incr", journal=url, clock=clock)
    try:
        assert again.score("ann") == 7
        assert boards[1].score("ann") == 5
    finally:
        again.close()
        backend.close()


def test_an_index_ahead_of_its_journal_is_rebuilt(
    redis_server: RedisServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """batch mode can lose the journal's tail after the index applied it: on restore, the
    index (Redis) is ahead; it is rebuilt from the journal, with one warning."""
    flush_redis(redis_server)
    path = tmp_path / "journal.db"
    board = Leaderboard(redis_server.url, "arena", operator="incr", journal=url_of(path))
    board.submit("ann", 5)
    board.close()
    client = redis_server.client()
    client.set(b"rk:{arena}:seq", b"9")  # as if events 2..9 were applied, then lost
    client.zadd(b"rk:{arena}:w:all", {b"ghost": 1})
    client.close()
    again = Leaderboard(redis_server.url, "arena", operator="incr", journal=url_of(path))
    try:
        assert "rebuilding the board from the journal" in caplog.text
        assert [(e.member, e.score) for e in again.top(10)] == [("ann", 5.0)]
        again.submit("bob", 1)
        assert again.score("bob") == 1
    finally:
        again.close()


def test_member_history(journal_url: str, tmp_path: Path) -> None:
    clock = Clock()
    board = Leaderboard(MemoryBackend(), "arena", operator="incr", journal=journal_url, clock=clock)
    try:
        board.submit("ann", 5, key="r1")
        board.submit("bob", 1)
        board.submit_many({"ann": 2.5, "cid": 1}, operator="best")
        board.remove("ann", actor="mod-1", reason="speed hack")
        found = board.history("ann")
        assert [(h.operation, h.score, h.key, h.actor, h.reason) for h in found] == [
            ("incr", 5.0, "r1", None, None),
            ("best", 2.5, None, None, None),
            ("remove", None, None, "mod-1", "speed hack"),
        ]
        assert found[0].at.timestamp() * 1000 == pytest.approx(T0 + 7, abs=100)
        assert [h.operation for h in board.history("ann", limit=1)] == ["incr"]
        assert board.history("nobody") == []
    finally:
        board.close()
    plain = Leaderboard(MemoryBackend(), "plain")
    with pytest.raises(BoardConfigError):
        plain.history("ann")


def test_as_of_an_instant(journal_url: str) -> None:
    from datetime import UTC, datetime, timedelta

    clock = Clock()
    board = Leaderboard(
        MemoryBackend(),
        "arena",
        operator="incr",
        windows=("all", "daily"),
        journal=journal_url,
        clock=clock,
    )
    try:
        board.submit("ann", 5)
        board.submit("bob", 3)
        first_day = datetime.fromtimestamp(clock.now / 1000, UTC)
        clock.now += 86_400_000  # the next day
        board.submit("bob", 4)
        board.remove("ann", actor="mod-1", reason="banned")
        then = board.as_of(first_day)
        try:
            assert [(e.member, e.score) for e in then.top(10)] == [("ann", 5.0), ("bob", 3.0)]
            assert [(e.member, e.score) for e in then.top(10, window="daily")] == [
                ("ann", 5.0),
                ("bob", 3.0),
            ]
            with pytest.raises(JournalError):
                then.submit("eve", 1)
        finally:
            then.close()
        now = board.as_of(first_day + timedelta(days=2))
        try:
            assert [(e.member, e.score) for e in now.top(10)] == [("bob", 7.0)]
        finally:
            now.close()
        assert [(e.member, e.score) for e in board.top(10)] == [("bob", 7.0)]
        before = board.as_of(datetime(2020, 1, 1, tzinfo=UTC))
        assert before.top(10) == []
        before.close()
    finally:
        board.close()


def test_as_of_on_asyncio(tmp_path: Path) -> None:
    url = url_of(tmp_path / "journal.db")

    async def scenario() -> list[Any]:
        async with AsyncLeaderboard(
            AsyncMemoryBackend(), "arena", operator="incr", journal=url
        ) as board:
            await board.submit("ann", 5)
            async with board.as_of(1e10) as view:
                return [(e.member, e.score) for e in await view.top(10)]

    assert asyncio.run(scenario()) == [("ann", 5.0)]


@pytest.mark.parametrize(
    ("operators", "higher", "scores", "bulk"),
    [
        (("incr", "decr"), True, (3, 7, 11), True),
        (("incr",), True, (0.5, 0.25, 1e-9), False),  # fractions: a replay, same answers
        (("best",), True, (3, 9, 1), True),
        (("best",), False, (3, 9, 1), True),
        (("set",), True, (3, -2.5, 8), True),
        (("incr", "set"), True, (1, 2, 3), False),  # mixed: a replay
    ],
)
def test_restore_by_bulk_load_answers_as_the_live_board(
    journal_url: str,
    operators: tuple[str, ...],
    higher: bool,
    scores: tuple[float, ...],
    bulk: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("INFO", logger="ranked.journal")
    clock = Clock()
    board = Leaderboard(
        MemoryBackend(), "bulk", higher_is_better=higher, journal=journal_url, clock=clock
    )
    rng = __import__("random").Random(5)
    for i in range(600):
        operator: Any = operators[i % len(operators)]
        board.submit(f"m{rng.randrange(80)}", scores[i % len(scores)], operator=operator)
    live = [(e.member, e.score, e.rank) for e in board.top(100)]
    board._journal.snapshots = None  # type: ignore[union-attr]  # restore from the journal
    board.close()
    again = Leaderboard(
        MemoryBackend(), "bulk", higher_is_better=higher, journal=journal_url, clock=clock
    )
    try:
        assert ("folded and loaded" in caplog.text) is bulk
        assert [(e.member, e.score, e.rank) for e in again.top(100)] == live
        again.submit("late", 1, operator="set")  # and it goes on from the loaded number
        assert again.score("late") == 1
    finally:
        again.close()


def test_a_trimmed_member_gets_its_journaled_score_back(index: Index, tmp_path: Path) -> None:
    """seed 004: keep trims members below the cut; one who submits again starts from the
    score the journal holds (the trim hook is filled from the journal), and a rebuilt
    board answers the same."""
    clock = Clock()
    url = url_of(tmp_path / "journal.db")

    def open_kept() -> Leaderboard:
        return Leaderboard(
            index.backend(), "kept", operator="incr", keep=2, journal=url, clock=clock
        )

    board = open_kept()
    try:
        board.submit("low", 5)
        board.submit("low", 5)  # 10
        board.submit("mid", 20)
        board.submit("top", 30)  # trims "low"
        assert board.score("low") is None
        board.submit("high", 40)  # trims "mid"
        again = board.submit("low", 25)  # 10 from the journal + 25 = 35: back in
        assert again.score == 35
        assert [(e.member, e.score) for e in board.top(5)] == [("high", 40.0), ("low", 35.0)]
        board.remove("low")
        assert board.submit("low", 1).score == 1  # a removal resets its history
        before = [(e.member, e.score) for e in board.top(5)]
    finally:
        board._journal.snapshots = None  # type: ignore[union-attr]
        board.close()
    index.flush()
    rebuilt = open_kept()
    try:
        assert [(e.member, e.score) for e in rebuilt.top(5)] == before
    finally:
        rebuilt.close()


def test_a_closed_window_is_archived_and_read_after_its_key_expired(
    index: Index, tmp_path: Path
) -> None:
    clock = Clock()
    clock.now = int(time.time() * 1000)  # windows live (TTLs count on the backend's clock)
    board = Leaderboard(
        index.backend(),
        "seasonal",
        operator="incr",
        windows=("all", "daily"),
        journal=url_of(tmp_path / "journal.db"),
        clock=clock,
    )
    try:
        board.submit("ann", 5)
        board.submit("bob", 7)
        board.submit("ann", 4)
        day1 = board.window_id("daily")
        final = [(e.member, e.score, e.rank) for e in board.top(10, window=day1)]
        clock.now += 86_400_000
        board.submit("cid", 1)  # the first write of day 2 archives day 1
        assert board.archive_closed() == []  # once
        assert board.archived_windows() == [day1]
        assert Leaderboard("memory://", "plain").archived_windows() == []
        key = f"rk:{{seasonal}}:w:{day1}".encode()
        if index.kind == "memory":
            board.backend.keyspace.delete(key)  # type: ignore[attr-defined]
        else:
            assert index.client is not None
            client = index.client()
            client.delete(key)
            client.close()
        assert final == [("ann", 9.0, 1), ("bob", 7.0, 2)]
        assert [(e.member, e.score, e.rank) for e in board.top(10, window=day1)] == final
        assert board.score("ann", window=day1) == 9
        assert board.rank("bob", window=day1) == 2
        assert board.count(window=day1) == 2
        assert [(e.member, e.score) for e in board.top(10, window="daily")] == [("cid", 1.0)]
        view = board.archived(day1)
        assert view is not None
        try:
            assert [e.member for e in view.around("ann", 1, 1).entries] == ["ann", "bob"]
            with pytest.raises(JournalError):
                view.submit("eve", 1)
        finally:
            view.close()
        # a member removed after the archive leaves it too (moderation of a closed window)
        assert board.remove("bob", actor="mod", reason="cheating")  # from all-time
        assert [(e.member, e.score, e.rank) for e in board.top(10, window=day1)] == [
            ("ann", 9.0, 1)
        ]
        assert board.score("bob", window=day1) is None
    finally:
        board.close()


def test_rebuild_and_rebuild_all(index: Index, tmp_path: Path) -> None:
    clock = Clock()
    url = url_of(tmp_path / "journal.db")
    boards = [
        Leaderboard(index.backend(), "xp", operator="incr", journal=url, clock=clock),
        Leaderboard(
            index.backend(), "laps", higher_is_better=False, windows=("all", "daily"),
            journal=url, clock=clock,
        ),
    ]  # fmt: skip
    for i in range(30):
        boards[0].submit(f"m{i % 7}", i)
        boards[1].submit(f"m{i % 5}", 100 - i)
    boards[0].set_member_data("m1", "One")
    before = [[(e.member, e.score, e.rank) for e in b.top(20)] for b in boards]
    assert boards[0].rebuild() >= 0
    assert [(e.member, e.score, e.rank) for e in boards[0].top(20)] == before[0]
    for board in boards:
        board.close()
    backend = index.backend()
    if index.kind == "memory":
        fresh = backend
    else:
        index.flush()
        fresh = backend
    found = Leaderboard.rebuild_all(fresh, url)
    assert set(found) == {"xp", "laps"} and None not in found.values()
    again = [
        Leaderboard(fresh, "xp", operator="incr", clock=clock),
        Leaderboard(fresh, "laps", higher_is_better=False, windows=("all", "daily"), clock=clock),
    ]
    assert [[(e.member, e.score, e.rank) for e in b.top(20)] for b in again] == before
    assert again[0].member_data(["m1"])["m1"].display_name == "One"
    fresh.close()


def test_a_configured_board_is_recorded_before_its_first_write(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/j.db"
    with open_journal(url) as store:
        board = Leaderboard("memory://", "arena", operator="incr", keep=10, journal=store)
        assert Leaderboard.recorded_configs(store) == {}
        board.record_config()
        last = store.last_seq()
        board.record_config()  # the same configuration: nothing more is written
        assert store.last_seq() == last
        found = Leaderboard.recorded_configs(store)
        assert found["arena"] is not None
        assert (found["arena"]["operator"], found["arena"]["keep"]) == ("incr", 10)
        again = Leaderboard("memory://", "arena", journal=store, **found["arena"])
        assert again.config == board.config
        with pytest.raises(BoardConfigError, match="no journal"):
            Leaderboard("memory://", "plain").record_config()


def test_the_asyncio_board_writes_its_snapshot_file_off_the_loop(tmp_path: Path) -> None:
    """Writing and fsyncing a snapshot file takes tenths of a second on a large board: the
    asyncio board does it in a worker thread, so its event loop keeps answering."""
    import threading

    writers: list[int] = []

    async def main() -> int:
        board = AsyncLeaderboard(
            AsyncMemoryBackend(), "offloop", journal=url_of(tmp_path / "journal.db")
        )
        async with board:
            await board.submit("ann", 1)
            snapshots = board._journal.snapshots  # type: ignore[union-attr]
            assert snapshots is not None
            write = snapshots.write

            def spy(*args: Any) -> Any:
                writers.append(threading.get_ident())
                return write(*args)

            snapshots.write = spy  # type: ignore[method-assign]
            assert await board.snapshot() == 2  # the configuration, then the submission
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert writers and loop_thread not in writers
