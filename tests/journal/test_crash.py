"""Crash safety of ``always`` durability: a child appending from 4 threads is SIGKILLed at
a random moment, 20 times on one file; after each kill every acknowledged event is there
exactly once, seqs are strictly increasing and every row parses."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from ranked.journal import open_journal

from .kill import run_and_kill

ROUNDS = 20
CHILD = Path(__file__).with_name("crash_child.py")


def _run_and_kill(path: Path, round_no: int, rng: random.Random) -> dict[str, int]:
    """Run the child, SIGKILL it once it has acknowledged a random number of appends (or
    after a random time), and return the acknowledged ``{key: seq}``."""
    lines = run_and_kill([str(CHILD), str(path), str(round_no)], rng, 200, (0.0, 0.5))
    return {key: int(seq) for seq, key in (line.split(" ") for line in lines)}


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
