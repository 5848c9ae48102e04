"""Sorted-set engines side by side: ranked (C and pure Python) against its peers.

Run from the repository root (after ``pip install -e .[bench]``)::

    python benchmarks/engine.py                 # sizes 10k, 100k, 1M; live and bulk modes
    python benchmarks/engine.py --quick         # smoke run: 10k, few ops (CI)
    python benchmarks/engine.py --mode live --rounds 7
    python benchmarks/engine.py --huge          # also 10M (C, sortedcontainers, Redis only)
    python benchmarks/engine.py --markdown      # also write benchmarks/RESULTS.md
    python benchmarks/engine.py --systems "ranked C,sortedcontainers" --ops "top-10,incr"
                                                # only those systems and operations

Every system gets the same data: members ``player:N`` with random integer scores from a
fixed seed. Two modes, each reporting the MEDIAN per-operation time:

- live (what a live board sees): each round runs every system alone in a child process
  of its own, the order of systems rotating each round. The child grows the board by single
  inserts in random order, then times each operation on fresh random samples, every member
  string made as the call is made (as a request brings it), not the object inserted.
- bulk: every system in this process holds the same bulk-loaded set; each operation's
  batch, made of the member objects that were loaded, is timed on all of them in turn.

Slow systems (pure Python, fakeredis, Redis with one round trip per call) run smaller
batches; the per-op figure is comparable all the same. The last column is ranked C's
speedup against the fastest *peer* (every other system).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any, Protocol

HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    # Run as a script: the repository root replaces this folder on the path, so that
    # benchmarks/queue.py does not shadow the standard library's queue (redis-py needs it).
    sys.path[0] = str(HERE.parent)
elif str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from benchmarks._servers import BenchRedis  # noqa: E402 - needs the path set just above

SEED = 20240601
BOARD = "board"
OPS = (
    "bulk load",
    "bulk load (sorted input)",
    "add/update",
    "incr",
    "score",
    "index (rank)",
    "top-10",
    "around-me (+-5)",
    "range by score (100)",
    "remove",
)

Pairs = list[tuple[str, float]]


class System(Protocol):
    """One engine behind the benchmark's operations (members are ``str``)."""

    name: str
    slow: bool  # runs smaller batches
    max_size: int

    def load(self, pairs: Pairs) -> None: ...
    def grow(self, pairs: Pairs) -> None: ...
    def add(self, members: Iterable[str], scores: Iterable[float]) -> None: ...
    def incr(self, members: Iterable[str]) -> None: ...
    def score(self, members: Iterable[str]) -> None: ...
    def index(self, members: Iterable[str]) -> None: ...
    def top10(self, times: int) -> None: ...
    def around(self, members: Iterable[str]) -> None: ...
    def range_by_score(self, lows: Iterable[float]) -> None: ...
    def remove(self, members: Iterable[str]) -> None: ...
    def restore(self, pairs: Pairs) -> None: ...
    def bytes_per_member(self, pairs: Pairs) -> float: ...
    def close(self) -> None: ...


