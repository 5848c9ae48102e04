"""Every memory:// operation timed on two source trees of ranked, side by side, in one run.

Run from the repository root (the C extensions of both trees built in place)::

    python benchmarks/seam.py --before ../before/src             # after = this checkout's src
    python benchmarks/seam.py --before ../before/src --pure      # the pure-Python engine
    python benchmarks/seam.py --before ../before/src --markdown  # write RESULTS-seam.md
    python benchmarks/seam.py --before ../before/src --only "Leaderboard.rank (dense)"
    python benchmarks/seam.py --before ../before/src --quick     # smoke run (< 30 s)

What it measures: the median cost of one call of each operation of the features on
``memory://`` (C engine, or with ``--pure`` the pure-Python one, ``RANKED_PUREPYTHON=1``),
in the tree before a change and in the tree after it:

- ``Leaderboard``: a board of n members ``player:N`` with random integer scores up to 10 n
  (fixed seed) loaded through the board, as ``benchmarks/leaderboard.py`` loads it: its
  operation list, plus ``entry``, remove + resubmit, ``submit_many`` of 10, the friends
  board of a member with 10 friends, and ``submit`` on a second board keeping the all-time
  and daily windows (also loaded with n);
- ``AsyncLeaderboard`` (its own board of n): submit, rank, top(10), around(5, 5), each
  call awaited inside one running event loop;
- ``RateLimiter`` and ``AsyncRateLimiter``: ``hit`` for each algorithm, as
  ``benchmarks/ratelimit.py`` times it (1,000 identities round-robin, 50 units per 60 s,
  every identity hit once before timing);
- ``Queue`` and ``AsyncQueue`` holding 10,000 items (``benchmarks/queue.py``'s section 4
  workload): push + pop, and push + reserve + ack.

Every board, limiter and queue has a store of its own (``memory://<name>``): since
``memory://`` became one process-wide store, objects opened on it share one keyspace,
which the before tree's private stores did not, and a bigger keyspace costs cache misses
unrelated to the change measured.

Inputs a request would bring (members, cursors, identities, items) are fresh objects per
call, drawn before the clock starts from a random stream per operation; both trees get the
same streams, so their boards go through the same states. An operation that one tree lacks
is skipped, and the report says so.

How: one child process per tree (``sys.executable`` with ``PYTHONPATH`` = that tree, so
each imports ``ranked`` and its in-place built extensions from its own tree; the child
reports ``ranked.__file__`` and the engine it runs, and the parent checks both). Each child
loads its boards once, then times what the parent asks for: each operation as the median
of several batches of calls. The parent first sizes every operation's batch (the same
number of calls for both trees, about ``--batch-ms`` each), then runs the rounds.

Why rounds alternate (before, after, after, before, ...): the machine is shared, and its
load drifts over minutes. Timing one tree's run after the other's would put that drift into
the ratio; alternating rounds, each tree going first half of the time, gives both trees
the same share of every stretch of the run, and the median over rounds drops the rounds a
burst of load spoiled. The report gives, per operation, each tree's median over the rounds,
their ratio (after / before; above 1.10 is flagged) and the spread of the per-round
ratios (25th to 75th percentile), a measure of the noise.

``--markdown`` writes ``benchmarks/RESULTS-seam.md``: one section per engine (C, pure
Python). A run replaces its engine's section and keeps the other's; a run with ``--only``
adds a "re-run alone" note to its engine's section instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script, this folder comes first on sys.path, where benchmarks/queue.py would
# shadow the standard library's queue: drop it. The child needs nothing but its tree.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

import argparse  # noqa: E402 - sys.path fixed above
import asyncio  # noqa: E402
import inspect  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Awaitable, Callable, Collection, Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import IO, Any  # noqa: E402

SEED = 20261126
LOAD_CHUNK = 1000
FLAG = 1.10
FRIENDS = 10
FRIEND_HOSTS = 1000
CURSORS = 1000
QUEUE_ITEMS = 10_000
PRIORITIES = 1000
IDENTITIES = 1000
LIMIT = 50
WINDOW = 60
LEASE = 30.0
ALGORITHMS = ("fixed_window", "sliding_log", "sliding_counter", "token_bucket", "gcra")
RESULTS = HERE / "RESULTS-seam.md"
ENGINE_TITLES = {"c": "C engine", "python": "pure-Python engine (RANKED_PUREPYTHON=1)"}

BOARD_OPS = (
    "submit (best)",
    "submit (incr)",
    "submit (best), windows all + daily",
    "score",
    "rank (competition)",
    "rank (unique)",
    "rank (dense)",
    "entry",
    "top(10)",
    "page after cursor (10)",
    "around(5, 5)",
    "ranks_of(10 members)",
    "count",
    "count_between",
    "percentile",
    "remove + resubmit",
    "submit_many(10)",
    "friends_board (10 friends)",
    "top(10, with_data=True)",
)
ASYNC_BOARD_OPS = ("submit (best)", "rank", "top(10)", "around(5, 5)")
QUEUE_OPS = ("push + pop", "push + reserve + ack")
CATALOGUE: tuple[str, ...] = (
    *(f"Leaderboard.{op}" for op in BOARD_OPS),
    *(f"AsyncLeaderboard.{op}" for op in ASYNC_BOARD_OPS),
    *(f"RateLimiter.hit ({algorithm})" for algorithm in ALGORITHMS),
    *(f"AsyncRateLimiter.hit ({algorithm})" for algorithm in ALGORITHMS),
    *(f"Queue {op}" for op in QUEUE_OPS),
    *(f"AsyncQueue {op}" for op in QUEUE_OPS),
)

Batch = Callable[[int], float]
"""Runs ``k`` calls of one operation on fresh inputs (drawn before the clock starts) and
returns the seconds the calls took."""

Draw = Callable[[], tuple[Any, ...]]
"""The positional arguments of one call, fresh objects each time."""


# -- the child: one tree's operations ---------------------------------------------------------
class Draws:
    """One operation's stream of inputs (seeded by its name: the same in both trees, and
    independent of which other operations run)."""

    def __init__(self, name: str, size: int) -> None:
        self.rng = random.Random(f"{SEED}:{name}")
        self.size = size

    def member(self) -> tuple[str]:
        return (f"player:{self.rng.randrange(self.size)}",)

    def member_score(self) -> tuple[str, float]:
        return f"player:{self.rng.randrange(self.size)}", float(self.rng.randint(0, 10 * self.size))

    def group(self) -> tuple[list[str]]:
        return ([f"player:{self.rng.randrange(self.size)}" for _ in range(10)],)

    def pairs(self) -> tuple[list[tuple[str, float]]]:
        return ([self.member_score() for _ in range(10)],)

    def bounds(self) -> tuple[float, float]:
        low = float(self.rng.randint(0, 9 * self.size))
        return low, low + self.size  # about 10% of the board

    def pick(self, pool: Sequence[str]) -> tuple[str]:
        return (self.rng.choice(pool).encode().decode(),)  # a fresh copy of a stored string


def nothing() -> tuple[()]:
    return ()


def sync_batch(call: Callable[..., object], draw: Draw, **options: Any) -> Batch:
    def batch(k: int) -> float:
        args = [draw() for _ in range(k)]
        start = time.perf_counter()
        for arg in args:
            call(*arg, **options)
        return time.perf_counter() - start

    return batch


def async_batch(
    loop: asyncio.AbstractEventLoop,
    call: Callable[..., Awaitable[object]],
    draw: Draw,
    **options: Any,
) -> Batch:
    """Each call's coroutine awaited in turn inside one running loop, timed in there."""

    async def run(args: list[tuple[Any, ...]]) -> float:
        start = time.perf_counter()
        for arg in args:
            await call(*arg, **options)
        return time.perf_counter() - start

    def batch(k: int) -> float:
        return loop.run_until_complete(run([draw() for _ in range(k)]))

    return batch


