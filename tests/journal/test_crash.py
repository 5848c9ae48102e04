"""Crash safety of ``always`` durability: a child appending from 4 threads is SIGKILLed at
a random moment, 20 times on one file; after each kill every acknowledged event is there
exactly once, seqs are strictly increasing and every row parses."""

from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from ranked.journal import open_journal

ROUNDS = 20
CHILD = Path(__file__).with_name("crash_child.py")
SRC = Path(__file__).resolve().parents[2] / "src"


def _run_and_kill(path: Path, round_no: int, rng: random.Random) -> dict[str, int]:
    """Run the child, SIGKILL it once it has acknowledged a random number of appends (or
    after a random time), and return the acknowledged ``{key: seq}``."""
    paths = [str(SRC), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(path), str(round_no)],
        stdout=subprocess.PIPE,
        env=env,
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == b"ready\n"
        target = rng.randrange(0, 200)
        deadline = time.monotonic() + rng.uniform(0.0, 0.5)
        lines: list[bytes] = []
        while len(lines) < target and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            lines.append(line)
        child.send_signal(signal.SIGKILL)
        child.wait()
        lines.append(child.stdout.read())
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    return _parse(b"".join(lines))


def _parse(text: bytes) -> dict[str, int]:
    acked: dict[str, int] = {}
    lines = text.split(b"\n")
    for line in lines[:-1]:  # the last piece has no newline: a line cut by the kill
        seq, key = line.decode().split(" ")
        acked[key] = int(seq)
    return acked


def test_sigkill_loses_no_acknowledged_event(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    rng = random.Random(16)
    total_acked = 0
    for round_no in range(ROUNDS):
        acked = _run_and_kill(path, round_no, rng)
        total_acked += len(acked)
        with open_journal(f"sqlite://{path}") as journal:
            events = list(journal.read())  # every row parses, or this raises
            seqs = [e.seq for e in events]
            assert all(a < b for a, b in itertools.pairwise(seqs))
            by_key = {e.key: e for e in events}
            assert len(by_key) == len(events)  # each key once
            lost = {key: seq for key, seq in acked.items() if key not in by_key}
            assert lost == {}
            assert all(by_key[key].seq == seq for key, seq in acked.items())
            assert all(e.member == (e.key or "").encode() for e in events)
    print(f"crash test: {ROUNDS} rounds, {total_acked} acknowledged events checked, 0 lost")
