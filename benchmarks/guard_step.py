"""The write guard's stateful step alone on ``memory://``, as its state grows: the C step on
the guard's native tables against the step's Python twin on the keyspace, side by side.

    python benchmarks/guard_step.py                      # 150,000 submissions, 100,000 members
    python benchmarks/guard_step.py --submissions 30000 --quick

What the service's guard runs for a client's common signed submission, minus the HTTP and
the board's write: the in-process C stage (``front``: bounds, HMAC, skew, the step's keys
and arguments), then the check step (ban list, the member's and the IP's GCRA limits, the
nonce, the velocity cap, the z-score, and the writes), with ``benchmarks/guard.py``'s full
guard (every limit high enough that nothing is refused). Members are drawn at random from
``--members``; every submission carries a new nonce, kept for twice the skew window (an
hour here), so the state grows by a nonce a submission. Each variant runs on a backend of
its own; the submissions are cut in thirds and each third's CPU µs per submission printed
(the main thread: ``time.thread_time``), so a step whose cost grows with its state shows
it. ``front only`` is the stage without the step.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path[0] = str(ROOT)
elif str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.engine import machine_info  # noqa: E402 - path set above
from benchmarks.guard import SECRET  # noqa: E402
from ranked import Leaderboard  # noqa: E402
from ranked.backends.memory import MemoryBackend  # noqa: E402
from ranked.backends.procedure import Operation, Procedure  # noqa: E402
from ranked.guard import Guard, GuardConfig, Secret, sign  # noqa: E402
from ranked.guard._procedures import check_operation  # noqa: E402
from ranked.ratelimit import Policy  # noqa: E402

BOARD = "guarded"
IP = "127.0.0.1"
CONFIG = GuardConfig(
    min_score=0,
    max_score=10_000_000,
    secrets=(Secret(SECRET),),
    skew=3600,
    player_limit=Policy(1_000_000, 1, "gcra"),
    ip_limit=Policy(1_000_000, 1, "gcra"),
    max_step=5_000_000,
    max_change=5_000_000,
    change_span=60,
    z_threshold=1_000_000,
    z_min_history=2,
)
"""``benchmarks/guard.py``'s full guard, as the library's configuration."""

Submission = tuple[str, int, int, str, str]


def _submissions(count: int, members: int) -> list[Submission]:
    rng = random.Random(1)
    now = int(time.time() * 1000)
    found = []
    for i in range(count):
        member, score, nonce = f"m{rng.randrange(members)}", rng.randrange(1_000_000), f"n-{i:09d}"
        found.append((member, score, now, nonce, sign(SECRET, BOARD, member, score, now, nonce)))
    return found


def _twin_operation() -> Operation[Any]:
    """The check step without its native name: memory binds its Python twin."""
    operation = check_operation(CONFIG.player_limit, CONFIG.ip_limit)
    procedure = operation.procedure
    twin: Procedure[Any] = Procedure(
        procedure.package, procedure.name, procedure.local, procedure.decode
    )
    return Operation(twin, operation.encode, operation.native_args)


def _run(variant: str, submissions: list[Submission]) -> list[float]:
    backend = MemoryBackend()
    board = Leaderboard(backend, BOARD)
    guard = Guard(CONFIG)
    first = submissions[0]
    assert guard.submit(
        board, "first", 1, client_time=first[2], nonce="first-nonce",
        signature=sign(SECRET, BOARD, "first", 1, first[2], "first-nonce"), ip=IP,
        key_scope="read",
    ).accepted  # fmt: skip
    state = guard._board(board)
    check: Callable[..., Any] = state.check
    if variant == "Python twin on the keyspace":
        check = backend.bind(_twin_operation())
    front = state.front
    assert front is not None
    window = state.window_key(board)
    thirds = []
    size = len(submissions) // 3
    for part in range(3):
        chunk = submissions[part * size : (part + 1) * size]
        start = time.thread_time()
        for member, score, client_time, nonce, signature in chunk:
            found = front(
                member, score, client_time, nonce, signature, IP, "read", time.time(), window
            )
            if found is None:
                raise RuntimeError("the C stage refused a well-signed submission")
            if variant != "front only":
                check(found[2], found[3], None)
        thirds.append((time.thread_time() - start) / len(chunk) * 1e6)
    board.close()
    return thirds


VARIANTS = ("C step on the native tables", "Python twin on the keyspace", "front only")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=150_000)
    parser.add_argument("--members", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="30,000 submissions")
    args = parser.parse_args()
    count = 30_000 if args.quick else args.submissions
    submissions = _submissions(count, args.members)
    print(machine_info(None))
    print(
        f"\n{count:,} signed submissions, {args.members:,} members, a new nonce each;"
        " CPU µs per submission by third:\n"
    )
    print("| variant | first third | second third | last third |")
    print("|---|---:|---:|---:|")
    found = {variant: _run(variant, submissions) for variant in VARIANTS}
    for variant, thirds in found.items():
        print(f"| {variant} | " + " | ".join(f"{t:.2f}" for t in thirds) + " |")
    step = [a - b for a, b in zip(found[VARIANTS[0]], found["front only"], strict=True)]
    twin = [a - b for a, b in zip(found[VARIANTS[1]], found["front only"], strict=True)]
    print(
        "\nThe step alone (front only subtracted): C "
        + ", ".join(f"{t:.2f}" for t in step)
        + "; twin "
        + ", ".join(f"{t:.2f}" for t in twin)
        + "; twin / C "
        + ", ".join(f"{b / a:.1f}x" for a, b in zip(step, twin, strict=True))
    )


if __name__ == "__main__":
    main()