def initial_pairs(size: int) -> list[tuple[str, float]]:
    rng = random.Random(SEED)
    return [(f"player:{n}", float(rng.randint(0, 10 * size))) for n in range(size)]


def load(board: Any, size: int) -> None:
    """Through the board, in chunks, as ``benchmarks/leaderboard.py`` loads it."""
    pairs = initial_pairs(size)
    for start in range(0, size, LOAD_CHUNK):
        board.submit_many(pairs[start : start + LOAD_CHUNK], operator="set")


def befriend(board: Any, size: int) -> list[str]:
    """Members with ``FRIENDS`` friends each (random members of the board)."""
    rng = random.Random(f"{SEED}:friends")
    hosts = [f"player:{n}" for n in rng.sample(range(size), min(FRIEND_HOSTS, size))]
    for host in hosts:
        board.add_friends(host, [f"player:{rng.randrange(size)}" for _ in range(FRIENDS)])
    return hosts


def cursor_pool(board: Any, size: int) -> list[str]:
    """Cursors after pages of 10 at random places of the board."""
    rng = random.Random(f"{SEED}:cursors")
    pages = (board.page_at(rng.randrange(max(1, size - 20)), 10) for _ in range(CURSORS))
    return [page.next_cursor for page in pages]


def board_ops(size: int) -> tuple[dict[str, Batch], dict[str, str]]:
    """The sync board's operations, and those this tree lacks (name -> why)."""
    from ranked import Leaderboard

    board = Leaderboard("memory://seam-board", "seam")
    load(board, size)
    windows = Leaderboard("memory://seam-windows", "seam-windows", windows=("all", "daily"))
    load(windows, size)
    hosts, cursors = befriend(board, size), cursor_pool(board, size)

    def draws(op: str) -> Draws:
        return Draws(f"Leaderboard.{op}", size)

    def resubmit(member: str, score: float) -> None:
        board.remove(member)
        board.submit(member, score, operator="set")

    incr, page, around, friends = draws("incr"), draws("page"), draws("around"), draws("friends")
    ops: dict[str, Batch] = {
        "submit (best)": sync_batch(board.submit, draws("best").member_score, operator="best"),
        "submit (incr)": sync_batch(board.submit, lambda: (*incr.member(), 1), operator="incr"),
        "submit (best), windows all + daily": sync_batch(
            windows.submit, draws("windows").member_score, operator="best"
        ),
        "score": sync_batch(board.score, draws("score").member),
        "entry": sync_batch(board.entry, draws("entry").member),
        "top(10)": sync_batch(board.top, lambda: (10,)),
        "page after cursor (10)": sync_batch(board.page, lambda: page.pick(cursors), size=10),
        "around(5, 5)": sync_batch(board.around, lambda: (*around.member(), 5, 5)),
        "ranks_of(10 members)": sync_batch(board.ranks_of, draws("ranks_of").group),
        "count": sync_batch(board.count, nothing),
        "count_between": sync_batch(board.count_between, draws("count_between").bounds),
        "percentile": sync_batch(board.percentile, draws("percentile").member),
        "remove + resubmit": sync_batch(resubmit, draws("resubmit").member_score),
        "submit_many(10)": sync_batch(board.submit_many, draws("many").pairs, operator="best"),
        "friends_board (10 friends)": sync_batch(board.friends_board, lambda: friends.pick(hosts)),
    }
    for style in ("competition", "unique", "dense"):
        ops[f"rank ({style})"] = sync_batch(board.rank, draws(style).member, style=style)
    missing: dict[str, str] = {}
    if "with_data" in inspect.signature(board.top).parameters:
        ops["top(10, with_data=True)"] = sync_batch(board.top, lambda: (10,), with_data=True)
    else:
        missing["top(10, with_data=True)"] = "Leaderboard.top has no with_data"
    named = {f"Leaderboard.{op}": batch for op, batch in ops.items()}
    return named, {f"Leaderboard.{op}": why for op, why in missing.items()}