def _traced_bytes(build: Callable[[], object]) -> tuple[object, int]:
    """Bytes still allocated by ``build()``'s result (tracemalloc, after a collection)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return result, after - before


def _fresh(pairs: Pairs) -> Iterable[tuple[str, float]]:
    """The pairs with newly made member strings, so their memory counts for the structure."""
    return ((f"player:{member[7:]}", score) for member, score in pairs)


# -- ranked -----------------------------------------------------------------------------
class Ranked:
    """ranked's SortedSet: the C engine or its pure-Python twin."""

    def __init__(self, name: str, cls: Any, *, slow: bool, max_size: int) -> None:
        self.name, self.cls, self.slow, self.max_size = name, cls, slow, max_size
        self.zset: Any = cls()

    def load(self, pairs: Pairs) -> None:
        self.zset = self.cls()
        self.zset.load(pairs)

    def grow(self, pairs: Pairs) -> None:
        add = self.zset.add
        for member, score in pairs:
            add(member, score)

    def add(self, members: Iterable[str], scores: Iterable[float]) -> None:
        add = self.zset.add
        for member, score in zip(members, scores, strict=True):
            add(member, score)

    def incr(self, members: Iterable[str]) -> None:
        incr = self.zset.incr
        for member in members:
            incr(member, 1)

    def score(self, members: Iterable[str]) -> None:
        score = self.zset.score
        for member in members:
            score(member)

    def index(self, members: Iterable[str]) -> None:
        index = self.zset.index
        for member in members:
            index(member, reverse=True)

    def top10(self, times: int) -> None:
        page = self.zset.range_by_index
        for _ in range(times):
            page(0, 9, reverse=True)

    def around(self, members: Iterable[str]) -> None:
        around = self.zset.range_around
        for member in members:
            around(member, 5, 5, reverse=True)

    def range_by_score(self, lows: Iterable[float]) -> None:
        by_score = self.zset.range_by_score
        for low in lows:
            by_score(low, count=100)

    def remove(self, members: Iterable[str]) -> None:
        remove = self.zset.remove
        for member in members:
            remove(member)

    def restore(self, pairs: Pairs) -> None:
        self.zset.add_many(pairs)

    def bytes_per_member(self, pairs: Pairs) -> float:
        return int(self.zset.memory_usage()) / len(self.zset)

    def close(self) -> None:
        self.zset = self.cls()


# -- sortedcontainers -------------------------------------------------------------------
class SortedContainers:
    """A SortedList of (score, member) plus a dict member -> score: the usual Python recipe."""

    name, slow, max_size = "sortedcontainers", False, 10**8

    def __init__(self) -> None:
        from sortedcontainers import SortedList

        self.sorted_list_type = SortedList
        self.items: Any = SortedList()
        self.scores: dict[str, float] = {}

    def _build(self, pairs: Iterable[tuple[str, float]]) -> tuple[Any, dict[str, float]]:
        scores = dict(pairs)
        return self.sorted_list_type((s, m) for m, s in scores.items()), scores

    def load(self, pairs: Pairs) -> None:
        self.items, self.scores = self._build(pairs)

    def grow(self, pairs: Pairs) -> None:
        self.add((member for member, _ in pairs), (score for _, score in pairs))

    def add(self, members: Iterable[str], scores: Iterable[float]) -> None:
        items, table = self.items, self.scores
        for member, score in zip(members, scores, strict=True):
            old = table.get(member)
            if old is not None:
                items.remove((old, member))
            items.add((score, member))
            table[member] = score

    def incr(self, members: Iterable[str]) -> None:
        items, table = self.items, self.scores
        for member in members:
            old = table[member]
            items.remove((old, member))
            items.add((old + 1, member))
            table[member] = old + 1

    def score(self, members: Iterable[str]) -> None:
        get = self.scores.get
        for member in members:
            get(member)

    def index(self, members: Iterable[str]) -> None:
        items, table, last = self.items, self.scores, len(self.items) - 1
        for member in members:
            _ = last - items.bisect_left((table[member], member))

    def top10(self, times: int) -> None:
        items = self.items
        for _ in range(times):
            size = len(items)
            list(items.islice(size - 10, size, reverse=True))

    def around(self, members: Iterable[str]) -> None:
        items, table = self.items, self.scores
        for member in members:
            at = items.bisect_left((table[member], member))
            list(items.islice(max(0, at - 5), at + 6, reverse=True))

    def range_by_score(self, lows: Iterable[float]) -> None:
        items = self.items
        for low in lows:
            start = items.bisect_left((low,))
            list(items.islice(start, start + 100))

    def remove(self, members: Iterable[str]) -> None:
        items, table = self.items, self.scores
        for member in members:
            items.remove((table.pop(member), member))

    def restore(self, pairs: Pairs) -> None:
        for member, score in pairs:
            self.items.add((score, member))
            self.scores[member] = score

    def bytes_per_member(self, pairs: Pairs) -> float:
        built, size = _traced_bytes(lambda: self._build(_fresh(pairs)))
        del built
        return size / len(pairs)

    def close(self) -> None:
        self.items, self.scores = self.sorted_list_type(), {}


