"""Leaderboard operations on every backend, against raw redis-py and the bare engine.

Run from the repository root (after ``pip install -e .[bench]``)::

    python benchmarks/leaderboard.py               # n = 1,000,000 members
    python benchmarks/leaderboard.py --quick       # smoke run: n = 10,000, few ops (CI)
    python benchmarks/leaderboard.py --size 100000 --repeats 7
    python benchmarks/leaderboard.py --markdown    # also write benchmarks/RESULTS-leaderboard.md
    python benchmarks/leaderboard.py --engine-only # section 3 only (memory://, no servers)
    python benchmarks/leaderboard.py --memory-only # sections 1 and 3 on memory:// alone

One run starts a private redis-server and a private 3-master Redis Cluster on free
loopback ports, loads the same board (members ``player:N``, random integer scores up to
10 n from a fixed seed, so nearly every score is distinct) into ``memory://``,
``redis://`` and ``redis+cluster://``, and measures four things side by side:

1. each Leaderboard operation's median latency and single-thread throughput per backend;
2. on Redis and the cluster, one raw redis-py command on the same server and data next to
   each operation (ratio: target <= 1.3x), and the round trips each operation makes
   (requests counted on the client's connections; commands counted by the server);
3. memory: ``Leaderboard.submit`` (which returns the new rank) against the engine's own
   ``SortedSet.add`` + ``SortedSet.rank`` at 10k, 100k and n members (target <= 1.3x);
4. dense rank near the bottom of the board on Redis against the distinct-score scan of
   seed 000 (ZSCORE, then a Lua ZREVRANGEBYSCORE that counts distinct scores; target >= 100x).

Repetitions go round-robin over the systems compared, so load on a shared machine hits
them alike; every figure is a median.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    # Run as a script: the repository root replaces this folder on the path, so that
    # benchmarks/queue.py does not shadow the standard library's queue (redis-py needs it).
    sys.path[0] = str(HERE.parent)
elif str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from benchmarks._leaderboard_servers import BenchCluster  # noqa: E402 - path set above
from benchmarks._servers import BenchRedis  # noqa: E402
from benchmarks.engine import _fmt_time, machine_info  # noqa: E402

SEED = 20240607
BOARD = "bench"
LOAD_CHUNK = 1000
TARGET_RAW = 1.3
TARGET_ENGINE = 1.3
TARGET_DENSE = 100.0

# (operation, the one raw redis-py command it is compared with)
OPS: tuple[tuple[str, str], ...] = (
    ("submit (best)", "ZADD GT"),
    ("submit (incr)", "ZINCRBY"),
    ("score", "ZSCORE"),
    ("rank (unique)", "ZREVRANK"),
    ("rank (competition)", "ZREVRANK"),
    ("rank (dense)", "ZREVRANK"),
    ("top(10)", "ZREVRANGE 0 9 WITHSCORES"),
    ("page after cursor (10)", "ZREVRANGEBYSCORE (s -inf LIMIT 0 11"),
    ("around(5, 5)", "ZREVRANGE i-5 i+5 WITHSCORES"),
    ("ranks_of(10 members)", "ZMSCORE (10 members)"),
    ("count", "ZCARD"),
    ("count_between", "ZCOUNT"),
    ("percentile", "ZSCORE"),
)
OP_NAMES = tuple(name for name, _ in OPS)
RAW_OF = dict(OPS)
RANKS_OF = "ranks_of(10 members)"
BY_HAND = "by hand"

Batch = Callable[[int], None]
"""Runs the first ``k`` inputs of one operation's batch."""


@dataclass
class Settings:
    size: int
    ops_fast: int  # batch for in-process systems
    ops_slow: int  # batch for systems paying a network round trip per call
    repeats: int
    engine_sizes: list[int]
    engine_ops: int
    dense_members: int
    dense_repeats: int
    count_calls: int


