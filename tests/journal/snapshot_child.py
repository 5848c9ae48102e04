"""The child of the snapshot crash tests, killed by its parent while it writes.

``loop DIR FIRST SIZE``: writes snapshots of board ``b`` at seq FIRST, FIRST+1, ... with
:func:`payload` as payload, and prints ``<seq>`` once each write has returned, until killed.

``half DIR SEQ SIZE``: writes one snapshot, but stops after half of the payload is in the
temporary file, prints ``half`` and sleeps (the parent kills it there).
"""

from __future__ import annotations

import os
import sys
import time

from ranked.journal import SnapshotStore
from ranked.journal import snapshots as snapshots_module

BOARD = "b"


def payload(seq: int, size: int) -> bytes:
    """The payload of ``seq``: a torn or mixed one never equals it."""
    return seq.to_bytes(8, "little") * (size // 8) + bytes([seq % 251]) * (size % 8)


def _stall_halfway() -> None:
    real = snapshots_module._write_all

    def write_all(fd: int, data: memoryview) -> None:
        if len(data) < 1024:  # header or footer
            real(fd, data)
            return
        real(fd, data[: len(data) // 2])
        sys.stdout.write("half\n")
        sys.stdout.flush()
        while True:
            time.sleep(60)

    snapshots_module._write_all = write_all


def main() -> None:
    mode, directory, first, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    store = SnapshotStore(directory)
    if mode == "half":
        _stall_halfway()
        store.write(BOARD, first, payload(first, size))
        os._exit(1)  # not reached
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    seq = first
    while True:
        store.write(BOARD, seq, payload(seq, size))
        sys.stdout.write(f"{seq}\n")
        sys.stdout.flush()
        seq += 1


if __name__ == "__main__":
    main()