# -- Redis-protocol peers ---------------------------------------------------------------
class RedisLike:
    """A redis-py-shaped client: fakeredis in process, or a real server (one call per op)."""

    slow = True

    def __init__(self, name: str, client: Any, max_size: int) -> None:
        self.name, self.client, self.max_size = name, client, max_size
        self.key = f"{BOARD}:{name}"  # systems sharing one server keep separate sets

    def load(self, pairs: Pairs) -> None:
        self.client.delete(self.key)
        pipe = self.client.pipeline(transaction=False)
        for start in range(0, len(pairs), 1000):
            pipe.zadd(self.key, dict(pairs[start : start + 1000]))
            if start % 100_000 == 0:
                pipe.execute()
        pipe.execute()

    def grow(self, pairs: Pairs) -> None:
        # The server inserts the members of one ZADD one at a time, in the order given: the
        # set it builds is the one single ZADDs build, without a round trip per member.
        self.load(pairs)

    def add(self, members: Iterable[str], scores: Iterable[float]) -> None:
        zadd = self.client.zadd
        for member, score in zip(members, scores, strict=True):
            zadd(self.key, {member: score})

    def incr(self, members: Iterable[str]) -> None:
        zincrby = self.client.zincrby
        for member in members:
            zincrby(self.key, 1, member)

    def score(self, members: Iterable[str]) -> None:
        zscore = self.client.zscore
        for member in members:
            zscore(self.key, member)

    def index(self, members: Iterable[str]) -> None:
        zrevrank = self.client.zrevrank
        for member in members:
            zrevrank(self.key, member)

    def top10(self, times: int) -> None:
        zrevrange = self.client.zrevrange
        for _ in range(times):
            zrevrange(self.key, 0, 9, withscores=True)

    def around(self, members: Iterable[str]) -> None:
        zrevrank, zrevrange = self.client.zrevrank, self.client.zrevrange
        for member in members:
            at = zrevrank(self.key, member)
            zrevrange(self.key, max(0, at - 5), at + 5, withscores=True)

    def range_by_score(self, lows: Iterable[float]) -> None:
        by_score = self.client.zrangebyscore
        for low in lows:
            by_score(self.key, low, "+inf", start=0, num=100, withscores=True)

    def remove(self, members: Iterable[str]) -> None:
        zrem = self.client.zrem
        for member in members:
            zrem(self.key, member)

    def restore(self, pairs: Pairs) -> None:
        self.client.zadd(self.key, dict(pairs))

    def bytes_per_member(self, pairs: Pairs) -> float:
        usage = self.client.memory_usage(self.key, samples=0)
        return float(usage) / float(self.client.zcard(self.key))

    def close(self) -> None:
        self.client.delete(self.key)


class FakeRedis(RedisLike):
    def __init__(self) -> None:
        import fakeredis

        super().__init__("fakeredis", fakeredis.FakeStrictRedis(), 1_000_000)

    def bytes_per_member(self, pairs: Pairs) -> float:
        import fakeredis

        def build() -> object:
            client = fakeredis.FakeStrictRedis()
            for start in range(0, len(pairs), 1000):
                client.zadd(self.key, dict(_fresh(pairs[start : start + 1000])))
            return client

        client, size = _traced_bytes(build)
        del client
        return size / len(pairs)