@dataclass
class Inputs:
    """The same arguments for every system, drawn once per run."""

    members: list[str]
    scores: list[float]
    groups: list[list[str]]
    cursors: list[str] = field(default_factory=list)
    cursor_points: list[float] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    lows: list[float] = field(default_factory=list)
    highs: list[float] = field(default_factory=list)


def make_pairs(size: int) -> list[tuple[str, float]]:
    rng = random.Random(SEED)
    return [(f"player:{n}", float(rng.randint(0, 10 * size))) for n in range(size)]


def make_inputs(size: int, count: int) -> Inputs:
    rng = random.Random(SEED + 1)
    members = [f"player:{rng.randrange(size)}" for _ in range(count)]
    scores = [float(rng.randint(0, 10 * size)) for _ in range(count)]
    groups = [[f"player:{rng.randrange(size)}" for _ in range(10)] for _ in range(count)]
    lows = [float(rng.randint(0, 9 * size)) for _ in range(count)]
    highs = [low + size for low in lows]  # about 10% of the board
    return Inputs(members, scores, groups, lows=lows, highs=highs)


# -- the systems --------------------------------------------------------------------------
@dataclass
class Side:
    """One backend: the board, and (for Redis) a raw client on the same server and data."""

    name: str
    board: Any
    slow: bool
    raw: Any = None
    key: bytes = b""
    copy_key: bytes = b""
    node_ports: list[int] = field(default_factory=list)
    round_trips: dict[str, float] = field(default_factory=dict)  # op -> requests per call
    server_commands: dict[str, float] = field(default_factory=dict)  # op -> commands per call

    def batch(self, settings: Settings) -> int:
        return settings.ops_slow if self.slow else settings.ops_fast


def board_batches(board: Any, inputs: Inputs) -> dict[str, Batch]:
    """Each Leaderboard operation as a batch runner."""
    members, scores, groups = inputs.members, inputs.scores, inputs.groups
    cursors, lows, highs = inputs.cursors, inputs.lows, inputs.highs
    submit, score, rank = board.submit, board.score, board.rank

    def best(k: int) -> None:
        for member, value in zip(members[:k], scores[:k], strict=True):
            submit(member, value, operator="best")

    def incr(k: int) -> None:
        for member in members[:k]:
            submit(member, 1, operator="incr")

    def scores_of(k: int) -> None:
        for member in members[:k]:
            score(member)

    def ranks_in(style: str) -> Batch:
        def run(k: int) -> None:
            for member in members[:k]:
                rank(member, style=style)

        return run

    def top(k: int) -> None:
        for _ in range(k):
            board.top(10)

    def page(k: int) -> None:
        for cursor in cursors[:k]:
            board.page(cursor)

    def around(k: int) -> None:
        for member in members[:k]:
            board.around(member, 5, 5)

    def ranks_of(k: int) -> None:
        for group in groups[:k]:
            board.ranks_of(group)

    def count(k: int) -> None:
        for _ in range(k):
            board.count()

    def count_between(k: int) -> None:
        for low, high in zip(lows[:k], highs[:k], strict=True):
            board.count_between(low, high)

    def percentile(k: int) -> None:
        for member in members[:k]:
            board.percentile(member)

    runs: list[Batch] = [best, incr, scores_of, ranks_in("unique"), ranks_in("competition")]
    runs += [ranks_in("dense"), top, page, around, ranks_of, count, count_between, percentile]
    return dict(zip(OP_NAMES, runs, strict=True))