def async_board_ops(loop: asyncio.AbstractEventLoop, size: int) -> dict[str, Batch]:
    from ranked import AsyncLeaderboard, open_async_backend

    board = AsyncLeaderboard(open_async_backend("memory://seam-async"), "seam-async")
    pairs = initial_pairs(size)

    async def load_async() -> None:
        for start in range(0, size, LOAD_CHUNK):
            await board.submit_many(pairs[start : start + LOAD_CHUNK], operator="set")

    loop.run_until_complete(load_async())

    def draws(op: str) -> Draws:
        return Draws(f"AsyncLeaderboard.{op}", size)

    around = draws("around")
    ops: dict[str, Batch] = {
        "submit (best)": async_batch(
            loop, board.submit, draws("best").member_score, operator="best"
        ),
        "rank": async_batch(loop, board.rank, draws("rank").member),
        "top(10)": async_batch(loop, board.top, lambda: (10,)),
        "around(5, 5)": async_batch(loop, board.around, lambda: (*around.member(), 5, 5)),
    }
    return {f"AsyncLeaderboard.{op}": batch for op, batch in ops.items()}


def identities() -> Draw:
    """Identities round-robin, a fresh string each call."""
    numbers = itertools.cycle(range(IDENTITIES))
    return lambda: (f"user:{next(numbers)}",)


