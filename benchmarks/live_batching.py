"""Batched ``incr`` writes: the coalescing ratio (issue 18, point 6, second target).

The target: "Batched incr writes at 10 per second per member for 10,000 members cut
journal commits and index writes >= 10x against unbatched, with equal final scores."

That is 100,000 writes a second. Through ``ranked serve`` over HTTP this 2-core machine
answers about 18,000 requests a second with nothing else running (benchmarks/RESULTS-
service.md), and the load generator needs a core of its own, so the full rate is driven
into the library: an :class:`~ranked.leaderboard.AsyncLeaderboard` on ``memory://`` with
a SQLite journal (durability ``always``: every commit fsynced), the same objects the
service runs. Each workload runs twice on fresh boards, once with every increment a
``board.submit`` (unbatched) and once through an :class:`~ranked.leaderboard.IncrBatcher`
flushing every 100 ms (the service's ``batch_incr_ms``), issued open-loop on a fixed
schedule: every 1 ms one tick of increments, each a task of its own that waits for its
answer (as a client would). Counted: journal commits and events (the store's
``CommitStats``), index writes (board write calls: each one atomic step, one Lua call on
Redis) and member entries written (the (member, delta) pairs the index applies). The final
scores of the two boards are compared member by member.

``--service`` also drives a real ``ranked serve`` over HTTP at a rate this machine can
keep (default 200 members at 10 a second each), batching off and on, and reads the same
counts from ``/metrics``.

Workloads:

- ``10k x 10/s``: the target's: 10,000 members, each incremented every 100 ms;
- ``1k x 100/s``: the same 100,000 increments a second on 1,000 hot members, so that a
  flush holds ~10 increments of each member (coalescing per member shows).

Run from the repository root::

    python benchmarks/live_batching.py            # 3 runs of 2 s each, then the table
    python benchmarks/live_batching.py --quick    # one short run
    python benchmarks/live_batching.py --service  # also through ranked serve
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE.parent))

from ranked.journal import open_journal  # noqa: E402 - needs the path set above
from ranked.leaderboard import AsyncLeaderboard, Flushed, IncrBatcher  # noqa: E402

INTERVAL_MS = 100
WORKLOADS = (
    ("10,000 members x 10/s (overload)", 10_000, 10),
    ("10,000 members x 0.5/s", 10_000, 0.5),
    ("500 members x 10/s", 500, 10),
    ("100 members x 50/s", 100, 50),
)
"""(name, members, increments a second per member): the target's 100,000 a second, which
this machine cannot keep up with (run for at most 1 s), then 5,000 a second, which it
keeps up with unbatched."""
TICK_S = 0.001
RESULTS = HERE / "RESULTS-live-batching.md"


@dataclass
class Run:
    commits: int
    events: int
    writes: int
    entries: int
    increments: int
    seconds: float
    scores: dict[str, float]


def _delta(member: int, tick: int) -> int:
    return 1 + (member + tick) % 5


async def _drive(members: int, per_second: float, seconds: float, batched: bool) -> Run:
    """One run on a fresh board and journal: the workload issued on schedule, then every
    answer awaited."""
    with tempfile.TemporaryDirectory() as directory:
        store = open_journal(f"sqlite:///{directory}/journal.db?durability=always")
        board = AsyncLeaderboard(
            "memory://",
            f"bench{time.monotonic_ns()}",
            operator="incr",
            journal=store,
            max_page_size=members,
            snapshot_every=None,
        )
        await board.record_config()  # its one event, before the counts
        flushes: list[Flushed] = []
        batcher = IncrBatcher(board, INTERVAL_MS, on_flush=flushes.append) if batched else None
        base_commits, base_events = store.stats.commits, store.stats.events
        per_tick = members * per_second * TICK_S  # increments each tick
        ticks = round(seconds / TICK_S)
        tasks: list[asyncio.Task[Any]] = []
        started = time.perf_counter()
        issued = 0.0
        cursor = 0
        for tick in range(ticks):
            issued += per_tick
            while cursor < issued:
                member = cursor % members
                name = f"m{member}"
                delta = _delta(member, tick)
                if batcher is not None:
                    tasks.append(asyncio.ensure_future(batcher.add(name, delta)))
                else:
                    tasks.append(asyncio.ensure_future(board.submit(name, delta)))
                cursor += 1
            pause = started + (tick + 1) * TICK_S - time.perf_counter()
            await asyncio.sleep(max(pause, 0))
        await asyncio.gather(*tasks)
        if batcher is not None:
            await batcher.close()
        elapsed = time.perf_counter() - started
        scores = {str(e.member): e.score for e in await board.top(members)}
        run = Run(
            commits=store.stats.commits - base_commits,
            events=store.stats.events - base_events,
            writes=sum(f.writes for f in flushes) if batched else cursor,
            entries=sum(f.entries for f in flushes) if batched else cursor,
            increments=cursor,
            seconds=elapsed,
            scores=scores,
        )
        await board.close()
        store.close()
        return run


def _median(runs: list[Run], field: str) -> float:
    return float(statistics.median(getattr(r, field) for r in runs))


def _table(rows: list[tuple[str, list[Run], list[Run], bool]]) -> str:
    lines = [
        "| workload | increments | | journal commits | journal events | index writes"
        " | member entries | seconds to drain |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for name, plain, batched, equal in rows:
        for label, runs in (("unbatched", plain), ("batched 100 ms", batched)):
            lines.append(
                f"| {name} | {_median(runs, 'increments'):,.0f} | {label}"
                f" | {_median(runs, 'commits'):,.0f} | {_median(runs, 'events'):,.0f}"
                f" | {_median(runs, 'writes'):,.0f} | {_median(runs, 'entries'):,.0f}"
                f" | {_median(runs, 'seconds'):.2f} |"
            )

        def ratio(field: str, plain: list[Run] = plain, batched: list[Run] = batched) -> str:
            ratios = [
                getattr(p, field) / max(getattr(b, field), 1)
                for p, b in zip(plain, batched, strict=True)
            ]
            return f"**{statistics.median(ratios):,.1f}x**"

        lines.append(
            f"| {name} | | ratio (equal scores: {'yes' if equal else 'NO'})"
            f" | {ratio('commits')} | {ratio('events')} | {ratio('writes')}"
            f" | {ratio('entries')} | |"
        )
    return "\n".join(lines)


# -- through ranked serve --------------------------------------------------------------


def _metric(text: str, name: str, board: str | None = None) -> float:
    label = "" if board is None else rf'\{{board="{board}"\}}'
    found = re.search(rf"^{name}{label} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


class _Connection:
    """One keep-alive HTTP/1.1 connection (httpx's asyncio client costs more CPU a request
    than this 2-core machine can spare beside the server)."""

    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self.host, self.port = host, port
        self.head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        raw = b"" if body is None else json.dumps(body).encode()
        self.writer.write(
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n{self.head}"
            f"Content-Type: application/json\r\nContent-Length: {len(raw)}\r\n\r\n".encode()
            + raw
        )
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        payload = await self.reader.readexactly(length)
        status = int(status_line.split()[1])
        is_json = payload[:1] in (b"{", b"[")
        return status, json.loads(payload) if is_json else payload.decode()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _service_run(
    host: str, port: int, headers: dict[str, str], members: int, seconds: float
) -> list[Run]:
    admin = _Connection(host, port, headers)
    clients = [_Connection(host, port, headers) for _ in range(members)]
    results = []
    for batched in (False, True):
        board = f"svc{'b' if batched else 'u'}{time.monotonic_ns()}"
        settings: dict[str, Any] = {"operator": "incr"}
        if batched:
            settings["batch_incr_ms"] = INTERVAL_MS
        status, _ = await admin.request("PUT", f"/v1/boards/{board}", settings)
        assert status in (200, 201), status
        before = (await admin.request("GET", "/metrics"))[1]
        started = time.perf_counter()

        async def member(index: int, board: str = board, started: float = started) -> int:
            # one client per member, 10 increments a second, each waiting for its answer;
            # the clients' phases spread over the 100 ms (not all at once)
            sent = 0
            for tick in range(round(seconds * 10)):
                due = started + (tick + index / members) * 0.1
                await asyncio.sleep(max(due - time.perf_counter(), 0))
                status, _ = await clients[index].request(
                    "POST",
                    f"/v1/boards/{board}/scores",
                    {"member": f"m{index}", "score": _delta(index, tick)},
                )
                assert status == 200, status
                sent += 1
            return sent

        sent = sum(await asyncio.gather(*(member(i) for i in range(members))))
        elapsed = time.perf_counter() - started
        after = (await admin.request("GET", "/metrics"))[1]
        top = (await admin.request("GET", f"/v1/boards/{board}/top?limit={members}"))[1]
        scores = {e["member"]: e["score"] for e in top["entries"]}
        commits = _metric(after, "ranked_journal_commits_total") - _metric(
            before, "ranked_journal_commits_total"
        )
        events = _metric(after, "ranked_journal_events_total") - _metric(
            before, "ranked_journal_events_total"
        )
        flushes = _metric(after, "ranked_batched_flushes_total", board)
        entries = _metric(after, "ranked_batched_writes_total", board)
        results.append(
            Run(
                int(commits),
                int(events),
                int(flushes) if batched else sent,
                int(entries) if batched else sent,
                sent,
                elapsed,
                scores,
            )
        )
    for each in (admin, *clients):
        each.close()
    return results


def _service(members: int, seconds: float) -> tuple[Run, Run]:
    """Both runs against one ``ranked serve`` on a fresh data directory."""
    import os
    import signal
    import urllib.request

    from benchmarks._wrk import free_port
    from ranked.service.keys import KeyStore, Scope

    with tempfile.TemporaryDirectory() as directory:
        data = Path(directory)
        with KeyStore(data) as keys:
            key = keys.create(Scope.ADMIN)[1]
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
        command = [sys.executable, "-m", "ranked", "serve", "--data-dir", directory]
        process = subprocess.Popen(
            [*command, "--port", str(port), "--log-level", "warning"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/readyz", timeout=1) as answer:
                        if answer.status == 200:
                            break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            headers = {"Authorization": f"Bearer {key}"}
            plain, batched = asyncio.run(_service_run("127.0.0.1", port, headers, members, seconds))
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    return plain, batched


def _machine() -> str:
    model = "unknown CPU"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        found = re.search(r"Model name:\s*(.+)", out)
        model = found.group(1).strip() if found else model
    except (OSError, subprocess.CalledProcessError):
        pass
    import os

    return (
        f"{model}, {os.cpu_count()} CPUs (shared with other work), {platform.system()}"
        f" {platform.release()}, Python {platform.python_version()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one short run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--service", action="store_true", help="also through ranked serve")
    parser.add_argument("--service-members", type=int, default=200)
    parser.add_argument("--only-service", action="store_true", help="the service run alone")
    parser.add_argument("--no-write", action="store_true", help="do not write the results")
    args = parser.parse_args()
    runs, seconds = (1, 0.5) if args.quick else (args.runs, args.seconds)
    rows = []
    for name, members, rate in () if args.only_service else WORKLOADS:
        plain: list[Run] = []
        batched: list[Run] = []
        length = min(seconds, 1.0) if members * rate > 10_000 else seconds
        for _ in range(runs):  # alternated
            plain.append(asyncio.run(_drive(members, rate, length, batched=False)))
            batched.append(asyncio.run(_drive(members, rate, length, batched=True)))
            print(f"{name}: run done", file=sys.stderr)
        equal = all(p.scores == b.scores for p, b in zip(plain, batched, strict=True))
        rows.append((name, plain, batched, equal))
    table = _table(rows)
    print(table)
    service_table = ""
    if args.service or args.only_service:
        plain_s, batched_s = _service(args.service_members, seconds)
        equal = plain_s.scores == batched_s.scores
        service_table = _table(
            [(f"ranked serve, {args.service_members} x 10/s", [plain_s], [batched_s], equal)]
        )
        print()
        print(service_table)
    if args.no_write or args.quick or args.only_service:
        return
    text = f"""# Batched incr writes: the coalescing ratio

`python benchmarks/live_batching.py{" --service" if args.service else ""}` (issue 18, point 6;
docs/live.md, "Batched writes"). Machine: {_machine()}.

The library, driven directly (100,000 writes a second is beyond HTTP on this machine):
`AsyncLeaderboard` on `memory://` with a SQLite journal, durability `always`; each
workload {seconds:g} s of increments issued on a fixed 1 ms schedule, every increment a task
waiting for its answer; unbatched (`board.submit`) against `IncrBatcher` at 100 ms. Medians
of {runs} alternated runs; ratios are medians of the runs' ratios (unbatched / batched).
"Index writes": board write calls, each one atomic step (one Lua call on Redis); "member
entries": the (member, delta) pairs the index applied. "Seconds to drain": from the first
increment to the last answer (unbatched falls behind the schedule when it cannot keep up).

{table}
"""
    if service_table:
        text += f"""
Through `ranked serve` (embedded default: memory:// + SQLite, durability `always`), one
HTTP client per member sending 10 increments a second, each waiting for its answer (what
this machine can drive with the server and the client on its two cores); counts from
`/metrics`. One run.

{service_table}
"""
    from benchmarks._wrk import write_results

    write_results(RESULTS, text)
    print(f"written to {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