class PipelinedRedis(RedisLike):
    """The same commands sent in pipelines of 1000 (one round trip per 1000 ops)."""

    slow = False
    BATCH = 1000

    def _run(self, items: Iterable[Any], queue: Callable[[Any, Any], None]) -> list[Any]:
        results: list[Any] = []
        rest = iter(items)
        while batch := list(islice(rest, self.BATCH)):
            pipe = self.client.pipeline(transaction=False)
            for item in batch:
                queue(pipe, item)
            results += pipe.execute()
        return results

    def add(self, members: Iterable[str], scores: Iterable[float]) -> None:
        self._run(zip(members, scores, strict=True), lambda p, ms: p.zadd(self.key, {ms[0]: ms[1]}))

    def incr(self, members: Iterable[str]) -> None:
        self._run(members, lambda p, m: p.zincrby(self.key, 1, m))

    def score(self, members: Iterable[str]) -> None:
        self._run(members, lambda p, m: p.zscore(self.key, m))

    def index(self, members: Iterable[str]) -> None:
        self._run(members, lambda p, m: p.zrevrank(self.key, m))

    def top10(self, times: int) -> None:
        self._run(range(times), lambda p, _: p.zrevrange(self.key, 0, 9, withscores=True))

    def around(self, members: Iterable[str]) -> None:
        # Two pipelined passes: every rank first, then every page around it.
        ranks = self._run(members, lambda p, m: p.zrevrank(self.key, m))
        self._run(
            ranks, lambda p, at: p.zrevrange(self.key, max(0, at - 5), at + 5, withscores=True)
        )

    def range_by_score(self, lows: Iterable[float]) -> None:
        self._run(
            lows,
            lambda p, low: p.zrangebyscore(
                self.key, low, "+inf", start=0, num=100, withscores=True
            ),
        )

    def remove(self, members: Iterable[str]) -> None:
        self._run(members, lambda p, m: p.zrem(self.key, m))


# -- measuring --------------------------------------------------------------------------
@dataclass
class Settings:
    ops_fast: int  # bulk mode: calls per batch
    ops_slow: int  # bulk mode: calls per batch of the slow systems
    repeats: int  # bulk mode: repetitions of each batch
    rounds: int  # live mode: one child process per system per round
    live_fast: int = 10_000  # live mode: calls per batch
    live_slow: int = 200  # live mode: calls per batch of the slow systems
    batches: int = 3  # live mode: batches per op in each child, each a fresh sample


@dataclass
class Table:
    mode: str
    size: int
    systems: list[str]
    seconds: dict[str, dict[str, float]] = field(default_factory=dict)  # op -> system -> s/op
    bytes_per_member: dict[str, float] = field(default_factory=dict)


def _operation(
    system: System,
    op: str,
    count: int,
    members: Iterable[str],
    new_scores: Sequence[float],
    lows: Sequence[float],
) -> Callable[[], None]:
    """A no-argument call running ``op`` ``count`` times, once per member of the batch."""
    runs: dict[str, Callable[[], None]] = {
        "add/update": lambda: system.add(members, new_scores),
        "incr": lambda: system.incr(members),
        "score": lambda: system.score(members),
        "index (rank)": lambda: system.index(members),
        "top-10": lambda: system.top10(count),
        "around-me (+-5)": lambda: system.around(members),
        "range by score (100)": lambda: system.range_by_score(lows),
        "remove": lambda: system.remove(members),
    }
    return runs[op]


@dataclass
class Inputs:
    """One operation's batch: the same members, scores and bounds for every system."""

    members: list[str]
    new_scores: list[float]
    lows: list[float]
    scores: dict[str, float]
    settings: Settings

    def count(self, system: System) -> int:
        """Slow systems run a prefix of the batch; times are reported per operation."""
        limit = self.settings.ops_slow if system.slow else self.settings.ops_fast
        return min(limit, len(self.members))

    def run(self, system: System, *, op: str) -> Callable[[], None]:
        n = self.count(system)
        return _operation(system, op, n, self.members[:n], self.new_scores[:n], self.lows[:n])

    def put_back(self, system: System) -> None:
        """Undo a repetition's writes so every repetition sees the same set."""
        chosen = self.members[: self.count(system)]
        system.restore([(member, self.scores[member]) for member in chosen])


def _no_reset(system: System) -> None:
    del system


def _loader(data: Pairs) -> Callable[[System], Callable[[], None]]:
    def run(system: System) -> Callable[[], None]:
        return lambda: system.load(data)

    return run