def limiter_ops(loop: asyncio.AbstractEventLoop) -> dict[str, Batch]:
    """``hit`` per algorithm, each limiter on its own store, every identity hit once."""
    from ranked import open_async_backend, open_backend
    from ranked.ratelimit import ALGORITHMS as TREE_ALGORITHMS
    from ranked.ratelimit import AsyncRateLimiter, Policy, RateLimiter

    ops: dict[str, Batch] = {}
    for algorithm in TREE_ALGORITHMS:  # those of the catalogue the tree lacks go missing
        policy = Policy(LIMIT, WINDOW, algorithm)
        limiter = RateLimiter(open_backend(f"memory://seam-{algorithm}"), policy, prefix="seam")
        alimiter = AsyncRateLimiter(
            open_async_backend(f"memory://seam-async-{algorithm}"), policy, prefix="seam"
        )
        ops[f"RateLimiter.hit ({algorithm})"] = sync_batch(limiter.hit, identities())
        ops[f"AsyncRateLimiter.hit ({algorithm})"] = async_batch(loop, alimiter.hit, identities())
    for batch in ops.values():
        batch(IDENTITIES)  # the steady state: every identity seen once
    return ops


def queue_items(name: str) -> Draw:
    """Items pushed by the cycles: fresh bytes, random integer priorities."""
    rng, numbers = random.Random(f"{SEED}:{name}"), itertools.count()
    return lambda: (b"new:%d" % next(numbers), float(rng.randrange(PRIORITIES)))


def preload() -> list[tuple[bytes, float]]:
    rng = random.Random(SEED)
    return [(b"job:%d" % n, float(rng.randrange(PRIORITIES))) for n in range(QUEUE_ITEMS)]


def queue_ops() -> dict[str, Batch]:
    """Each cycle leaves its queue (of ``QUEUE_ITEMS``) as it found it."""
    from ranked import open_backend
    from ranked.queue import Queue

    pairs: Queue[Any] = Queue(open_backend("memory://seam-pairs"), "pairs")
    leases: Queue[Any] = Queue(open_backend("memory://seam-leases"), "leases")
    pairs.push_many(preload())
    leases.push_many(preload())

    def push_pop(item: bytes, priority: float) -> None:
        pairs.push(item, priority)
        pairs.pop()

    def push_reserve_ack(item: bytes, priority: float) -> None:
        leases.push(item, priority)
        lease = leases.reserve(LEASE)
        assert lease is not None
        leases.ack(lease)

    return {
        "Queue push + pop": sync_batch(push_pop, queue_items("Queue push + pop")),
        "Queue push + reserve + ack": sync_batch(
            push_reserve_ack, queue_items("Queue push + reserve + ack")
        ),
    }


