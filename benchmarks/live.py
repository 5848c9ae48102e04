"""Write-to-browser latency of ``ranked serve``'s live board channel (issue 18, point 6).

Run from the repository root::

    python benchmarks/live.py              # 100 and 1,000 clients x 5,000 writes/s, 3 runs
    python benchmarks/live.py --quick      # smoke run: 20 clients, 500 writes/s, 1 s (CI)
    python benchmarks/live.py --markdown   # also write RESULTS-live.md
    python benchmarks/live.py --coalescing # the coalescing ratio of batched increments
                                           # (benchmarks/live_batching.py, its results
                                           # RESULTS-live-batching.md)

What runs, in three processes besides this one:

- the server: ``ranked serve`` on the embedded default (``memory://``, SQLite journal,
  durability ``always``) in a fresh temporary data directory, alone on CPU 0
  (``taskset``; ``benchmarks/_wrk.py``'s :class:`Server`). A board ``arena`` with
  ``public_reads``, 10,000 members loaded through the batch endpoint before the clients
  connect;
- the clients (``--role clients``, CPU 1, uvloop): N WebSocket connections to the board
  channel (``/v1/boards/arena/live?limit=10``), a minimal client written here (handshake,
  frame parsing; no per-message JSON decoding) so that 1,000 of them fit on one core.
  Every client checks that its updates' event ids are contiguous from its snapshot on,
  and records, per message, the arrival instant and the first and last event id it
  carries. Client 0 also decodes every update fully: the member and score of each event
  id;
- the writer (``--role writer``, CPU 1, uvloop): keep-alive HTTP/1.1 connections sending
  writes on a fixed schedule (``--rate`` writes/s), either one submission a request
  (``POST .../scores``) or batches of ``--batch`` (``POST .../scores/batch``; a batch of
  100 is 100 writes, each acknowledged when the batch's answer arrives). Write ``k``
  sets member ``m<k mod 10,000>`` to score ``1,000,000 + k``: every score is unique and
  every write improves its member (an event each). It records the instant each answer
  arrived.

Latency of one event at one client = the instant the update carrying it arrived at that
client - the instant its write was acknowledged (both ``time.monotonic()``: Linux's
CLOCK_MONOTONIC is one clock for every process of the machine). Event ids are matched to
writes through client 0's decoded scores. Percentiles are over (client, event) pairs of
the measured interval (after a warm-up); they are computed on a sample of the event ids
(every ``s``-th id, ``s`` chosen to keep about 3 million pairs), the maximum on all of
them. Fan-out messages/s: update messages received by all clients together per second;
events/s: events delivered (summed over clients) per second.

Both load generators share CPU 1, so their own CPU use is reported: a client process near
100% of its core delays its reading and inflates the measured latency. The writer's
schedule is open-loop: when the server falls behind, requests queue in the writer (the
"write ack p99" column shows it), and writes not sent within 5 s of the schedule's end are
dropped and reported. The server's CPU time per message received by all clients (its
writes included) is little moved by other work on its core; on a shared machine the
latencies are.

Each row runs on both transports, alternated (``--transport`` picks one): ``same-port``,
the channels under granian's ASGI server on the service's port, and ``live-port``, the
service started with ``--live-port`` and the clients connected there (websockets, one
synchronous write per connection; docs/live.md, The live port).

``--interval S`` sets the server's ``RANKED_LIVE_INTERVAL``; ``--profile DIR`` runs it under
cProfile (one ``.prof`` per start); ``--clients``, ``--rate``, ``--batch``, ``--seconds``
and ``--runs`` change the grid.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import http.client
import json
import marshal
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    # Run as a script: the repository root replaces this folder on the path, so that
    # benchmarks/queue.py does not shadow the standard library's queue.
    sys.path[0] = str(ROOT)
elif str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULTS = HERE / "RESULTS-live.md"
HOST = "127.0.0.1"
BOARD = "arena"
MEMBERS = 10_000
BASE_SCORE = 1_000_000
TOP_LIMIT = 10
SAMPLED_PAIRS = 3_000_000
TARGET_P99_MS = 50.0
TARGET_CLIENTS = 1000
TARGET_RATE = 5000.0
TRANSPORTS = ("same-port", "live-port")
LATE_S = 5.0
"""Writes not sent within this many seconds of the writer's end are not sent at all."""


