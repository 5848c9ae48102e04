"""Where the write guard's cost goes, inside the service's process: each layer removed in turn.

Run from the repository root (no server needed: the service's ASGI application runs in this
process, as ``ranked serve`` runs it, without the HTTP server)::

    python benchmarks/guard_layers.py              # 30,000 submissions a variant, 3 rounds
    python benchmarks/guard_layers.py --quick      # smoke run

One process opens the service's application on the embedded default (``memory://``, SQLite
journal, durability ``always``, the collector tuned as ``ranked serve`` tunes it) with two
boards, ``plain`` and ``guarded`` (benchmarks/guard.py's full guard), and drives its
submit route through ASGI calls, 64 at a time. Each variant is the main thread's CPU time
per request (``time.thread_time``: the committer's thread and fsync are not in it), the
median over rounds that alternate the variants:

- ``plain``: the unguarded board (a write key, ``{"member", "score"}``);
- ``guard``: the guarded board, signed bodies, the guard as it is;
- the guarded route with the guard's ``submit`` replaced by part of what it does (these
  reach into the guard's private per-board state: a diagnostic, not an API):
  - ``write``: the board's write alone (the guarded route, its signed body, its verdict);
  - ``stage+write``: the in-process C stage (HMAC, skew, bounds, the step's keys) and the
    board's write, no check step;
  - ``stage+busy+write``, ``stage+compute+write``: the same with a computation about as
    long as the check step takes by itself in a loop, touching no state (SHA-256 of
    6 KB; a modular power: about 3.7 µs each alone);
  - ``stage+check+write``: the same with the check step (every stateful layer);
  - ``... no member limit``: the check step without the per-member rate limit;
  - ``... no nonce``: the check step without the nonce;
  - ``... hot state``: the check step on 64 members' state (kept hot) and no nonce: what
    the step would cost if its state were small.

Then each part as the difference of two variants within each round (the machine drifts
between rounds), with the median over the rounds.

The answers and verdicts are not the question here; every variant that replaces the guard
returns a rate-limit decision (the step's, or without the step one made beforehand), so
the route writes the same RateLimit headers.
Figures vary by several µs between runs on a shared machine: compare within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path[0] = str(ROOT)
elif str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.guard import GUARD, SECRET  # noqa: E402 - path set above
from ranked.guard import Verdict, sign  # noqa: E402
from ranked.journal._lane import Lane  # noqa: E402
from ranked.service.app import create_app  # noqa: E402
from ranked.service.config import ServiceConfig  # noqa: E402
from ranked.service.guard_routes import Guards  # noqa: E402
from ranked.service.keys import KeyStore, Scope  # noqa: E402

MEMBERS = 100_000
CONCURRENCY = 64
HOT = 64
IP = "127.0.0.1"
BUSY = b"x" * 6_000
"""What ``stage+busy+write`` hashes in place of the check step: about as long as the
step takes in a loop by itself (4 µs), with no state."""

Call = Callable[[str, str, str, bytes], Awaitable[tuple[int, bytes]]]


def asgi_caller(app: Any) -> Call:
    """One POST/PUT through the application, as an ASGI server would make it."""

    async def call(method: str, path: str, key: str, body: bytes) -> tuple[int, bytes]:
        scope = {
            "type": "http",
            "method": method,
            "path": path,
            "raw_path": path.encode(),
            "headers": [
                (b"authorization", b"Bearer " + key.encode()),
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
            ],
            "query_string": b"",
            "client": (IP, 5555),
            "server": (IP, 8080),
            "scheme": "http",
            "http_version": "1.1",
            "root_path": "",
        }
        sent = False
        out: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()
            return {}

        async def send(message: dict[str, Any]) -> None:
            out.append(message)

        await app(scope, receive, send)
        return out[0]["status"], b"".join(m.get("body", b"") for m in out[1:])

    return call


class Bodies:
    """Request bodies made beforehand: each signed body carries a nonce never used."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.now = int(time.time() * 1000)
        self.count = 0

    def make(self, n: int, signed: bool) -> list[bytes]:
        found = []
        for _ in range(n):
            member, score = f"m{self.rng.randrange(MEMBERS)}", self.rng.randrange(1_000_000)
            body: dict[str, Any] = {"member": member, "score": score}
            if signed:
                self.count += 1
                nonce = f"n{self.count:010d}"
                signature = sign(SECRET, "guarded", member, score, self.now, nonce)
                body.update(client_time=self.now, nonce=nonce, signature=signature)
            found.append(json.dumps(body, separators=(",", ":")).encode())
        return found