def raw_batches(client: Any, key: bytes, copy_key: bytes, inputs: Inputs) -> dict[str, Batch]:
    """The one raw redis-py command each operation is compared with (writes go to a copy of
    the board so they do not bypass the board's dense-rank companions)."""
    members, scores, groups = inputs.members, inputs.scores, inputs.groups
    points, positions = inputs.cursor_points, inputs.positions
    lows, highs = inputs.lows, inputs.highs

    def zadd(k: int) -> None:
        for member, value in zip(members[:k], scores[:k], strict=True):
            client.zadd(copy_key, {member: value}, gt=True)

    def zincrby(k: int) -> None:
        for member in members[:k]:
            client.zincrby(copy_key, 1, member)

    def zscore(k: int) -> None:
        for member in members[:k]:
            client.zscore(key, member)

    def zrevrank(k: int) -> None:
        for member in members[:k]:
            client.zrevrank(key, member)

    def top(k: int) -> None:
        for _ in range(k):
            client.zrevrange(key, 0, 9, withscores=True)

    def page(k: int) -> None:
        for point in points[:k]:
            client.zrevrangebyscore(key, f"({point!r}", "-inf", start=0, num=11, withscores=True)

    def around(k: int) -> None:
        for at in positions[:k]:
            client.zrevrange(key, max(0, at - 5), at + 5, withscores=True)

    def zmscore(k: int) -> None:
        for group in groups[:k]:
            client.zmscore(key, group)

    def zcard(k: int) -> None:
        for _ in range(k):
            client.zcard(key)

    def zcount(k: int) -> None:
        for low, high in zip(lows[:k], highs[:k], strict=True):
            client.zcount(key, low, high)

    runs: list[Batch] = [zadd, zincrby, zscore, zrevrank, zrevrank, zrevrank, top, page]
    runs += [around, zmscore, zcard, zcount, zscore]
    return dict(zip(OP_NAMES, runs, strict=True))


def ranks_by_hand(client: Any, key: bytes, inputs: Inputs) -> Batch:
    """What a redis-py user writes for competition ranks of a group: ZMSCORE, then one
    pipeline of ``ZCOUNT key (s +inf`` per present member: two round trips."""
    groups = inputs.groups

    def run(k: int) -> None:
        for group in groups[:k]:
            found = client.zmscore(key, group)
            pipe = client.pipeline(transaction=False)
            for value in found:
                if value is not None:
                    pipe.zcount(key, f"({value!r}", "+inf")
            pipe.execute()

    return run


def load_board(board: Any, pairs: Sequence[tuple[str, float]]) -> None:
    """Load through the board (so the Redis companions are maintained as in production)."""
    for start in range(0, len(pairs), LOAD_CHUNK):
        board.submit_many(pairs[start : start + LOAD_CHUNK], operator="set")


def _interleaved(runs: Sequence[tuple[str, Callable[[], None]]], repeats: int) -> dict[str, float]:
    """Median seconds of each run; repetitions go round-robin over the runs so a burst of
    load on this shared machine hits every system alike."""
    samples: dict[str, list[float]] = {name: [] for name, _ in runs}
    for _ in range(repeats):
        for name, run in runs:
            start = time.perf_counter()
            run()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


# -- 1 + 2: every operation on every backend, raw redis-py beside it --------------------------
@dataclass
class MainTable:
    size: int
    sides: list[str]
    seconds: dict[str, dict[str, float]] = field(default_factory=dict)  # op -> column -> s/op
    round_trips: dict[str, dict[str, float]] = field(default_factory=dict)  # op -> side -> n
    server_commands: dict[str, dict[str, float]] = field(default_factory=dict)


def prepare_inputs(sides: Sequence[Side], inputs: Inputs, count: int) -> None:
    """Cursors, cursor points and positions read from the (identical) board before timing."""
    board = sides[0].board
    rng = random.Random(SEED + 2)
    size = board.count()
    for _ in range(count):
        page = board.page_at(rng.randrange(max(1, size - 20)), 10)
        assert page.next_cursor is not None
        inputs.cursors.append(page.next_cursor)
        inputs.cursor_points.append(page.entries[-1].score)
    for member in inputs.members:
        found = board.rank(member, style="unique")
        inputs.positions.append(0 if found is None else found - 1)