def _interleaved(
    systems: Sequence[System],
    run: Callable[[System], Callable[[], None]],
    reset: Callable[[System], None],
    repeats: int,
) -> dict[str, float]:
    """Median seconds of ``run(system)()`` per system; repetitions go round-robin over the
    systems so a burst of load on this shared machine hits every system alike."""
    samples: dict[str, list[float]] = {system.name: [] for system in systems}
    for _ in range(repeats):
        for system in systems:
            call = run(system)
            reset(system)
            start = time.perf_counter()
            call()
            samples[system.name].append(time.perf_counter() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


def make_pairs(size: int) -> Pairs:
    rng = random.Random(SEED)
    return [(f"player:{n}", float(rng.randint(0, 10 * size))) for n in range(size)]


def run_size(
    size: int, systems: Sequence[System], settings: Settings, ops: Sequence[str] = OPS[2:]
) -> Table:
    """Bulk mode: every system in this process holds the same bulk-loaded set; each
    operation's batch is timed on all of them in turn, the same batch every repetition."""
    pairs = make_pairs(size)
    shuffled = pairs[:]
    random.Random(SEED + 1).shuffle(shuffled)  # bulk load sees arbitrary order
    # Sorted by (score, member bytes): the engine's O(n) bulk-load path.
    ordered = sorted(pairs, key=lambda pair: (pair[1], pair[0].encode()))
    active = [system for system in systems if size <= system.max_size]
    table = Table("Bulk-loaded", size, [system.name for system in active])
    print(f"  loading {len(active)} systems ...", file=sys.stderr, flush=True)
    load_repeats = settings.repeats if size <= 100_000 else max(1, settings.repeats // 2)
    for op, data in (("bulk load (sorted input)", ordered), ("bulk load", shuffled)):
        medians = _interleaved(active, _loader(data), _no_reset, load_repeats)
        table.seconds[op] = {name: seconds / size for name, seconds in medians.items()}

    rng = random.Random(SEED + 2)
    scores = dict(pairs)
    high = max(scores.values())
    for op in OPS[2:]:
        batch = rng.sample(range(size), min(settings.ops_fast, size))
        inputs = Inputs(
            members=[pairs[i][0] for i in batch],
            new_scores=[float(rng.randint(0, int(high))) for _ in batch],
            lows=[float(rng.randint(0, int(high))) for _ in batch],
            scores=scores,
            settings=settings,
        )
        if op not in ops:  # skipped after drawing its batch: later batches stay the same
            continue
        print(f"  {op} ...", file=sys.stderr, flush=True)
        writes = op in ("add/update", "incr", "remove")
        reset = inputs.put_back if writes else _no_reset
        medians = _interleaved(active, partial(inputs.run, op=op), reset, settings.repeats)
        table.seconds[op] = {
            system.name: medians[system.name] / inputs.count(system) for system in active
        }
        if writes:
            for system in active:
                inputs.put_back(system)
    for system in active:
        table.bytes_per_member[system.name] = system.bytes_per_member(shuffled)
        system.close()
    gc.collect()
    return table


# -- live board -------------------------------------------------------------------------
# Growing a million members one insert at a time takes these 25-35 s a round.
LIVE_MAX_SIZE = {"ranked pure Python": 100_000, "fakeredis": 100_000}


@dataclass
class LiveRun:
    """One child process: one system, one size, one round."""

    system: str
    size: int
    round: int
    calls: int
    batches: int
    ops: list[str]
    redis_port: int


def live_child(run: LiveRun) -> dict[str, float]:
    """Seconds per call of each op on a board grown by single inserts in random order; every
    call gets a member string made as the loop reaches it. Each batch is a fresh sample, timed
    100 calls at a time (the pipelined peer a pipeline at a time): on a shared machine, a run
    of calls the scheduler interrupts is then an outlier the median leaves out."""
    system = system_factories(run.redis_port)[run.system]()
    rng = random.Random(f"{SEED}/{run.size}/{run.round}")  # one board for every system
    scores = [score for _, score in make_pairs(run.size)]
    order = list(range(run.size))
    rng.shuffle(order)
    system.grow([(f"player:{i}", scores[i]) for i in order])
    gc.collect()
    high, count = 10 * run.size, min(run.calls, run.size)
    step = PipelinedRedis.BATCH if isinstance(system, PipelinedRedis) else 100
    samples: dict[str, list[float]] = {op: [] for op in run.ops}
    for _ in range(run.batches):
        for op in run.ops:
            ids = rng.sample(range(run.size), count)
            for start in range(0, count, step):
                part = ids[start : start + step]
                new_scores = [float(rng.randint(0, high)) for _ in part]
                lows = [float(rng.randint(0, high)) for _ in part]
                members = (f"player:{i}" for i in part)
                call = _operation(system, op, len(part), members, new_scores, lows)
                began = time.perf_counter()
                call()
                samples[op].append((time.perf_counter() - began) / len(part))
            if op == "remove":  # put them back, so later batches find every member
                system.restore([(f"player:{i}", scores[i]) for i in ids])
    system.close()
    return {op: statistics.median(times) for op, times in samples.items()}


def _spawn(run: LiveRun) -> dict[str, float]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(asdict(run))]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{run.system} at n = {run.size:,} failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout)
    return result