def partial_guard(guard: Any, board: Any, variant: str, now: int, fixed: Any) -> Any:
    """The guard's submit replaced by part of it (see the module's docstring)."""
    state = guard._board(board)
    window = state.window_key(board)
    hot = []
    for i in range(HOT):
        member, nonce = f"hot{i}", f"hot{i:08d}"
        signature = sign(SECRET, "guarded", member, 5, now, nonce)
        found = state.front(member, 5, now, nonce, signature, IP, "read", time.time(), window)
        hot.append((found[2][0], found[2][5]))

    async def submit(
        board: Any,
        member: str,
        score: float,
        *,
        client_time: Any = None,
        nonce: Any = None,
        signature: Any = None,
        ip: Any = None,
        key_scope: Any = None,
        **_: Any,
    ) -> Verdict:
        if variant == "write":
            return Verdict("accepted", submission=await board.submit(member, score), limit=fixed)
        found = state.front(
            member, score, client_time, nonce, signature, ip, key_scope, time.time(), window
        )
        _, _, keys, args = found
        limit = fixed
        if variant == "stage+busy+write":
            hashlib.sha256(BUSY).digest()
        elif variant == "stage+compute+write":
            pow(0x1234567, (1 << 20) - 1, (1 << 61) - 1)
        elif variant != "stage+write":
            if variant.endswith("no member limit"):
                del keys[5 : 5 + args[12]]
                args[12] = 0
            if variant.endswith("no nonce") or variant.endswith("hot state"):
                keys[1], args[2] = keys[0], 0
            if variant.endswith("hot state"):
                keys[0], keys[5] = hot[hash(member) % HOT]
                keys[1] = keys[0]
            checked = await state.check(keys, args, None)
            limit = checked.player or checked.ip
        result = await board.submit(member, score)
        return Verdict("accepted", submission=result, limit=limit)

    return submit


VARIANTS = (
    "plain",
    "guard",
    "write",
    "stage+write",
    "stage+busy+write",
    "stage+compute+write",
    "stage+check+write",
    "stage+check+write, no member limit",
    "stage+check+write, no nonce",
    "stage+check+write, hot state",
)


