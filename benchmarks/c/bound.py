"""Each Python call of the C engine against the plain-C loop of the same operation.

The engine's own limit is ``bench_skiplist`` (``make bench-c``): the core's
functions called from a C loop, no Python anywhere. This program times the same
operations through ``ranked.engine._zset.SortedSet`` under the same conditions
and prints the ratio:

- the same set recipe: members ``player:<i>`` inserted in order of i, scores
  random integers in [0, 1e6] (a set grown by inserts, not bulk-loaded);
- the same calls: fresh random members (or ranks) drawn before each timed run,
  ``calls`` per run, ``runs`` runs back to back, median ns per call;
- the same kind of call: the C figure is the program's ``chained`` column, where
  each call waits for the previous one's result, as each Python call does (in
  a free-running C loop the CPU overlaps the cache misses of consecutive calls,
  which no caller making one call at a time can do);
- the same machine state: rounds alternate the C program and the Python loops,
  and each side's figure is the median over rounds, so a burst of load on this
  shared machine lands on both.

``floor`` is the same Python loop over the same arguments calling ``{}.get``
instead: the interpreter's share of each call (the loop, the call, and the
cache misses on the member ``str`` objects it passes), which no binding can
remove. ``(Py-floor)/C`` is what the binding and the engine cost beyond it.

``bench_vs_python.py`` answers another question (ranked beside sortedcontainers,
interleaved run by run, so each engine runs with caches the other has cooled).

    make bench-bound          (writes benchmarks/RESULTS-bound.md)
    python benchmarks/c/bound.py [sizes] [calls] [runs] [rounds] [--markdown]
"""

from __future__ import annotations

import gc
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ranked.engine._zset import SortedSet

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / "build" / "c" / "bench_skiplist"
RESULTS = ROOT / "benchmarks" / "RESULTS-bound.md"
OPS = ("add_new", "add_update", "incr", "score", "index", "rank", "at", "top10", "around")


def c_medians(size: int, calls: int, runs: int) -> dict[str, float]:
    """ns per call of each operation in the plain-C program's ``chained`` column (one call's
    latency: a Python loop makes one call at a time, so the CPU never overlaps two)."""
    done = subprocess.run(
        [str(BINARY), str(size), str(calls), str(runs)], capture_output=True, text=True, check=True
    )
    medians: dict[str, float] = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[0] in OPS:
            medians[fields[0]] = float(fields[2])
    return medians


class PythonSide:
    """The set and the calls of ``bench_skiplist.c``, made through the Python class."""

    def __init__(self, size: int, calls: int) -> None:
        self.size, self.calls = size, calls
        self.rnd = random.Random(size)
        self.names = [f"player:{i}" for i in range(size)]
        self.zs = SortedSet()
        add = self.zs.add
        for name in self.names:
            add(name, self.rnd.randint(0, 1_000_000))
        self.serial = size

    def members(self) -> list[str]:
        return [self.names[self.rnd.randrange(self.size)] for _ in range(self.calls)]

    def fresh(self) -> list[tuple[str, int]]:
        count = min(self.calls, self.size // 5)
        first, self.serial = self.serial, self.serial + count
        draw = self.rnd.randint
        return [(f"player:{i}", draw(0, 1_000_000)) for i in range(first, first + count)]

    def run(self, op: str, *, floor: bool = False) -> float:
        """One timed run of ``op`` (or of ``{}.get`` with its arguments): ns per call."""
        zs, calls = self.zs, self.calls
        nothing: dict[object, object] = {}
        get = nothing.get
        loop: Callable[[], None]
        if op in ("add_new", "add_update", "incr"):
            if op == "add_new":
                pairs = self.fresh()
            else:
                low, high = (-1000, 1000) if op == "incr" else (0, 1_000_000)
                pairs = [(m, self.rnd.randint(low, high)) for m in self.members()]
            call2 = get if floor else zs.incr if op == "incr" else zs.add

            def loop() -> None:
                for member, value in pairs:
                    call2(member, value)

            calls = len(pairs)
        elif op == "at":
            indexes = [self.rnd.randrange(self.size) for _ in range(calls)]
            at = get if floor else zs.at

            def loop() -> None:
                for i in indexes:
                    at(i)

        elif op == "top10":
            page = get if floor else zs.range_by_index

            def loop() -> None:
                for _ in range(calls):
                    page(0, 9)

        else:
            members = self.members()
            around = zs.range_around
            call1: Callable[[str], object] = {
                "score": zs.score,
                "index": zs.index,
                "rank": zs.rank,
                "around": lambda member: around(member, 5, 5),
            }[op]
            if floor:
                call1 = get

            def loop() -> None:
                for member in members:
                    call1(member)

        gc.disable()
        start = time.perf_counter_ns()
        loop()
        elapsed = time.perf_counter_ns() - start
        gc.enable()
        if op == "add_new" and not floor:
            zs.remove(*[member for member, _ in pairs])
        return elapsed / calls

    def medians(self, runs: int, *, floor: bool = False) -> dict[str, float]:
        return {op: statistics.median(self.run(op, floor=floor) for _ in range(runs)) for op in OPS}


def table(size: int, calls: int, runs: int, rounds: int) -> list[str]:
    """The markdown table of one size: alternating rounds, medians over them."""
    python = PythonSide(size, calls)
    c_rounds, py_rounds, floor_rounds = [], [], []
    for _ in range(rounds):
        c_rounds.append(c_medians(size, calls, runs))
        py_rounds.append(python.medians(runs))
        floor_rounds.append(python.medians(runs, floor=True))
    lines = [
        f"### n = {size:,}",
        "",
        "| op | plain C (chained) | Python call | floor | Python / C | (Python - floor) / C |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for op in OPS:
        c_ns = statistics.median(r[op] for r in c_rounds)
        py_ns = statistics.median(r[op] for r in py_rounds)
        floor_ns = statistics.median(r[op] for r in floor_rounds)
        lines.append(
            f"| {op} | {c_ns:.0f} | {py_ns:.0f} | {floor_ns:.0f} | {py_ns / c_ns:.2f}x "
            f"| {(py_ns - floor_ns) / c_ns:.2f}x |"
        )
    return [*lines, ""]


def main(argv: list[str]) -> int:
    markdown = "--markdown" in argv
    args = [arg for arg in argv[1:] if arg != "--markdown"]
    sizes = [int(x) for x in args[0].split(",")] if args else [10_000, 100_000, 1_000_000]
    calls = int(args[1]) if len(args) > 1 else 20_000
    runs = int(args[2]) if len(args) > 2 else 7
    rounds = int(args[3]) if len(args) > 3 else 7
    if not BINARY.exists():
        print(f"{BINARY} is missing: run `make bench-c` first", file=sys.stderr)
        return 2
    head = f"ns per call; median over {rounds} alternating rounds of the median of {runs} runs"
    lines = [head, ""]
    for size in sizes:
        lines += table(size, calls, runs, rounds)
        print("\n".join(lines[-len(OPS) - 5 :]), flush=True)
    if markdown:
        sys.path.insert(0, str(ROOT))
        from benchmarks.engine import machine_info

        about = (
            "Each Python call of the C engine against the plain-C loop of the same operation "
            "(`chained`: one call's latency), on the same set recipe and calls, rounds "
            "alternating in one run; `floor` is the same Python loop calling `{}.get`. "
            "Written by `python benchmarks/c/bound.py --markdown` (see its docstring)."
        )
        header = ["# The single-op bound", "", about, "", machine_info(None), ""]
        RESULTS.write_text("\n".join([*header, *lines]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