def run_live(
    size: int, systems: Sequence[System], settings: Settings, ops: Sequence[str], redis_port: int
) -> Table:
    """Live mode: each round runs every system alone in a child process of its own, the
    order of systems rotating by one each round; medians over the rounds."""
    active = [
        system for system in systems if size <= LIVE_MAX_SIZE.get(system.name, system.max_size)
    ]
    samples: dict[str, dict[str, list[float]]] = {op: {} for op in ops}
    for number in range(settings.rounds):
        turn = number % len(active)
        order = active[turn:] + active[:turn]
        names = ", ".join(system.name for system in order)
        print(f"  live round {number + 1}/{settings.rounds}: {names}", file=sys.stderr, flush=True)
        for system in order:
            start = time.perf_counter()
            calls = settings.live_slow if system.slow else settings.live_fast
            run = LiveRun(system.name, size, number, calls, settings.batches, list(ops), redis_port)
            for op, seconds in _spawn(run).items():
                samples[op].setdefault(system.name, []).append(seconds)
            took = time.perf_counter() - start
            print(f"    {system.name}: {took:.1f} s", file=sys.stderr, flush=True)
    table = Table("Live board", size, [system.name for system in active])
    for op, row in samples.items():
        table.seconds[op] = {name: statistics.median(times) for name, times in row.items()}
    return table


# -- reporting --------------------------------------------------------------------------
def _fmt_time(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.2f} us"
    return f"{seconds * 1e9:.0f} ns"


def _speedup(row: dict[str, float]) -> str:
    peers = {name: value for name, value in row.items() if name != "ranked C"}
    if "ranked C" not in row or not peers:
        return "n/a"
    best = min(peers, key=peers.__getitem__)
    return f"{peers[best] / row['ranked C']:.1f}x ({best})"