def run_main(sides: Sequence[Side], inputs: Inputs, settings: Settings) -> MainTable:
    table = MainTable(settings.size, [side.name for side in sides])
    batches = {side.name: board_batches(side.board, inputs) for side in sides}
    raws = {
        side.name: raw_batches(side.raw, side.key, side.copy_key, inputs)
        for side in sides
        if side.raw is not None
    }
    for op in OP_NAMES:
        print(f"  {op} ...", file=sys.stderr, flush=True)
        runs: list[tuple[str, Callable[[], None]]] = []
        counts: dict[str, int] = {}
        for side in sides:
            k = side.batch(settings)
            counts[side.name] = k
            runs.append((side.name, _bind(batches[side.name][op], k)))
            if side.name in raws:
                counts[f"{side.name} raw"] = k
                runs.append((f"{side.name} raw", _bind(raws[side.name][op], k)))
                if op == RANKS_OF:
                    by_hand = ranks_by_hand(side.raw, side.key, inputs)
                    counts[f"{side.name} {BY_HAND}"] = k
                    runs.append((f"{side.name} {BY_HAND}", _bind(by_hand, k)))
        medians = _interleaved(runs, settings.repeats)
        table.seconds[op] = {name: medians[name] / counts[name] for name in medians}
    return table


def _bind(batch: Batch, k: int) -> Callable[[], None]:
    return lambda: batch(k)


# -- round trips ----------------------------------------------------------------------------
class RequestCounter:
    """Counts the requests redis-py writes on any connection while active (one per round
    trip when, as here, nothing is pipelined). It wraps redis-py's connection class for the
    untimed counting pass only; the timed runs use the unwrapped class."""

    def __init__(self) -> None:
        self.sent = 0
        self._original: Any = None

    def __enter__(self) -> RequestCounter:
        from redis.connection import AbstractConnection

        original: Any = AbstractConnection.send_packed_command
        counter = self

        def counted(connection: Any, command: Any, check_health: bool = True) -> None:
            counter.sent += 1
            original(connection, command, check_health)

        self._original = original
        AbstractConnection.send_packed_command = counted  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        from redis.connection import AbstractConnection

        AbstractConnection.send_packed_command = self._original  # type: ignore[method-assign]


def _commands_processed(ports: Sequence[int]) -> int:
    import redis

    total = 0
    for port in ports:
        client = redis.Redis(host="127.0.0.1", port=port)
        total += int(client.info("stats")["total_commands_processed"])
        client.close()
    return total


def count_round_trips(side: Side, inputs: Inputs, settings: Settings) -> None:
    """Per operation: requests the board's client wrote (round trips) and commands the
    server(s) ran, including those inside scripts (INFO's own calls subtracted)."""
    batches = board_batches(side.board, inputs)
    calls = settings.count_calls
    for op in OP_NAMES:
        batches[op](1)  # a first call may load its script (NOSCRIPT, EVAL): not counted
        before = _commands_processed(side.node_ports)
        with RequestCounter() as counter:
            batches[op](calls)
        after = _commands_processed(side.node_ports)
        side.round_trips[op] = counter.sent / calls
        side.server_commands[op] = (after - before - len(side.node_ports)) / calls


# -- 3: memory board against the bare engine ----------------------------------------------
@dataclass
class EngineRow:
    size: int
    seconds: dict[str, float]


ENGINE_COLUMNS = (
    "Leaderboard.submit (set)",
    "engine add + rank",
    "Leaderboard.submit (best)",
    "engine add(gt) + rank",
)
ASYNC_COLUMN = "AsyncLeaderboard.submit (set), awaited"