def async_queue_ops(loop: asyncio.AbstractEventLoop) -> dict[str, Batch]:
    from ranked import open_async_backend
    from ranked.queue import AsyncQueue

    pairs: AsyncQueue[Any] = AsyncQueue(open_async_backend("memory://seam-apairs"), "pairs")
    leases: AsyncQueue[Any] = AsyncQueue(open_async_backend("memory://seam-aleases"), "leases")
    loop.run_until_complete(pairs.push_many(preload()))
    loop.run_until_complete(leases.push_many(preload()))

    async def push_pop(item: bytes, priority: float) -> None:
        await pairs.push(item, priority)
        await pairs.pop()

    async def push_reserve_ack(item: bytes, priority: float) -> None:
        await leases.push(item, priority)
        lease = await leases.reserve(LEASE)
        assert lease is not None
        await leases.ack(lease)

    return {
        "AsyncQueue push + pop": async_batch(loop, push_pop, queue_items("AsyncQueue push + pop")),
        "AsyncQueue push + reserve + ack": async_batch(
            loop, push_reserve_ack, queue_items("AsyncQueue push + reserve + ack")
        ),
    }


def group_of(op: str) -> str:
    """The class an operation belongs to: ``Leaderboard``, ``AsyncQueue``, ..."""
    return op.split(".", 1)[0].split(" ", 1)[0]


def all_ops(
    loop: asyncio.AbstractEventLoop, size: int, groups: Collection[str]
) -> tuple[dict[str, Batch], dict[str, str]]:
    """The operations of these groups only (a re-run of one operation loads no more)."""
    ops: dict[str, Batch] = {}
    missing: dict[str, str] = {}
    if "Leaderboard" in groups:
        ops, missing = board_ops(size)
    if "AsyncLeaderboard" in groups:
        ops |= async_board_ops(loop, size)
    if {"RateLimiter", "AsyncRateLimiter"} & set(groups):
        ops |= limiter_ops(loop)
    if "Queue" in groups:
        ops |= queue_ops()
    if "AsyncQueue" in groups:
        ops |= async_queue_ops(loop)
    for name in CATALOGUE:
        if group_of(name) in groups and name not in ops:
            missing.setdefault(name, "not built in this tree")
    return ops, missing