def render(table: Table) -> str:
    header = ["operation (per op)", *table.systems, "speedup vs fastest peer"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for op in (op for op in OPS if op in table.seconds):
        row = table.seconds[op]
        cells = [_fmt_time(row[name]) if name in row else "-" for name in table.systems]
        lines.append(f"| {op} | " + " | ".join(cells) + f" | {_speedup(row)} |")
    memory = table.bytes_per_member
    if memory:
        cells = [f"{memory[name]:.0f} B" if name in memory else "-" for name in table.systems]
        smaller = {name: value for name, value in memory.items() if name != "ranked C"}
        ratio = "n/a"
        if "ranked C" in memory and smaller:
            best = min(smaller, key=smaller.__getitem__)
            ratio = f"{smaller[best] / memory['ranked C']:.1f}x smaller ({best})"
        lines.append("| bytes per member | " + " | ".join(cells) + f" | {ratio} |")
    return f"### {table.mode}, n = {table.size:,}\n\n" + "\n".join(lines) + "\n"


def machine_info(redis_version: str | None) -> str:
    """The machine's lines for a RESULTS file (the redis-server line when one ran)."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "unknown"
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        ram = f"{kib / 2**20:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    server = [f"- redis-server {redis_version} (loopback TCP, redis-py + hiredis, RESP2)"]
    return "\n".join(
        [
            f"- CPU: {cpu}, {os.cpu_count()} logical cores",
            f"- RAM: {ram}",
            f"- Python {platform.python_version()} ({platform.python_implementation()}), "
            f"{platform.system()} {platform.release()}",
            *(server if redis_version else []),
            f"- date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}, load average at the "
            f"end {os.getloadavg()[0]:.1f} (other work on the machine inflates the times)",
        ]
    )


def c_baseline(sizes: Sequence[int]) -> str | None:
    """The plain-C skip-list figures at these sizes, when ``make bench-c`` has built the binary."""
    binary = HERE.parent / "build" / "c" / "bench_skiplist"  # built by ``make bench-c``
    if not binary.exists():
        return None
    sizes_arg = ",".join(str(size) for size in sizes)
    done = subprocess.run([str(binary), sizes_arg], capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else None


# -- main -------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated")
    parser.add_argument("--huge", action="store_true", help="add n = 10,000,000")
    parser.add_argument("--quick", action="store_true", help="smoke run: 10k, few ops")
    parser.add_argument(
        "--mode", choices=("both", "live", "bulk"), default="both", help="default: both"
    )
    parser.add_argument("--rounds", type=int, default=5, help="live rounds (median)")
    parser.add_argument("--repeats", type=int, default=5, help="bulk repetitions (median)")
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/RESULTS.md")
    parser.add_argument(
        "--systems",
        default="",
        help="comma-separated system names to run (default: all), e.g. 'ranked C,sortedcontainers'",
    )
    parser.add_argument(
        "--ops",
        default="",
        help="comma-separated operations to time (default: all; bulk loads always run)",
    )
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)  # a live run, as JSON
    return parser.parse_args(argv)


def system_factories(redis_port: int) -> dict[str, Callable[[], System]]:
    """Each system by name, made on demand (a live child makes only its own)."""
    import redis

    from ranked.engine._zset import SortedSet as CSortedSet
    from ranked.engine.skiplist import SortedSet as PySortedSet

    def client() -> Any:
        return redis.Redis(host="127.0.0.1", port=redis_port, protocol=2)

    return {
        "ranked C": lambda: Ranked("ranked C", CSortedSet, slow=False, max_size=10**8),
        "ranked pure Python": lambda: Ranked(
            "ranked pure Python", PySortedSet, slow=True, max_size=1_000_000
        ),
        "sortedcontainers": SortedContainers,
        "fakeredis": FakeRedis,
        "Redis (1 call/op)": lambda: RedisLike("Redis (1 call/op)", client(), 10**8),
        "Redis (pipeline 1000)": lambda: PipelinedRedis("Redis (pipeline 1000)", client(), 10**8),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    load_at_start = os.getloadavg()[0]
    if args.child:
        print(json.dumps(live_child(LiveRun(**json.loads(args.child)))))
        return 0
    sizes = [int(size) for size in args.sizes.split(",")]
    if args.huge:
        sizes.append(10_000_000)
    settings = Settings(20_000, 2_000, args.repeats, args.rounds)
    if args.quick:
        sizes, settings = [10_000], Settings(500, 100, 1, 2, 500, 100, batches=1)
    modes = ("live", "bulk") if args.mode == "both" else (args.mode,)
    with BenchRedis() as server:
        systems = [make() for make in system_factories(server.port).values()]
        if args.systems:
            wanted = {name.strip() for name in args.systems.split(",")}
            unknown = wanted - {system.name for system in systems}
            if unknown:
                raise SystemExit(f"unknown systems: {sorted(unknown)}")
            systems = [system for system in systems if system.name in wanted]
        ops = [op.strip() for op in args.ops.split(",")] if args.ops else list(OPS[2:])
        unknown_ops = set(ops) - set(OPS[2:])
        if unknown_ops:
            raise SystemExit(f"unknown operations: {sorted(unknown_ops)}")
        tables = []
        for size in sizes:
            print(f"n = {size:,}", file=sys.stderr, flush=True)
            if "live" in modes:
                tables.append(run_live(size, systems, settings, ops, server.port))
                print(render(tables[-1]), flush=True)
            if "bulk" in modes:
                tables.append(run_size(size, systems, settings, ops))
                print(render(tables[-1]), flush=True)
        baseline = c_baseline([s for s in sizes if s <= 1_000_000])
        if baseline:
            print("plain-C skip list (no Python in the loop):\n" + baseline)
        if args.markdown:
            machine = machine_info(server.version())
            machine += (
                f"\n- load average at the start {load_at_start:.1f}, niceness {os.nice(0)}; "
                "the machine is shared with other jobs"
            )
            write_markdown(tables, settings, baseline, machine)
    return 0


def write_markdown(
    tables: Sequence[Table], settings: Settings, baseline: str | None, machine: str
) -> None:
    live = [table for table in tables if table.mode == "Live board"]
    bulk = [table for table in tables if table.mode != "Live board"]
    parts = [
        "# Engine benchmark results",
        "",
        "Written by `python benchmarks/engine.py --markdown`; do not edit by hand.",
        "",
        machine,
        "",
        "Members `player:N`, random integer scores up to 10 n, fixed seed. Index, top-10 and "
        "around-me read from the high end (ZREVRANK / ZREVRANGE). *Speedup vs fastest peer* "
        "is the fastest system other than ranked C divided by ranked C (above 1: ranked C "
        "is faster).",
        "",
    ]
    if live:
        parts += [
            "## Live board",
            "",
            "What a live board sees. Each round runs every system alone in a child process of "
            "its own, the order of systems rotating by one each round. The child grows the "
            "board by single inserts in random order (the Redis peers by ZADDs of 1,000 "
            "members, which the server inserts one at a time), then times each operation "
            f"on {settings.batches} batches, each a fresh random sample of "
            f"{settings.live_fast:,} members ({settings.live_slow:,} for ranked pure Python, "
            "fakeredis and Redis with one call per op; ranked pure Python and fakeredis up to "
            'n = 100,000), every member string made as the call is made (`f"player:{i}"`, as '
            "a request brings it). A batch is timed 100 calls at a time (Redis pipelined: "
            "1,000, one pipeline), so that a run of calls the scheduler interrupts is an "
            f"outlier. Per-operation times are the median over {settings.rounds} rounds of "
            "each child's median run.",
            "",
            *(render(table) for table in live),
        ]
    if bulk:
        parts += [
            "## Bulk-loaded",
            "",
            "All systems in one process, each holding the same set bulk-loaded from shuffled "
            "pairs; repetitions run round-robin over the systems. Per-operation times are "
            f"medians of {settings.repeats} repetitions of the same batch of "
            f"{settings.ops_fast:,} random members ({settings.ops_slow:,} for the slow "
            "systems), the very member objects that were loaded. Bytes per member: ranked "
            "`memory_usage()/n`, Redis `MEMORY USAGE` / ZCARD, sortedcontainers and fakeredis "
            "the tracemalloc growth of building the set.",
            "",
            *(render(table) for table in bulk),
        ]
    if baseline:
        parts += [
            "## Plain-C skip list (no Python in the loop)",
            "",
            "`free`: consecutive calls overlap in the CPU (throughput); `chained`: each call "
            "waits for the previous one's result (one call's latency, as from Python). "
            "`make bench-bound` sets each Python call against `chained`: `RESULTS-bound.md`.",
            "",
            "```",
            baseline.rstrip(),
            "```",
            "",
        ]
    (HERE / "RESULTS.md").write_text("\n".join(parts))


if __name__ == "__main__":
    raise SystemExit(main())