def run_engine(board: Any, size: int, settings: Settings) -> EngineRow:
    """Leaderboard.submit on ``memory://`` against SortedSet.add + SortedSet.rank on the
    same data, with the same (member, score) sequence. The engine's set is built as the
    board's was (the same pairs, added in the same chunks), not copied: a copy lays its
    nodes out in rank order, which at 1M makes every walk cheaper than on a set built by
    inserts (about 1.9 against 2.4 us per add + rank here)."""
    from ranked.backends.memory import AsyncMemoryBackend
    from ranked.engine.zset import SortedSet
    from ranked.leaderboard import AsyncLeaderboard

    zset = SortedSet(raw=True)
    pairs = [(member.encode(), score) for member, score in make_pairs(size)]
    for start in range(0, size, LOAD_CHUNK):
        zset.add_many(pairs[start : start + LOAD_CHUNK])
    assert len(zset) == board.count()
    inputs = make_inputs(size, settings.engine_ops)
    members, scores = inputs.members, inputs.scores
    encoded = [member.encode() for member in members]
    submit, add, rank = board.submit, zset.add, zset.rank
    style = board.config.rank_style.value

    def board_run(operator: str) -> Callable[[], None]:
        def run() -> None:
            for member, value in zip(members, scores, strict=True):
                submit(member, value, operator=operator)

        return run

    def engine_run(gt: bool) -> Callable[[], None]:
        def run() -> None:
            for member, value in zip(encoded, scores, strict=True):
                add(member, value, gt=gt)
                rank(member, style=style, reverse=True)

        return run

    # The async twin on the same data (its backend wraps the sync board's).
    aboard = AsyncLeaderboard(AsyncMemoryBackend(sync=board.backend), board.name)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(aboard.submit(members[0], scores[0], operator="set"))

    async def awaited() -> None:
        asubmit = aboard.submit
        for member, value in zip(members, scores, strict=True):
            await asubmit(member, value, operator="set")

    runs = list(
        zip(
            ENGINE_COLUMNS,
            (board_run("set"), engine_run(False), board_run("best"), engine_run(True)),
            strict=True,
        )
    )
    runs.append((ASYNC_COLUMN, lambda: loop.run_until_complete(awaited())))
    medians = _interleaved(runs, settings.repeats)
    loop.close()
    return EngineRow(size, {name: value / len(members) for name, value in medians.items()})


# -- 4: dense rank near the bottom against the seed's scan ----------------------------------
# The seed's algorithm, rewritten: fetch every (member, score) strictly above the score,
# best first, and count the distinct scores among them.
DENSE_SCAN_LUA = """
local rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', ARGV[1], 'WITHSCORES')
local distinct, found = 0, {}
for at = 2, #rows, 2 do
  local score = rows[at]
  if found[score] == nil then
    found[score] = true
    distinct = distinct + 1
  end
end
return distinct
"""


@dataclass
class DenseResult:
    size: int
    members: list[str]
    ranks: list[int]
    seconds: dict[str, float]
    agree: bool


def run_dense(side: Side, settings: Settings) -> DenseResult:
    client, key, board = side.raw, side.key, side.board
    scan = client.register_script(DENSE_SCAN_LUA)
    # The bottom of a high-first board: the lowest scores (a few places above the very end).
    bottom = client.zrange(key, 5, 5 + settings.dense_members - 1)
    members = [member.decode() for member in bottom]

    def seed_rank(member: str) -> int | None:
        found = client.zscore(key, member)
        if found is None:
            return None
        return int(scan(keys=[key], args=[f"({found!r}"])) + 1

    ours = [board.rank(member, style="dense") for member in members]
    theirs = [seed_rank(member) for member in members]

    def board_run() -> None:
        for member in members:
            board.rank(member, style="dense")

    def seed_run() -> None:
        for member in members:
            seed_rank(member)

    medians = _interleaved(
        [("Leaderboard.rank(dense)", board_run), ("seed 000 scan", seed_run)],
        settings.dense_repeats,
    )
    per_call = {name: value / len(members) for name, value in medians.items()}
    return DenseResult(settings.size, members, [r or 0 for r in ours], per_call, ours == theirs)


# -- reporting ------------------------------------------------------------------------------
def _rate(seconds: float) -> str:
    per_second = 1 / seconds
    if per_second >= 1e6:
        return f"{per_second / 1e6:.2f}M/s"
    if per_second >= 1e3:
        return f"{per_second / 1e3:.1f}k/s"
    return f"{per_second:.0f}/s"


