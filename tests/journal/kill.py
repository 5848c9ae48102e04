"""What the crash tests share: a child that writes from 4 threads and says what it has
had acknowledged (:func:`serve`), and a parent that SIGKILLs it at a random moment and
reads what it said (:func:`run_and_kill`)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def serve(write: Callable[[int, int], str], threads: int = 4) -> None:
    """In the child: print ``ready``, then call ``write(thread, i)`` for i = 0, 1, ... in
    each thread and print the line it returns once it has returned, until killed."""
    out = threading.Lock()

    def work(thread: int) -> None:
        i = 0
        while True:
            line = write(thread, i)
            with out:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
            i += 1

    workers = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(threads)]
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def run_and_kill(
    args: Sequence[str], rng: random.Random, most: int, seconds: tuple[float, float]
) -> list[str]:
    """Run the child ``python args...``; once it is ready, SIGKILL it after it has printed
    a random number of lines (below ``most``) or after a random time in ``seconds``, and
    return the lines it printed in full (a line cut by the kill is dropped)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    child = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, env=env)
    assert child.stdout is not None
    lines: list[bytes] = []
    try:
        assert child.stdout.readline() == b"ready\n", "the child did not start"
        target = rng.randrange(0, most)
        deadline = time.monotonic() + rng.uniform(*seconds)
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
    return [line.decode() for line in b"".join(lines).split(b"\n")[:-1]]