def serve(size: int, groups: Collection[str]) -> None:
    """The child: builds the operations, prints a JSON header (``ranked.__file__``, the
    engine, the operations this tree lacks), then answers each JSON request line
    ``{"calls": {op: k}, "batches": b}`` with ``{op: median seconds per call}``."""
    import ranked

    loop = asyncio.new_event_loop()
    started = time.perf_counter()
    ops, missing = all_ops(loop, size, groups)
    header = {
        "file": ranked.__file__,
        "implementation": ranked.IMPLEMENTATION,
        "missing": missing,
        "setup_s": time.perf_counter() - started,
    }
    print(json.dumps(header), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        batches = int(request["batches"])
        answer = {
            name: statistics.median([ops[name](k) / k for _ in range(batches)])
            for name, k in request["calls"].items()
        }
        print(json.dumps(answer), flush=True)
    loop.close()


# -- the parent: rounds, alternating --------------------------------------------------------
@dataclass
class Settings:
    size: int
    rounds: int
    batches: int
    batch_s: float
    calibrate_calls: int
    min_calls: int = 10
    max_calls: int = 50_000


@dataclass
class Child:
    """One tree's worker process."""

    name: str
    tree: Path
    process: subprocess.Popen[str]
    header: dict[str, Any] = field(default_factory=dict)

    def ask(self, calls: dict[str, int], batches: int) -> dict[str, float]:
        send, receive = self._pipes()
        send.write(json.dumps({"calls": calls, "batches": batches}) + "\n")
        send.flush()
        return {name: float(value) for name, value in json.loads(receive.readline()).items()}

    def close(self) -> None:
        send, _ = self._pipes()
        send.close()
        self.process.wait()

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        return self.process.stdin, self.process.stdout


def start_child(name: str, tree: Path, settings: Settings, groups: set[str], pure: bool) -> Child:
    env = {key: value for key, value in os.environ.items() if key != "RANKED_PUREPYTHON"}
    env["PYTHONPATH"] = str(tree)
    if pure:
        env["RANKED_PUREPYTHON"] = "1"
    command = [sys.executable, str(Path(__file__).resolve()), "--child"]
    command += ["--size", str(settings.size), "--groups", ",".join(sorted(groups))]
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    return Child(name, tree, process)


def read_header(child: Child, pure: bool) -> None:
    """The child's header; it must have imported ranked from its own tree, on the engine
    asked for (the C engine means the tree's extensions are built in place)."""
    _, receive = child._pipes()
    line = receive.readline()
    if not line:
        raise SystemExit(f"the {child.name} child ({child.tree}) failed to start")
    child.header = json.loads(line)
    found = Path(child.header["file"]).resolve()
    if not found.is_relative_to(child.tree.resolve()):
        raise SystemExit(f"the {child.name} child imported ranked from {found}, not {child.tree}")
    wanted = "python" if pure else "c"
    if child.header["implementation"] != wanted:
        raise SystemExit(
            f"the {child.name} child runs the {child.header['implementation']} engine, not "
            f"{wanted} (build its extensions in place: python3 setup.py build_ext --inplace)"
        )


def batch_sizes(
    children: Sequence[Child], ops: Sequence[str], settings: Settings
) -> dict[str, int]:
    """Calls per batch of each operation, the same in both trees: about ``batch_s`` in the
    slower tree. The sizing calls also warm both children up."""
    probe = dict.fromkeys(ops, settings.calibrate_calls)
    seconds = [child.ask(probe, 1) for child in children]
    sizes = {}
    for op in ops:
        per_call = max(found[op] for found in seconds)
        sizes[op] = max(
            settings.min_calls, min(settings.max_calls, round(settings.batch_s / per_call))
        )
    return sizes


Samples = dict[str, dict[str, list[float]]]
"""tree -> operation -> seconds per call, one per round."""


def run_rounds(children: Sequence[Child], calls: dict[str, int], settings: Settings) -> Samples:
    """Rounds in the order before, after, after, before, ... (see the module)."""
    samples: Samples = {child.name: {op: [] for op in calls} for child in children}
    for number in range(settings.rounds):
        started = time.perf_counter()
        order = children if number % 2 == 0 else list(reversed(children))
        for child in order:
            for op, seconds in child.ask(calls, settings.batches).items():
                samples[child.name][op].append(seconds)
        took = time.perf_counter() - started
        print(f"  round {number + 1}/{settings.rounds}: {took:.1f} s", file=sys.stderr, flush=True)
    return samples


@dataclass
class Row:
    op: str
    before: float
    after: float
    low: float  # 25th percentile of the per-round ratios
    high: float  # 75th percentile

    @property
    def ratio(self) -> float:
        return self.after / self.before

    @property
    def flagged(self) -> bool:
        return self.ratio > FLAG


def rows_of(samples: Samples, ops: Sequence[str]) -> list[Row]:
    rows = []
    for op in ops:
        before, after = samples["before"][op], samples["after"][op]
        ratios = [a / b for a, b in zip(after, before, strict=True)]
        low, high = _quartiles(ratios)
        rows.append(Row(op, statistics.median(before), statistics.median(after), low, high))
    return rows


def _quartiles(values: Sequence[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    cuts = statistics.quantiles(values, n=4)
    return cuts[0], cuts[2]


def _fmt_time(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.2f} us"
    return f"{seconds * 1e9:.0f} ns"


def render_table(rows: Sequence[Row]) -> str:
    lines = [
        "| operation | before | after | after/before | per-round ratios (25-75%) | flag |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        flag = f"> {FLAG:.2f}" if row.flagged else ""
        lines.append(
            f"| {row.op} | {_fmt_time(row.before)} | {_fmt_time(row.after)} | "
            f"{row.ratio:.2f}x | {row.low:.2f}-{row.high:.2f} | {flag} |"
        )
    return "\n".join(lines) + "\n"


def render_skipped(missing: dict[str, str]) -> str:
    if not missing:
        return ""
    lines = [f"- {op}: {why}" for op, why in missing.items()]
    return "Skipped (not in both trees):\n\n" + "\n".join(lines) + "\n"


# -- the markdown file ------------------------------------------------------------------------
def describe_tree(tree: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(tree), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
    )
    commit = done.stdout.strip() if done.returncode == 0 else "not a git checkout"
    return f"`{tree}` ({commit})"


def machine_lines() -> str:
    """The project's machine header (from the after tree's benchmarks/engine.py)."""
    sys.path.insert(0, str(HERE.parent))
    from benchmarks.engine import machine_info

    return machine_info(None)


def method_text(run: Run, settings: Settings) -> str:
    trees = ", ".join(f"{name} {describe_tree(tree)}" for name, tree in run.trees.items())
    setup = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in run.setup.items())
    children = (
        "Each operation re-run alone: its own child process per tree, loading only its "
        "class's fixtures."
        if run.alone
        else f"One child process per tree (setup: {setup})."
    )
    smallest, largest = min(run.calls.values()), max(run.calls.values())
    return (
        f"Trees: {trees}. n = {settings.size:,} members on each board; queues of "
        f"{QUEUE_ITEMS:,} items; limiters over {IDENTITIES:,} identities. {children} "
        f"{settings.rounds} rounds, alternating before, after, after, before, ...; in each "
        f"round a tree times each operation as the median of {settings.batches} batches of "
        f"{smallest:,} to {largest:,} calls (the same count for both trees, about "
        f"{settings.batch_s * 1e3:.0f} ms a batch). Each cell: the median over the rounds of "
        f"the time per call; after/before above {FLAG:.2f} is flagged."
    )


def section_text(run: Run, settings: Settings) -> str:
    parts = [machine_lines(), method_text(run, settings), render_table(run.rows)]
    parts.append(render_skipped(run.missing))
    text = "\n\n".join(part.strip("\n") for part in parts if part) + "\n"
    if run.alone:
        return f"### Re-run alone: {', '.join(row.op for row in run.rows)}\n\n{text}"
    return text


def read_sections() -> dict[str, str]:
    """The existing file's sections, by engine."""
    if not RESULTS.exists():
        return {}
    sections: dict[str, str] = {}
    current: str | None = None
    for line in RESULTS.read_text().splitlines(keepends=True):
        titled = [key for key, title in ENGINE_TITLES.items() if line == f"## {title}\n"]
        if titled:
            current = titled[0]
            sections[current] = ""
        elif current is not None:
            sections[current] += line
    return sections


def write_markdown(engine: str, text: str, append: bool) -> None:
    sections = read_sections()
    if append:
        text = sections.get(engine, "").rstrip("\n") + "\n\n" + text
    sections[engine] = "\n" + text.strip("\n") + "\n\n"
    parts = [
        "# memory:// before and after: every operation, both trees in one run\n\n",
        "Written by `python benchmarks/seam.py --before OTHER/src --markdown` (C engine) and "
        "`... --pure --markdown` (pure-Python engine); each run replaces its own engine's "
        "section, `--only NAME` adds a re-run note to it. Do not edit by hand.\n\n",
    ]
    for key, title in ENGINE_TITLES.items():
        if key in sections:
            parts.append(f"## {title}\n{sections[key]}")
    RESULTS.write_text("".join(parts).rstrip("\n") + "\n")


# -- main -------------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="the src folder of the tree before")
    parser.add_argument("--after", type=Path, default=HERE.parent / "src", help="default: ./src")
    parser.add_argument("--pure", action="store_true", help="the pure-Python engine in both")
    parser.add_argument("--markdown", action="store_true", help=f"write {RESULTS.name}")
    parser.add_argument("--quick", action="store_true", help="smoke run: n = 10,000, 2 rounds")
    parser.add_argument("--only", metavar="NAME", action="append", help="these operations alone")
    parser.add_argument("--size", type=int, default=100_000, help="members on each board")
    parser.add_argument(
        "--rounds", type=int, default=30, help="rounds (even: each tree first half the time)"
    )
    parser.add_argument("--batches", type=int, default=5, help="batches per op and round")
    parser.add_argument("--batch-ms", type=float, default=20.0, help="time of one batch")
    parser.add_argument("--list", action="store_true", help="print the operations' names")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--groups", default="", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def settings_from(args: argparse.Namespace) -> Settings:
    if args.quick:
        return Settings(10_000, 2, 3, 0.002, 20)
    return Settings(args.size, args.rounds, args.batches, args.batch_ms / 1e3, 50)


def wanted_ops(only: Sequence[str] | None) -> list[str]:
    """The catalogue, or the ``--only`` operations in its order."""
    if not only:
        return list(CATALOGUE)
    unknown = [op for op in only if op not in CATALOGUE]
    if unknown:
        raise SystemExit(f"no such operation: {unknown} (see --list)")
    return [op for op in CATALOGUE if op in only]


def chosen_ops(
    children: Sequence[Child], wanted: Sequence[str]
) -> tuple[list[str], dict[str, str]]:
    """The wanted operations both trees have, and the skipped ones (name -> why)."""
    missing: dict[str, str] = {}
    for child in children:
        for op, why in child.header["missing"].items():
            if op in wanted:
                missing.setdefault(op, f"{why} ({child.name})")
    return [op for op in wanted if op not in missing], missing


@dataclass
class Run:
    """The outcome of one or more runs of the two trees."""

    trees: dict[str, Path]
    calls: dict[str, int] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)
    setup: dict[str, float] = field(default_factory=dict)  # tree -> child setup seconds
    alone: bool = False

    def add(self, other: Run) -> None:
        self.calls |= other.calls
        self.rows += other.rows
        self.missing |= other.missing


def measure(args: argparse.Namespace, settings: Settings, wanted: Sequence[str]) -> Run:
    """The wanted operations timed in a child per tree, the rounds alternating."""
    run = Run({"before": Path(args.before).resolve(), "after": Path(args.after).resolve()})
    groups = {group_of(op) for op in wanted}
    children = [
        start_child(name, tree, settings, groups, args.pure) for name, tree in run.trees.items()
    ]
    for child in children:
        read_header(child, args.pure)
    run.setup = {child.name: float(child.header["setup_s"]) for child in children}
    ops, run.missing = chosen_ops(children, wanted)
    if ops:
        run.calls = batch_sizes(children, ops, settings)
        run.rows = rows_of(run_rounds(children, run.calls, settings), ops)
    for child in children:
        child.close()
    return run


def measure_alone(args: argparse.Namespace, settings: Settings, wanted: Sequence[str]) -> Run:
    """Each wanted operation on its own (fresh children each), the rows together."""
    total = Run({}, alone=True)
    for op in wanted:
        print(f"{op} alone", file=sys.stderr, flush=True)
        run = measure(args, settings, [op])
        total.trees = run.trees
        total.add(run)
    return total


def report(args: argparse.Namespace, settings: Settings) -> int:
    engine = "pure Python" if args.pure else "C"
    print(f"n = {settings.size:,}, {engine} engine", file=sys.stderr, flush=True)
    wanted = wanted_ops(args.only)
    run = measure_alone(args, settings, wanted) if args.only else measure(args, settings, wanted)
    if not run.rows:
        raise SystemExit(f"nothing to time: {run.missing}")
    print(render_table(run.rows))
    print(render_skipped(run.missing))
    if args.markdown:
        write_markdown("python" if args.pure else "c", section_text(run, settings), run.alone)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        serve(args.size, args.groups.split(","))
        return 0
    if args.list:
        print("\n".join(CATALOGUE))
        return 0
    if args.before is None:
        raise SystemExit("--before SRC is required (the src folder of the tree before)")
    return report(args, settings_from(args))


if __name__ == "__main__":
    raise SystemExit(main())