# -- the clients' process -------------------------------------------------------------------


class WsClient(asyncio.Protocol):
    """One board-channel subscriber: a WebSocket handshake, then unmasked server frames
    parsed by hand. Per update message: the arrival instant, the first and the last
    event id (read from the message's start, not decoded)."""

    def __init__(self, path: str, port: int, decode_all: bool, ready: asyncio.Future[None]):
        self.path = path
        self.port = port
        self.decode_all = decode_all
        self.ready = ready
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.upgraded = False
        self.fragments = bytearray()
        self.last = -1
        self.snapshot_id = -1
        self.gaps = 0
        self.empty = 0
        self.close_code = 0
        self.times = array("d")
        self.firsts = array("q")
        self.lasts = array("q")
        self.scores: dict[int, float] = {}

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport = cast(asyncio.Transport, transport)  # uvloop's: no subclass
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            (
                f"GET {self.path} HTTP/1.1\r\nHost: {HOST}:{self.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(f"connection lost: {exc}"))

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        buffer = self.buffer
        buffer += data
        if not self.upgraded:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if not buffer.startswith(b"HTTP/1.1 101"):
                self.ready.set_exception(ConnectionError(bytes(buffer[:200]).decode()))
                return
            del buffer[: end + 4]
            self.upgraded = True
        pos, size = 0, len(buffer)
        while size - pos >= 2:
            head, length = buffer[pos], buffer[pos + 1] & 0x7F
            start = pos + 2
            if length == 126:
                if size - pos < 4:
                    break
                length = int.from_bytes(buffer[pos + 2 : pos + 4], "big")
                start = pos + 4
            elif length == 127:
                if size - pos < 10:
                    break
                length = int.from_bytes(buffer[pos + 2 : pos + 10], "big")
                start = pos + 10
            if size - start < length:
                break
            payload = bytes(buffer[start : start + length])
            pos = start + length
            opcode = head & 0x0F
            if not head & 0x80:  # a fragment: keep it until the final one
                self.fragments += payload
                continue
            if opcode == 0:
                payload, self.fragments = bytes(self.fragments + payload), bytearray()
            self._frame(opcode, payload, now)
        if pos:
            del buffer[:pos]

    def _frame(self, opcode: int, payload: bytes, now: float) -> None:
        if opcode == 8:
            self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
            if self.transport is not None:
                self.transport.close()
            return
        if opcode == 9 and self.transport is not None:  # pong, masked with a zero key
            self.transport.write(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
            return
        if payload.startswith(b'{"type":"update"'):
            last = int(payload[22 : payload.index(b",", 22)])  # after '{"type":"update","id":'
            at = payload.find(b'"events":[{"id":') + 16
            if at < 16:  # no event: the top only
                self.empty += 1
                return
            first = int(payload[at : payload.index(b",", at)])
            if first != self.last + 1:
                self.gaps += 1
            self.last = last
            self.times.append(now)
            self.firsts.append(first)
            self.lasts.append(last)
            if self.decode_all:
                for event in json.loads(payload)["events"]:
                    if event.get("op") == "submit":
                        self.scores[event["id"]] = event["score"]
        elif payload.startswith(b'{"type":"snapshot"'):
            self.snapshot_id = self.last = json.loads(payload)["id"]
            if not self.ready.done():
                self.ready.set_result(None)


async def _clients(port: int, count: int, out: Path) -> None:
    loop = asyncio.get_running_loop()
    path = f"/v1/boards/{BOARD}/live?limit={TOP_LIMIT}"
    clients: list[WsClient] = []
    for start in range(0, count, 100):  # connect in steps: the listen backlog is finite
        step = []
        for index in range(start, min(start + 100, count)):
            ready: asyncio.Future[None] = loop.create_future()
            client = WsClient(path, port, index == 0, ready)
            await loop.create_connection(lambda c=client: c, HOST, port)  # type: ignore[misc]
            clients.append(client)
            step.append(ready)
        await asyncio.wait_for(asyncio.gather(*step), 60)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    print("ready", flush=True)
    await stop.wait()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    data = {
        "cpu": usage.ru_utime + usage.ru_stime,
        "clients": [
            (
                c.times.tobytes(),
                c.firsts.tobytes(),
                c.lasts.tobytes(),
                c.gaps,
                c.close_code,
                c.empty,
            )
            for c in clients
        ],
        "scores": list(clients[0].scores.items()),
    }
    out.write_bytes(marshal.dumps(data))
    for client in clients:
        if client.transport is not None:
            client.transport.abort()


# -- the writer's process -------------------------------------------------------------------


async def _writer(
    port: int, key: str, rate: float, batch: int, seconds: float, connections: int, out: Path
) -> None:
    """Send ``rate`` writes/s for ``seconds`` (a request each ``batch / rate`` s, over
    ``connections`` keep-alive connections), recording each answer's instant."""
    jobs: asyncio.Queue[tuple[int, float]] = asyncio.Queue()
    acks = array("d")  # acks[k]: the instant write k was acknowledged (0: not yet)
    dues = array("d")
    total = int(rate * seconds)
    total -= total % batch
    acks.extend([0.0] * total)
    dues.extend([0.0] * total)
    errors = skipped = 0
    single = f"/v1/boards/{BOARD}/scores"
    many = f"/v1/boards/{BOARD}/scores/batch"

    def request(first: int) -> bytes:
        if batch == 1:
            path = single
            body = f'{{"member":"m{first % MEMBERS}","score":{BASE_SCORE + first}}}'
        else:
            path = many
            items = ",".join(
                f'{{"member":"m{k % MEMBERS}","score":{BASE_SCORE + k}}}'
                for k in range(first, first + batch)
            )
            body = f'{{"scores":[{items}]}}'
        raw = body.encode()
        return (
            f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(raw)}\r\n\r\n"
        ).encode() + raw

    async def worker() -> None:
        nonlocal errors, skipped
        reader, writer = await asyncio.open_connection(HOST, port)
        while True:
            first, _due = await jobs.get()
            if first < 0:
                break
            if time.monotonic() > give_up:  # the server fell far behind: stop sending
                skipped += batch
                continue
            writer.write(request(first))
            head = await reader.readuntil(b"\r\n\r\n")
            now = time.monotonic()
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            if head[9:12] != b"200":
                errors += 1
                continue
            for k in range(first, first + batch):
                acks[k] = now
        writer.close()

    workers = [asyncio.create_task(worker()) for _ in range(connections)]
    started = time.monotonic() + 0.05
    give_up = started + seconds + LATE_S
    step = batch / rate
    for number in range(total // batch):
        due = started + number * step
        wait = due - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        first = number * batch
        for k in range(first, first + batch):
            dues[k] = due
        jobs.put_nowait((first, due))
    for _ in workers:
        jobs.put_nowait((-1, 0.0))
    await asyncio.gather(*workers)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.write_bytes(
        marshal.dumps(
            {
                "acks": acks.tobytes(),
                "dues": dues.tobytes(),
                "errors": errors,
                "skipped": skipped,
                "cpu": usage.ru_utime + usage.ru_stime,
                "started": started,
                "ended": time.monotonic(),
            }
        )
    )


# -- the coordinator ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Settings:
    clients: tuple[int, ...]
    rate: float
    batches: tuple[int, ...]
    seconds: float
    warmup: float
    runs: int
    interval: float | None
    """``RANKED_LIVE_INTERVAL`` for the server (None: its default)."""
    transports: tuple[str, ...] = TRANSPORTS
    """Where the clients connect: ``same-port`` (the channels under granian's ASGI
    server), ``live-port`` (the service's ``--live-port``, :mod:`ranked.service.fastlive`)."""
    profile: Path | None = None
    """Run the server under cProfile, one ``.prof`` file per start in this folder."""


@dataclass(slots=True)
class Sample:
    """One run: ``clients`` subscribers on ``transport``, ``rate`` writes/s in batches of
    ``batch``."""

    transport: str
    clients: int
    batch: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    messages_per_s: float
    events_per_s: float
    writes_per_s: float
    write_p99_ms: float
    """The writes' own latency: acknowledgement - scheduled send."""
    lost_clients: int
    """Clients whose event ids were not contiguous (an event missing)."""
    dropped: int
    """Clients closed by the server (4008: too slow, or any other code)."""
    write_errors: int
    server_cpu: float
    server_us_per_message: float
    """The server's CPU time (its writes included) over every message the clients got: a
    figure little moved by other work taking part of the server's core."""
    clients_cpu: float
    writer_cpu: float
    sampled: int
    notes: list[str] = field(default_factory=list)


def _percentile(ordered: Sequence[float], q: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _post(port: int, path: str, body: Any, key: str, method: str = "POST") -> Any:
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        conn.request(method, path, body=json.dumps(body), headers=headers)
        answer = conn.getresponse()
        text = answer.read()
    finally:
        conn.close()
    if answer.status >= 300:
        raise RuntimeError(f"{method} {path}: {answer.status} {text[:300]!r}")
    return json.loads(text)


def _role(*args: str) -> list[str]:
    return ["taskset", "-c", CLIENT_CPU, sys.executable, str(Path(__file__).resolve()), *args]


def run_once(
    settings: Settings, transport: str, clients: int, batch: int, env: dict[str, str]
) -> Sample:
    """One server start, ``clients`` subscribers, the writer for warm-up + measured time."""
    from benchmarks._wrk import Server, free_port, process_cpu_seconds
    from ranked.service.keys import KeyStore, Scope

    with tempfile.TemporaryDirectory(prefix="ranked-livebench-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        with KeyStore(data) as keys:
            admin = keys.create(Scope.ADMIN)[1]
            write = keys.create(Scope.WRITE)[1]
        runner = [sys.executable, "-m", "ranked"]
        if settings.profile is not None:  # cProfile (benchmarks/service.py's wrapper)
            from benchmarks.service import _PROFILED

            settings.profile.mkdir(parents=True, exist_ok=True)
            out = settings.profile / f"live-{clients}-{batch}-{time.strftime('%H%M%S')}.prof"
            runner = [sys.executable, "-c", _PROFILED, str(out)]
        command = [
            *runner, "serve", "--data-dir", str(data), "--host", HOST,
            "--port", "{port}", "--log-level", "warning",
        ]  # fmt: skip
        live_port = free_port() if transport == "live-port" else 0
        command += ["--live-port", str(live_port)]
        with Server(command, ready="/readyz", env=env, cwd=str(ROOT)) as server:
            port = server.port
            _post(port, f"/v1/boards/{BOARD}", {"public_reads": True}, admin, "PUT")
            for start in range(0, MEMBERS, 1000):
                items = [{"member": f"m{i}", "score": i} for i in range(start, start + 1000)]
                _post(port, f"/v1/boards/{BOARD}/scores/batch", {"scores": items}, write)
            out_clients = Path(tmp) / "clients.bin"
            out_writer = Path(tmp) / "writer.bin"
            listener = subprocess.Popen(
                _role("--role", "clients", "--port", str(live_port or port),
                      "--clients", str(clients), "--out", str(out_clients)),
                env=env, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            try:
                assert listener.stdout is not None
                line = listener.stdout.readline()
                if line.strip() != "ready":
                    raise RuntimeError(f"the clients did not connect: {line!r}")
                served = server.cpu_seconds()
                started = time.monotonic()
                connections = 32 if batch == 1 else 8
                subprocess.run(
                    _role("--role", "writer", "--port", str(port), "--key", write,
                          "--rate", str(settings.rate), "--batch", str(batch),
                          "--seconds", str(settings.warmup + settings.seconds),
                          "--connections", str(connections), "--out", str(out_writer)),
                    env=env, check=True, timeout=settings.warmup + settings.seconds + 120,
                )  # fmt: skip
                time.sleep(2.0)  # the last flushes
                wall = time.monotonic() - started
                served = server.cpu_seconds() - served
                client_cpu_now = process_cpu_seconds(pids=[listener.pid])
            finally:
                listener.send_signal(signal.SIGTERM)
                listener.wait(timeout=120)
            seen = marshal.loads(out_clients.read_bytes())
            wrote = marshal.loads(out_writer.read_bytes())
    return analyse(settings, transport, clients, batch, seen, wrote, served, client_cpu_now, wall)


def analyse(
    settings: Settings,
    transport: str,
    clients: int,
    batch: int,
    seen: dict[str, Any],
    wrote: dict[str, Any],
    server_cpu_s: float,
    clients_cpu_s: float,
    wall: float,
) -> Sample:
    acks, dues = array("d"), array("d")
    acks.frombytes(wrote["acks"])
    dues.frombytes(wrote["dues"])
    measured_from = wrote["started"] + settings.warmup
    measured_to = wrote["ended"]
    span = measured_to - measured_from
    ack_of: dict[int, float] = {}  # event id -> acknowledgement instant
    for event_id, score in seen["scores"]:
        k = int(score) - BASE_SCORE
        if 0 <= k < len(acks) and acks[k] > 0:
            ack_of[event_id] = acks[k]
    in_window = {i: t for i, t in ack_of.items() if measured_from <= t <= measured_to}
    last_id = max(ack_of, default=0)
    pairs = clients * len(in_window)
    step = max(1, pairs // SAMPLED_PAIRS)
    latencies: list[float] = []
    worst = 0.0
    lowest: dict[tuple[int, int], float] = {}
    messages = events = lost = dropped = behind = all_messages = 0
    empty = 0
    for times_raw, firsts_raw, lasts_raw, gaps, code, no_events in seen["clients"]:
        empty += no_events
        times, firsts, lasts = array("d"), array("q"), array("q")
        times.frombytes(times_raw)
        firsts.frombytes(firsts_raw)
        lasts.frombytes(lasts_raw)
        if gaps:
            lost += 1
        if not lasts or lasts[-1] < last_id:
            behind += 1
        if code:
            dropped += 1
        all_messages += len(times)
        for at, first, last in zip(times, firsts, lasts, strict=True):
            if measured_from <= at <= measured_to:
                messages += 1
                events += last - first + 1
            key = (first, last)
            low = lowest.get(key)
            if low is None:
                found = [in_window[i] for i in range(first, last + 1) if i in in_window]
                low = lowest[key] = min(found) if found else at
            worst = max(worst, at - low)
            for i in range(first + (-first % step), last + 1, step):
                ack = in_window.get(i)
                if ack is not None:
                    latencies.append(at - ack)
    latencies.sort()
    done = [a for a in acks if a > 0]
    write_lat = sorted(a - d for a, d in zip(acks, dues, strict=True) if a > 0)
    writes_in = sum(1 for a in done if measured_from <= a <= measured_to)
    notes = []
    if empty:
        notes.append(f"{empty:,} updates without events (the top only)")
    if behind:
        notes.append(f"{behind} clients had not received the last event when stopped")
    if wrote["skipped"]:
        notes.append(f"{wrote['skipped']:,} writes not sent: the server fell behind")
    elif len(done) < len(acks):
        notes.append(f"{len(acks) - len(done)} writes not acknowledged")
    return Sample(
        transport=transport,
        clients=clients,
        batch=batch,
        p50_ms=_percentile(latencies, 0.50) * 1e3,
        p99_ms=_percentile(latencies, 0.99) * 1e3,
        max_ms=worst * 1e3,
        messages_per_s=messages / span,
        events_per_s=events / span,
        writes_per_s=writes_in / span,
        write_p99_ms=_percentile(write_lat, 0.99) * 1e3,
        lost_clients=lost,
        dropped=dropped,
        write_errors=wrote["errors"],
        server_cpu=server_cpu_s / wall,
        server_us_per_message=server_cpu_s / all_messages * 1e6 if all_messages else 0.0,
        clients_cpu=clients_cpu_s / wall,
        writer_cpu=wrote["cpu"] / (wrote["ended"] - wrote["started"]),
        sampled=len(latencies),
        notes=notes,
    )


CLIENT_CPU = "1"


def _median(samples: list[Sample]) -> Sample:
    def med(name: str) -> float:
        return float(statistics.median(getattr(s, name) for s in samples))

    first = samples[0]
    return Sample(
        transport=first.transport,
        clients=first.clients,
        batch=first.batch,
        p50_ms=med("p50_ms"),
        p99_ms=med("p99_ms"),
        max_ms=med("max_ms"),
        messages_per_s=med("messages_per_s"),
        events_per_s=med("events_per_s"),
        writes_per_s=med("writes_per_s"),
        write_p99_ms=med("write_p99_ms"),
        lost_clients=sum(s.lost_clients for s in samples),
        dropped=sum(s.dropped for s in samples),
        write_errors=sum(s.write_errors for s in samples),
        server_cpu=med("server_cpu"),
        server_us_per_message=med("server_us_per_message"),
        clients_cpu=med("clients_cpu"),
        writer_cpu=med("writer_cpu"),
        sampled=int(med("sampled")),
        notes=[n for s in samples for n in s.notes],
    )


def _line(s: Sample) -> str:
    return (
        f"| {s.transport} | {s.clients:,} | {_writes(s.batch)} | {s.writes_per_s:,.0f} | "
        f"{s.p50_ms:.1f} | {s.p99_ms:.1f} | {s.max_ms:.1f} | {s.messages_per_s:,.0f} | "
        f"{s.events_per_s:,.0f} | "
        f"{s.lost_clients} | {s.dropped} | {s.write_p99_ms:.1f} | {s.server_cpu:.0%} | "
        f"{s.clients_cpu:.0%} | {s.writer_cpu:.0%} | {_per_message(s)} |"
    )


def _per_message(s: Sample) -> str:
    return f"{s.server_us_per_message:.0f}" if s.server_us_per_message else ""


def _writes(batch: int) -> str:
    return "single" if batch == 1 else f"batches of {batch}"


def table(medians: list[Sample], runs: int) -> str:
    lines = [
        "| transport | clients | writes | writes/s | p50 ms | p99 ms | max ms | fan-out messages/s "
        "| events delivered/s | clients with a lost event | clients dropped "
        "| write ack p99 ms | server CPU | clients' CPU | writer's CPU "
        "| server CPU µs per message |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [_line(s) for s in medians]
    lines.append("")
    lines.append(
        f"Medians of {runs} run(s) (lost events and drops: summed over the runs). CPU: "
        "each process's CPU time over the run's wall time (the server alone on CPU 0; the "
        "clients' and the writer's processes share CPU 1)."
    )
    return "\n".join(lines)


def verdict(medians: list[Sample]) -> str:
    found = [s for s in medians if s.clients == TARGET_CLIENTS]
    if not found:
        return "- target not measured (no run with 1,000 clients)"
    lines = []
    for s in found:
        met = (
            s.p99_ms <= TARGET_P99_MS
            and s.writes_per_s >= 0.95 * TARGET_RATE
            and not s.lost_clients
            and not s.dropped
        )
        lines.append(
            f"- {s.transport}, {TARGET_CLIENTS:,} clients, {s.writes_per_s:,.0f} writes/s "
            f"({_writes(s.batch)}): p99 {s.p99_ms:.1f} ms (target <= {TARGET_P99_MS:g} ms "
            f"at {TARGET_RATE:,.0f} writes/s, no event lost): "
            f"**{'MET' if met else 'NOT MET'}**"
        )
    return "\n".join(lines)


def results(settings: Settings, medians: list[Sample]) -> str:
    from benchmarks.engine import machine_info
    from ranked.service.live import LiveLimits

    interval = (
        f"{LiveLimits().interval} s (the default)"
        if settings.interval is None
        else f"{settings.interval} s"
    )
    return "\n".join(
        [
            "# Live channels: write-to-client latency",
            "",
            "`benchmarks/live.py` (its docstring gives the method). `ranked serve` on the "
            "embedded default (memory://, SQLite journal, durability always) alone on "
            f"CPU 0; {settings.rate:,.0f} writes/s for {settings.warmup:g} s of warm-up and "
            f"{settings.seconds:g} s measured, while N clients subscribe to the board "
            f"channel (top {TOP_LIMIT}; every update carries every event since the previous "
            f"one). `RANKED_LIVE_INTERVAL`: {interval}. Transports: `same-port` (the "
            "channels under granian's ASGI server), `live-port` (the service's "
            "`--live-port`: websockets, one synchronous write per connection). Latency: the "
            "event's arrival at a client - its write's acknowledgement, over every (client, "
            "event) pair.",
            "",
            "## Machine",
            "",
            machine_info(None),
            "",
            "## Results",
            "",
            table(medians, settings.runs),
            "",
            "## Target",
            "",
            verdict(medians),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 clients, 500 writes/s, 1 s")
    parser.add_argument("--markdown", action="store_true", help=f"write {RESULTS.name}")
    parser.add_argument("--clients", type=int, nargs="+", default=None)
    parser.add_argument("--rate", type=float, default=None, help="writes/s (default 5,000)")
    parser.add_argument("--batch", type=int, nargs="+", default=None, help="default: 1 100")
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--interval", type=float, default=None, help="RANKED_LIVE_INTERVAL")
    parser.add_argument(
        "--transport", choices=TRANSPORTS, nargs="+", default=None, help="default: both"
    )
    parser.add_argument("--profile", type=Path, default=None, help="cProfile the server to DIR")
    parser.add_argument(
        "--coalescing",
        action="store_true",
        help="measure the coalescing ratio of batched increments instead (live_batching.py)",
    )
    # the load generators' processes (started by the coordinator)
    parser.add_argument("--role", choices=("clients", "writer"), default=None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--key", default="")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.coalescing:
        flags = ["--quick", "--no-write"] if args.quick else ["--service"]
        raise SystemExit(subprocess.call([sys.executable, str(HERE / "live_batching.py"), *flags]))
    if args.role is not None:
        import uvloop

        assert args.out is not None
        if args.role == "clients":
            uvloop.run(_clients(args.port, args.clients[0], args.out))
        else:
            uvloop.run(
                _writer(
                    args.port, args.key, args.rate, args.batch[0], args.seconds,
                    args.connections, args.out,
                )
            )  # fmt: skip
        return
    settings = Settings(
        clients=tuple(args.clients or ((20,) if args.quick else (100, 1000))),
        rate=args.rate or (500.0 if args.quick else TARGET_RATE),
        batches=tuple(args.batch or (1, 100)),
        seconds=args.seconds or (1.0 if args.quick else 12.0),
        warmup=0.5 if args.quick else 2.0,
        runs=args.runs or (1 if args.quick else 3),
        interval=args.interval,
        transports=tuple(args.transport or TRANSPORTS),
        profile=args.profile,
    )
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    if settings.interval is not None:
        env["RANKED_LIVE_INTERVAL"] = str(settings.interval)
    print(f"Python {platform.python_version()}; {settings}", flush=True)
    samples: dict[tuple[str, int, int], list[Sample]] = {}
    grid = [
        (transport, clients, batch)
        for clients in settings.clients
        for batch in settings.batches
        for transport in settings.transports  # alternated: the machine's load drifts
    ]
    for number in range(settings.runs):
        for transport, clients, batch in grid:
            sample = run_once(settings, transport, clients, batch, env)
            samples.setdefault((transport, clients, batch), []).append(sample)
            print(
                f"run {number + 1}/{settings.runs} {transport:9} {clients:5} clients "
                f"{_writes(batch):17} "
                f"{sample.writes_per_s:7,.0f} writes/s  p50 {sample.p50_ms:6.1f} ms  "
                f"p99 {sample.p99_ms:6.1f} ms  max {sample.max_ms:6.1f} ms  "
                f"{sample.messages_per_s:8,.0f} msg/s  lost {sample.lost_clients}  "
                f"dropped {sample.dropped}  cpu server {sample.server_cpu:.0%} "
                f"clients {sample.clients_cpu:.0%} writer {sample.writer_cpu:.0%} "
                f"{_per_message(sample)} µs/msg"
                + (f"  ({'; '.join(sample.notes)})" if sample.notes else ""),
                flush=True,
            )
    medians = [_median(runs) for runs in samples.values()]
    print()
    print(table(medians, settings.runs))
    print()
    print(verdict(medians))
    failed = [s for s in medians if s.lost_clients or s.write_errors]
    if args.markdown:
        from benchmarks._wrk import write_results

        write_results(RESULTS, results(settings, medians))
        print(f"wrote {RESULTS}")
    if failed:
        raise SystemExit("events lost or writes refused (see the table)")


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