def _cell(seconds: float | None) -> str:
    return "-" if seconds is None else f"{_fmt_time(seconds)} ({_rate(seconds)})"


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def render_main(table: MainTable, sides: Sequence[Side]) -> str:
    header = ["operation", "raw command"]
    for side in sides:
        header.append(side.name)
        if side.raw is not None:
            header += [f"{side.name}: raw", f"{side.name}: ratio"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for op in OP_NAMES:
        row = table.seconds[op]
        cells = [op, f"`{RAW_OF[op]}`"]
        for side in sides:
            cells.append(_cell(row.get(side.name)))
            if side.raw is not None:
                ratio = row[side.name] / row[f"{side.name} raw"]
                cells.append(_cell(row[f"{side.name} raw"]))
                cells.append(f"{ratio:.2f}x {_verdict(ratio <= TARGET_RAW)}")
        lines.append("| " + " | ".join(cells) + " |")
    row = table.seconds[RANKS_OF]
    notes = [
        f"{side.name} {_cell(row[side.name])} against {_cell(row[f'{side.name} {BY_HAND}'])}, "
        f"{row[side.name] / row[f'{side.name} {BY_HAND}']:.2f}x"
        for side in sides
        if side.raw is not None
    ]
    lines += [
        "",
        f"{RANKS_OF} against what a redis-py user writes for the same competition ranks "
        "(ZMSCORE, then one pipeline of a ZCOUNT per member: two round trips): "
        + "; ".join(notes)
        + ". ZMSCORE alone returns scores, not ranks: each rank costs the server one walk "
        "down the skip list, which ZMSCORE does not.",
    ]
    return "\n".join(lines) + "\n"


def render_round_trips(sides: Sequence[Side]) -> str:
    counted = [side for side in sides if side.raw is not None]
    header = ["operation"]
    for side in counted:
        header += [f"{side.name}: round trips", f"{side.name}: server commands"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for op in OP_NAMES:
        cells = [op]
        for side in counted:
            trips = side.round_trips[op]
            cells.append(f"{trips:g} {_verdict(trips == 1)}")
            cells.append(f"{side.server_commands[op]:g}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_engine(rows: Sequence[EngineRow]) -> str:
    header = ["n", *ENGINE_COLUMNS, "set: ratio", "best: ratio", ASYNC_COLUMN]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        s = row.seconds
        set_ratio = s[ENGINE_COLUMNS[0]] / s[ENGINE_COLUMNS[1]]
        best_ratio = s[ENGINE_COLUMNS[2]] / s[ENGINE_COLUMNS[3]]
        cells = [f"{row.size:,}", *(_cell(s[name]) for name in ENGINE_COLUMNS)]
        cells += [
            f"{set_ratio:.2f}x {_verdict(set_ratio <= TARGET_ENGINE)}",
            f"{best_ratio:.2f}x {_verdict(best_ratio <= TARGET_ENGINE)}",
            _cell(s[ASYNC_COLUMN]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_dense(result: DenseResult) -> str:
    ours = result.seconds["Leaderboard.rank(dense)"]
    theirs = result.seconds["seed 000 scan"]
    speedup = theirs / ours
    header = ["n", "dense ranks asked", "Leaderboard.rank(dense)", "seed 000 scan", "speedup"]
    cells = [
        f"{result.size:,}",
        f"{min(result.ranks):,}..{max(result.ranks):,}",
        _cell(ours),
        _cell(theirs),
        f"{speedup:,.0f}x {_verdict(speedup >= TARGET_DENSE)}",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.append("| " + " | ".join(cells) + " |")
    agree = "yes" if result.agree else "NO (a bug: the two disagree)"
    return "\n".join(lines) + f"\n\nBoth give the same dense ranks: {agree}.\n"


def render_all(
    table: MainTable,
    sides: Sequence[Side],
    engine_rows: Sequence[EngineRow],
    dense: DenseResult,
    settings: Settings,
) -> str:
    return "\n".join(
        [
            f"### 1-2. Every operation, n = {settings.size:,} (median per op, single thread)",
            "",
            "Each cell: latency (throughput). *ratio* = the operation / the one raw redis-py "
            f"command beside it on the same server and data (target <= {TARGET_RAW}x).",
            "",
            render_main(table, sides),
            "### 2. Round trips per operation",
            "",
            "*round trips*: requests written by a counting redis-py connection (target 1); "
            "*server commands*: commands the server ran per operation, those inside the Lua "
            "script included (INFO `total_commands_processed`).",
            "",
            render_round_trips(sides),
            "### 3. memory://: Leaderboard.submit against the engine's own update + rank",
            "",
            "Leaderboard.submit returns the new (and previous) rank; the engine baseline is "
            "`SortedSet.add` then `SortedSet.rank(style='competition', reverse=True)` on a "
            "set built from the same pairs by the same inserts as the board "
            f"(target <= {TARGET_ENGINE}x). The last column is informational: the async "
            "board on the same data, awaited in a loop.",
            "",
            render_engine(engine_rows),
            f"### 4. Dense rank near the bottom, redis://, n = {dense.size:,}",
            "",
            "Members a few places above the bottom of the board. The seed 000 scan is ZSCORE "
            "then one EVALSHA of a script reading every row above the score "
            "(ZREVRANGEBYSCORE +inf (s WITHSCORES) and counting distinct scores; "
            f"target >= {TARGET_DENSE:.0f}x).",
            "",
            render_dense(dense),
        ]
    )


def write_markdown(report: str, settings: Settings, machine: str) -> None:
    parts = [
        "# Leaderboard benchmark results",
        "",
        "Written by `python benchmarks/leaderboard.py --markdown`; do not edit by hand.",
        "",
        machine,
        "",
        f"Board `{BOARD}` (higher is better, competition ranks by default, all-time window), "
        "members `player:N` with random integer scores up to 10 n (fixed seed), loaded "
        "through the board into every backend. Redis: a private redis-server; cluster: three "
        "private masters joined by `redis-cli --cluster create`, all on loopback. Medians of "
        f"{settings.repeats} round-robin repetitions over batches of {settings.ops_fast:,} "
        f"calls (memory) and {settings.ops_slow:,} calls (Redis, cluster, raw redis-py).",
        "",
        report,
    ]
    (HERE / "RESULTS-leaderboard.md").write_text("\n".join(parts))


# -- main -----------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="members on the board")
    parser.add_argument("--quick", action="store_true", help="smoke run: 10k members, few ops")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions (median)")
    parser.add_argument(
        "--markdown", action="store_true", help="write benchmarks/RESULTS-leaderboard.md"
    )
    parser.add_argument(
        "--engine-only",
        action="store_true",
        help="run only section 3 (memory board against the engine; starts no server)",
    )
    parser.add_argument(
        "--memory-only",
        action="store_true",
        help="run sections 1 and 3 on memory:// alone (starts no server)",
    )
    return parser.parse_args(argv)


def settings_from(args: argparse.Namespace) -> Settings:
    if args.quick:
        return Settings(10_000, 300, 100, 3, [10_000], 2_000, 3, 2, 20)
    sizes = sorted({s for s in (10_000, 100_000) if s < args.size} | {args.size})
    return Settings(args.size, 10_000, 1_000, args.repeats, sizes, 20_000, 5, 3, 50)


def open_side(name: str, url: str, slow: bool, node_ports: list[int]) -> Side:
    from ranked.backends.factory import open_backend
    from ranked.leaderboard import Leaderboard

    board = Leaderboard(open_backend(url), BOARD)
    side = Side(name, board, slow, node_ports=node_ports)
    if slow:
        side.raw = getattr(board.backend, "client")  # noqa: B009 - the same redis-py client the backend uses
        side.key = board.config.keys.window("all")
        side.copy_key = board.config.keys.prefix + b":rawcopy"  # same hash slot
    return side


def engine_rows_for(settings: Settings, loaded: Any = None) -> list[EngineRow]:
    """Section 3 at every engine size; ``loaded`` is a memory board already holding n."""
    rows = []
    for size in settings.engine_sizes:
        if size == settings.size and loaded is not None:
            board = loaded
        else:
            board = open_side("memory", f"memory://bench-{size}", False, []).board
            load_board(board, make_pairs(size))
        rows.append(run_engine(board, size, settings))
    return rows


def main_engine_only(settings: Settings) -> int:
    print("memory board against the engine", file=sys.stderr, flush=True)
    report = "\n".join(
        [
            "### 3. memory://: Leaderboard.submit against the engine's own update + rank",
            "",
            render_engine(engine_rows_for(settings)),
        ]
    )
    print(report, flush=True)
    return 0


def main_memory_only(settings: Settings) -> int:
    """Sections 1 and 3 on ``memory://`` alone: the figures a change to the memory path is
    judged by (run before and after it, alternating, and compare medians)."""
    side = open_side("memory", f"memory://bench-{settings.size}", False, [])
    print(f"loading {settings.size:,} members into memory ...", file=sys.stderr, flush=True)
    load_board(side.board, make_pairs(settings.size))
    inputs = make_inputs(settings.size, settings.ops_fast)
    prepare_inputs([side], inputs, settings.ops_slow)
    inputs.cursors = (inputs.cursors * (settings.ops_fast // len(inputs.cursors) + 1))[
        : settings.ops_fast
    ]
    print(f"n = {settings.size:,}: every operation", file=sys.stderr, flush=True)
    table = run_main([side], inputs, settings)
    print("memory board against the engine", file=sys.stderr, flush=True)
    engine_rows = engine_rows_for(settings, side.board)
    lines = ["| operation | memory |", "|---|---|"]
    lines += [f"| {op} | {_cell(table.seconds[op]['memory'])} |" for op in OP_NAMES]
    report = "\n".join(
        [
            f"### 1. Every operation on memory://, n = {settings.size:,}",
            "",
            "\n".join(lines),
            "",
            "### 3. memory://: Leaderboard.submit against the engine's own update + rank",
            "",
            render_engine(engine_rows),
        ]
    )
    print(report, flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    settings = settings_from(args)
    if args.engine_only:
        return main_engine_only(settings)
    if args.memory_only:
        return main_memory_only(settings)
    pairs = make_pairs(settings.size)
    with BenchRedis() as server, BenchCluster() as cluster:
        redis_url = f"redis://127.0.0.1:{server.port}/0"
        sides = [
            open_side("memory", f"memory://bench-{settings.size}", False, []),
            open_side("redis", redis_url, True, [server.port]),
            open_side("cluster", cluster.url, True, cluster.ports),
        ]
        for side in sides:
            print(f"loading {settings.size:,} members into {side.name} ...", file=sys.stderr)
            started = time.perf_counter()
            load_board(side.board, pairs)
            if side.raw is not None:
                side.raw.copy(side.key, side.copy_key, replace=True)
            print(f"  {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        inputs = make_inputs(settings.size, max(settings.ops_fast, settings.ops_slow))
        prepare_inputs(sides, inputs, settings.ops_slow)
        # page inputs: in-process systems reuse the cursors cyclically
        inputs.cursors = (inputs.cursors * (settings.ops_fast // len(inputs.cursors) + 1))[
            : settings.ops_fast
        ]
        for side in sides:
            if side.raw is not None:
                count_round_trips(side, inputs, settings)
        print(f"n = {settings.size:,}: every operation", file=sys.stderr, flush=True)
        table = run_main(sides, inputs, settings)
        print("memory board against the engine", file=sys.stderr, flush=True)
        engine_rows = engine_rows_for(settings, sides[0].board)
        print("dense rank near the bottom", file=sys.stderr, flush=True)
        dense = run_dense(sides[1], settings)
        report = render_all(table, sides, engine_rows, dense, settings)
        print(report, flush=True)
        if args.markdown:
            write_markdown(report, settings, machine_info(server.version()))
        for side in sides:
            side.board.backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
