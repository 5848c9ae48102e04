"""Per-call cost of the C engine from Python, beside sortedcontainers.

Runs the operations of ``bench_skiplist.c`` through ``ranked.engine._zset.SortedSet``
and through the usual pure-Python alternative, a ``SortedList`` of ``(score, member)``
tuples plus a ``dict`` member -> score, in the same process and interleaved run by
run. Members are ``player:<i>``, scores random integers in [0, 1e6], seeded. Each
figure is the median over runs of ns per call. ``floor`` is the same Python loop
calling ``{}.get`` with the same arguments: the interpreter's share of every call,
which no binding can remove.

    python benchmarks/c/bench_vs_python.py [sizes] [calls] [runs]
    e.g. python benchmarks/c/bench_vs_python.py 10000,100000,1000000 20000 7
"""

from __future__ import annotations

import gc
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from sortedcontainers import SortedList

from ranked.engine._zset import SortedSet

Loop = Callable[[Any], None]


class Fixture:
    """One set of n members held by both engines, plus seeded probes."""

    def __init__(self, n: int, calls: int) -> None:
        self.n = n
        self.calls = calls
        self.rnd = random.Random(12345 + n)
        self.names = [f"player:{i}" for i in range(n)]
        scores = [self.rnd.randint(0, 1_000_000) for _ in range(n)]
        self.zs = SortedSet()
        for member, score in zip(self.names, scores, strict=True):
            self.zs.add(member, score)
        self.sl: SortedList = SortedList(zip(scores, self.names, strict=True))
        self.d = dict(zip(self.names, scores, strict=True))
        self.probe = [self.names[self.rnd.randrange(n)] for _ in range(calls)]
        self.idx = [self.rnd.randrange(n) for _ in range(calls)]
        self.serial = n

    def fresh_pairs(self) -> list[tuple[str, int]]:
        """New members (at most n/5 per run, so the set stays near size n)."""
        count = min(self.calls, self.n // 5)
        first, self.serial = self.serial, self.serial + count
        return [
            (f"player:{i}", self.rnd.randint(0, 1_000_000)) for i in range(first, first + count)
        ]

    def update_pairs(self, low: int, high: int) -> list[tuple[str, int]]:
        return [(m, self.rnd.randint(low, high)) for m in self.probe]


def time_loop(loop: Loop, args: Any, count: int) -> float:
    gc.disable()
    t0 = time.perf_counter_ns()
    loop(args)
    t1 = time.perf_counter_ns()
    gc.enable()
    return (t1 - t0) / count


def pairs_loop(call: Callable[[str, int], object]) -> Loop:
    def loop(pairs: list[tuple[str, int]]) -> None:
        for member, score in pairs:
            call(member, score)

    return loop


def each_loop(call: Callable[[Any], object], items: list[Any]) -> Loop:
    def loop(_: object) -> None:
        for item in items:
            call(item)

    return loop


def run(n: int, calls: int, runs: int) -> dict[str, tuple[float, float, float]]:
    fx = Fixture(n, calls)
    zs, sl, d = fx.zs, fx.sl, fx.d
    noop: dict[Any, Any] = {}
    get = noop.get

    def sc_add_new(pairs: list[tuple[str, int]]) -> None:
        for m, s in pairs:
            d[m] = s
            sl.add((s, m))

    def sc_update(pairs: list[tuple[str, int]]) -> None:
        for m, s in pairs:
            old = d[m]
            if old != s:
                sl.remove((old, m))
                sl.add((s, m))
                d[m] = s

    def sc_incr(pairs: list[tuple[str, int]]) -> None:
        for m, step in pairs:
            old = d[m]
            new = old + step
            if new != old:
                sl.remove((old, m))
                sl.add((new, m))
                d[m] = new

    def drop_fresh(pairs: list[tuple[str, int]], ranked: bool) -> None:
        if ranked:
            zs.remove(*[m for m, _ in pairs])
            return
        for m, s in pairs:
            del d[m]
            sl.remove((s, m))

    probe, idx = fx.probe, fx.idx
    plans: list[tuple[str, Loop, Loop, Loop, Callable[[], Any] | None]] = [
        ("add_new", pairs_loop(zs.add), sc_add_new, pairs_loop(get), fx.fresh_pairs),
        (
            "add_update",
            pairs_loop(zs.add),
            sc_update,
            pairs_loop(get),
            lambda: fx.update_pairs(0, 1_000_000),
        ),
        (
            "incr",
            pairs_loop(zs.incr),
            sc_incr,
            pairs_loop(get),
            lambda: fx.update_pairs(-1000, 1000),
        ),
        ("score", each_loop(zs.score, probe), each_loop(d.get, probe), each_loop(get, probe), None),
        (
            "index",
            each_loop(zs.index, probe),
            each_loop(lambda m: sl.index((d[m], m)), probe),
            each_loop(get, probe),
            None,
        ),
        (
            "rank",
            each_loop(zs.rank, probe),
            each_loop(lambda m: sl.bisect_left((d[m],)) + 1, probe),
            each_loop(get, probe),
            None,
        ),
        ("at", each_loop(zs.at, idx), each_loop(sl.__getitem__, idx), each_loop(get, idx), None),
        # top10 and around as a leaderboard reads them (highest first), with the
        # peer code of benchmarks/engine.py (class SortedContainers).
        (
            "top10",
            each_loop(lambda i: zs.range_by_index(0, 9, reverse=True), idx),
            each_loop(lambda i: list(sl.islice(len(sl) - 10, len(sl), reverse=True)), idx),
            each_loop(lambda i: get(0, 9), idx),
            None,
        ),
        (
            "around",
            each_loop(lambda m: zs.range_around(m, 5, 5, reverse=True), probe),
            each_loop(
                lambda m: list(
                    sl.islice(max(0, (at := sl.bisect_left((d[m], m))) - 5), at + 6, reverse=True)
                ),
                probe,
            ),
            each_loop(lambda m: get(m, 5), probe),
            None,
        ),
    ]
    results: dict[str, tuple[float, float, float]] = {}
    for name, ranked, other, floor, make in plans:
        times: tuple[list[float], list[float], list[float]] = ([], [], [])
        for _ in range(runs):
            for which, loop in enumerate((ranked, other, floor)):
                args = make() if make else None
                count = len(args) if args is not None else calls
                times[which].append(time_loop(loop, args, count))
                if name == "add_new" and which < 2 and args is not None:
                    drop_fresh(args, ranked=which == 0)
        ranked_ns, other_ns, floor_ns = (statistics.median(t) for t in times)
        results[name] = (ranked_ns, other_ns, floor_ns)
    return results


def main(argv: list[str]) -> None:
    sizes = [int(x) for x in argv[1].split(",")] if len(argv) > 1 else [10_000, 100_000]
    calls = int(argv[2]) if len(argv) > 2 else 20_000
    runs = int(argv[3]) if len(argv) > 3 else 7
    for n in sizes:
        print(f"n={n}  (ns per call, median of {runs} runs)")
        print(f"  {'op':11s} {'ranked':>8s} {'sortedc.':>9s} {'speedup':>8s} {'floor':>7s}")
        for name, (ranked_ns, other_ns, floor_ns) in run(n, calls, runs).items():
            print(
                f"  {name:11s} {ranked_ns:8.0f} {other_ns:9.0f} {other_ns / ranked_ns:7.1f}x"
                f" {floor_ns:7.0f}"
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