async def run(
    requests: int, rounds: int, durability: str, variants: tuple[str, ...]
) -> dict[str, list[float]]:
    data = Path(tempfile.mkdtemp(prefix="ranked-guard-layers-"))
    keys = KeyStore(data)
    _, admin = keys.create(Scope.ADMIN)
    _, client = keys.create(Scope.READ)
    keys.close()
    config = ServiceConfig(data_dir=data, durability=durability)  # type: ignore[arg-type]
    app = create_app(config)
    await app.boards.open()
    call = asgi_caller(app)
    for path, body in (
        ("/v1/boards/plain", b"{}"),
        ("/v1/boards/guarded", b"{}"),
        ("/v1/boards/guarded/guard", json.dumps(GUARD).encode()),
    ):
        status, answer = await call("PUT", path, admin, body)
        assert status < 300, answer
    guards = next(o for o in gc.get_objects() if type(o) is Guards)
    board = app.boards.get("guarded")
    guarded = await guards.get(board)
    assert guarded is not None
    guard = guarded.guard
    real = guard.submit
    bodies = Bodies(1)
    plans = {
        name: [bodies.make(requests, name != "plain") for _ in range(rounds)] for name in variants
    }
    signature = sign(SECRET, "guarded", "first", 5, bodies.now, "first-nonce")
    first = await real(
        board,
        "first",
        5,
        client_time=bodies.now,
        nonce="first-nonce",
        signature=signature,
        ip=IP,
        key_scope="read",
    )
    assert first.limit is not None, first
    submits = {
        name: partial_guard(guard, board, name, bodies.now, first.limit)
        for name in variants
        if name not in ("plain", "guard")
    }
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 100)  # as ranked serve runs
    found: dict[str, list[float]] = {name: [] for name in variants}
    batches: dict[str, list[float]] = {name: [] for name in variants}

    async def drive(path: str, key: str, part: list[bytes]) -> None:
        for body in part:
            status, answer = await call("POST", path, key, body)
            assert status == 200, answer

    await drive("/v1/boards/plain/scores", admin, bodies.make(2_000, False))  # warm
    lanes = [o for o in gc.get_objects() if type(o) is Lane]  # opened by the first write
    for r in range(rounds):
        for name in variants:
            guard.submit = submits.get(name, real)  # type: ignore[method-assign]
            path, key = (
                ("/v1/boards/plain/scores", admin)
                if name == "plain"
                else ("/v1/boards/guarded/scores", client)
            )
            part = plans[name][r]
            before = [lane.counts() for lane in lanes]
            start = time.thread_time()
            await asyncio.gather(
                *(drive(path, key, part[i::CONCURRENCY]) for i in range(CONCURRENCY))
            )
            found[name].append((time.thread_time() - start) / len(part) * 1e6)
            after = [lane.counts() for lane in lanes]
            commits = sum(b[1] - a[1] for a, b in zip(before, after, strict=True))
            batches[name].append(len(part) / max(commits, 1))
            print(
                f"round {r + 1} {name}: {found[name][-1]:.1f} µs, {batches[name][-1]:.2f} a commit",
                flush=True,
            )
    guard.submit = real  # type: ignore[method-assign]
    await app.boards.close()
    return found


PARTS = (
    ("the signed route's own path", "write", "plain"),
    ("the in-process C stage", "stage+write", "write"),
    ("the check step", "stage+check+write", "stage+write"),
    ("the guard's remaining Python", "guard", "stage+check+write"),
    ("a SHA-256 of 6 KB in place of the check step", "stage+busy+write", "stage+write"),
    ("a modular power in place of the check step", "stage+compute+write", "stage+write"),
    ("the check step: no member limit", "stage+check+write, no member limit", "stage+check+write"),
    ("the check step: no nonce", "stage+check+write, no nonce", "stage+check+write"),
    ("the check step: hot state", "stage+check+write, hot state", "stage+check+write"),
)
"""Each part: (name, the variant with it, the variant without it)."""


def print_parts(found: dict[str, list[float]]) -> None:
    """Each part's µs a request, round by round, and the median."""
    print()
    print("| part (µs a request, main thread) | rounds | median |")
    print("|---|---|---:|")
    for name, more, less in PARTS:
        if more in found and less in found:
            deltas = [a - b for a, b in zip(found[more], found[less], strict=True)]
            rounds = ", ".join(f"{d:+.1f}" for d in deltas)
            print(f"| {name} | {rounds} | {statistics.median(deltas):+.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--requests", type=int, default=30_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="the variants whose name has this text")
    parser.add_argument("--durability", choices=("always", "batch", "none"), default="always")
    options = parser.parse_args()
    requests, rounds = (3_000, 1) if options.quick else (options.requests, options.rounds)
    chosen = tuple(name for name in VARIANTS if name == "plain" or options.only in name)
    found = asyncio.run(run(requests, rounds, options.durability, chosen))
    plain = statistics.median(found["plain"])
    guard = statistics.median(found["guard"]) if "guard" in found else math.nan
    print()
    print(f"Main-thread CPU µs per request, medians of {rounds} rounds of {requests:,}:")
    print()
    print("| variant | µs/request | added over plain | share of the guard's addition |")
    print("|---|---:|---:|---:|")
    for name in found:
        value = statistics.median(found[name])
        added = value - plain
        share = "" if name == "plain" else f"{added / (guard - plain) * 100:.0f}%"
        print(f"| {name} | {value:.1f} | {added:+.1f} | {share} |")
    print_parts(found)


if __name__ == "__main__":
    main()
