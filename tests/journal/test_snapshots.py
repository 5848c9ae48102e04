"""Snapshot files: round trip, the newest good one chosen, damaged files skipped with one
warning each (never an exception, never a wrong payload), crash safety of writes (a child
SIGKILLed while writing), safe file names for odd board names, and pruning."""

from __future__ import annotations

import fcntl
import logging
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ranked.errors import (
    InvalidNameError,
    JournalError,
    OutOfRangeError,
    RankedError,
    SnapshotFileError,
)
from ranked.journal import SnapshotStore
from ranked.journal.snapshots import MAX_SEQ, escape_board

from .snapshot_child import payload as child_payload

BOARD = "arena"
HEADER = 28 + len(BOARD) + 4  # fixed part, board name, header checksum
FOOTER = 16
CHILD = Path(__file__).with_name("snapshot_child.py")
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def store(tmp_path: Path) -> SnapshotStore:
    return SnapshotStore(tmp_path / "snaps")


@pytest.fixture
def warnings(caplog: pytest.LogCaptureFixture) -> Iterator[list[str]]:
    """The WARNING lines of the ``ranked.journal`` logger, as they come."""
    caplog.set_level(logging.WARNING, logger="ranked.journal")
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                lines.append(record.getMessage())

    handler = Collect()
    logger = logging.getLogger("ranked.journal")
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)


def _payload(seq: int, size: int = 1000) -> bytes:
    return random.Random(seq).randbytes(size)


def _two(store: SnapshotStore) -> Path:
    """Good snapshots at seq 1 and 2; return the path of seq 2 (the one to damage)."""
    store.write(BOARD, 1, _payload(1))
    return store.write(BOARD, 2, _payload(2))


def _assert_fell_back(store: SnapshotStore, warnings: list[str], bad: Path) -> None:
    warnings.clear()
    assert store.load_newest(BOARD) == (1, _payload(1))
    assert len(warnings) == 1, warnings
    assert str(bad) in warnings[0]


# -- round trip, choice, max_seq ------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 1000, 3 * 1024 * 1024 + 7])
def test_round_trip(store: SnapshotStore, size: int) -> None:
    data = _payload(7, size)
    path = store.write(BOARD, 7, data)
    assert path == store.path(BOARD, 7)
    assert path.name == "arena.00000000000000000007.snap"
    assert path.stat().st_size == HEADER + size + FOOTER
    loaded = store.load_newest(BOARD)
    assert loaded == (7, data)
    assert type(loaded[1]) is bytes
    assert store.list(BOARD) == [7]


def test_buffer_payloads_round_trip(store: SnapshotStore) -> None:
    store.write(BOARD, 1, bytearray(b"abc"))
    assert store.load_newest(BOARD) == (1, b"abc")
    store.write(BOARD, 2, memoryview(b"xyzw")[1:])
    assert store.load_newest(BOARD) == (2, b"yzw")


def test_the_newest_is_chosen(store: SnapshotStore, warnings: list[str]) -> None:
    store = SnapshotStore(store.directory, keep=3)
    for seq in (3, 7, 10):
        store.write(BOARD, seq, _payload(seq))
    assert store.load_newest(BOARD) == (10, _payload(10))
    assert warnings == []


def test_nothing_to_load(store: SnapshotStore) -> None:
    assert store.load_newest(BOARD) is None
    assert store.list(BOARD) == []
    store.write("other", 1, b"x")
    assert store.load_newest(BOARD) is None


def test_max_seq_skips_snapshots_past_the_journal_end(tmp_path: Path, warnings: list[str]) -> None:
    store = SnapshotStore(tmp_path, keep=3)
    for seq in (1, 2, 3):
        store.write(BOARD, seq, _payload(seq))
    assert store.load_newest(BOARD, max_seq=3) == (3, _payload(3))
    assert warnings == []
    assert store.load_newest(BOARD, max_seq=2) == (2, _payload(2))
    assert len(warnings) == 1
    assert str(store.path(BOARD, 3)) in warnings[0]
    assert "max_seq 2" in warnings[0]
    assert store.load_newest(BOARD, max_seq=0) is None
    assert store.list(BOARD) == [1, 2, 3]  # loading deletes nothing


def test_discard_after_deletes_the_lost_history(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path, keep=3)
    for seq in (1, 2, 3):
        store.write(BOARD, seq, _payload(seq))
    assert store.discard_after(BOARD, 1) == [2, 3]
    assert store.list(BOARD) == [1]
    assert store.discard_after(BOARD, 1) == []


def test_a_snapshot_of_the_same_seq_is_replaced(store: SnapshotStore) -> None:
    store.write(BOARD, 4, b"first")
    store.write(BOARD, 4, b"second")
    assert store.load_newest(BOARD) == (4, b"second")
    assert store.list(BOARD) == [4]


# -- damaged files: skipped with one warning, the older good one used ------------------------

_CUTS = {
    "zero-length": 0,
    "1 byte": 1,
    "inside magic": 3,
    "inside fixed header": 20,
    "fixed header only": 28,
    "inside board name": 30,
    "inside header checksum": HEADER - 1,
    "header only": HEADER,
    "inside payload": HEADER + 500,
    "no footer": HEADER + 1000,
    "inside footer": HEADER + 1000 + 8,
    "last byte missing": HEADER + 1000 + FOOTER - 1,
}


@pytest.mark.parametrize("cut", list(_CUTS.values()), ids=list(_CUTS))
def test_a_truncated_file_is_skipped(store: SnapshotStore, warnings: list[str], cut: int) -> None:
    bad = _two(store)
    with bad.open("r+b") as handle:
        handle.truncate(cut)
    _assert_fell_back(store, warnings, bad)


def test_a_file_with_trailing_bytes_is_skipped(store: SnapshotStore, warnings: list[str]) -> None:
    bad = _two(store)
    with bad.open("ab") as handle:
        handle.write(b"\0")
    _assert_fell_back(store, warnings, bad)
    assert "too long" in warnings[0]


_FLIPS = {
    "magic": 0,
    "version": 4,
    "board length": 6,
    "board length high byte": 7,
    "seq": 8,
    "seq high byte": 15,
    "payload length": 16,
    "payload length high byte": 23,
    "payload checksum": 24,
    "board name": 28,
    "header checksum": HEADER - 4,
    "payload first byte": HEADER,
    "payload middle": HEADER + 500,
    "payload last byte": HEADER + 999,
    "footer checksum": HEADER + 1000,
    "footer length": HEADER + 1000 + 4,
    "footer end magic": HEADER + 1000 + FOOTER - 1,
}


@pytest.mark.parametrize("bit", [0x01, 0x80])
@pytest.mark.parametrize("offset", list(_FLIPS.values()), ids=list(_FLIPS))
def test_a_bit_flip_is_skipped(
    store: SnapshotStore, warnings: list[str], offset: int, bit: int
) -> None:
    bad = _two(store)
    data = bytearray(bad.read_bytes())
    data[offset] ^= bit
    bad.write_bytes(bytes(data))
    _assert_fell_back(store, warnings, bad)


def test_a_zero_length_file_is_skipped(store: SnapshotStore, warnings: list[str]) -> None:
    store.write(BOARD, 1, _payload(1))
    bad = store.path(BOARD, 2)
    bad.touch()
    _assert_fell_back(store, warnings, bad)
    assert "truncated: 0 bytes" in warnings[0]


def _foreign_random(store: SnapshotStore, bad: Path) -> None:
    bad.write_bytes(random.Random(0).randbytes(5000))


def _foreign_text(store: SnapshotStore, bad: Path) -> None:
    bad.write_text("RKSN is how a snapshot starts, but this is a text file\n" * 20)


def _foreign_board(store: SnapshotStore, bad: Path) -> None:
    os.replace(store.write("arenb", 2, _payload(2)), bad)


def _foreign_seq(store: SnapshotStore, bad: Path) -> None:
    os.replace(store.write(BOARD, 9, _payload(2)), bad)


@pytest.mark.parametrize(
    "make", [_foreign_random, _foreign_text, _foreign_board, _foreign_seq], ids=lambda f: f.__name__
)
def test_a_foreign_file_with_the_right_name_is_skipped(
    tmp_path: Path, warnings: list[str], make: object
) -> None:
    store = SnapshotStore(tmp_path, keep=5)
    store.write(BOARD, 1, _payload(1))
    bad = store.path(BOARD, 2)
    assert callable(make)
    make(store, bad)
    _assert_fell_back(store, warnings, bad)


def test_only_the_newest_files_are_read(store: SnapshotStore, warnings: list[str]) -> None:
    """Damaged files older than the chosen one are not even looked at (no warning)."""
    store.write(BOARD, 1, _payload(1))
    store.path(BOARD, 0).write_bytes(b"junk")
    store.write(BOARD, 2, _payload(2))
    assert store.load_newest(BOARD) == (2, _payload(2))
    assert warnings == []


def test_no_good_snapshot_at_all(store: SnapshotStore, warnings: list[str]) -> None:
    for seq in (1, 2):
        store.path(BOARD, seq).write_bytes(b"junk")
    assert store.load_newest(BOARD) is None
    assert len(warnings) == 2


# -- temporary files ---------------------------------------------------------------------------


def _temp_name(seq: int) -> str:
    return f"{escape_board(BOARD)}.{seq:020d}.snap.tmp-0123456789abcdef"


def test_a_leftover_temporary_file_is_removed(store: SnapshotStore, warnings: list[str]) -> None:
    store.write(BOARD, 1, _payload(1))
    temp = store.directory / _temp_name(2)
    temp.write_bytes(b"RKSN half of a snapshot")
    _assert_fell_back(store, warnings, temp)
    assert "interrupted write" in warnings[0]
    assert not temp.exists()
    assert store.list(BOARD) == [1]


def test_a_temporary_file_being_written_is_left_alone(
    store: SnapshotStore, warnings: list[str]
) -> None:
    """A live writer holds the lock on its temporary file (in this process or another)."""
    store.write(BOARD, 1, _payload(1))
    temp = store.directory / _temp_name(2)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert store.load_newest(BOARD) == (1, _payload(1))
        store.write(BOARD, 3, _payload(3))
        assert temp.exists()
        assert warnings == []
    finally:
        os.close(fd)
    store.remove(BOARD)
    assert not temp.exists()


def test_write_removes_leftover_temporary_files(store: SnapshotStore, warnings: list[str]) -> None:
    temp = store.directory / _temp_name(5)
    temp.write_bytes(b"")
    store.write(BOARD, 1, b"x")
    assert not temp.exists()
    assert len(warnings) == 1


def test_a_failed_write_leaves_the_older_snapshots_and_no_temporary_file(
    store: SnapshotStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write(BOARD, 1, _payload(1))
    store.write(BOARD, 2, _payload(2))

    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(SnapshotFileError) as caught:
        store.write(BOARD, 3, _payload(3))
    monkeypatch.undo()
    assert isinstance(caught.value.__cause__, OSError)
    assert sorted(os.listdir(store.directory)) == [
        store.path(BOARD, 1).name,
        store.path(BOARD, 2).name,
    ]
    assert store.load_newest(BOARD) == (2, _payload(2))


def test_an_interrupted_write_removes_its_temporary_file(
    store: SnapshotStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ranked.journal import snapshots

    store.write(BOARD, 1, _payload(1))

    def interrupted(fd: int, data: memoryview) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(snapshots, "_write_all", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.write(BOARD, 2, _payload(2))
    assert os.listdir(store.directory) == [store.path(BOARD, 1).name]


# -- a writer killed by SIGKILL ----------------------------------------------------------------


def _child(*args: object) -> subprocess.Popen[bytes]:
    paths = [str(SRC), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.Popen(
        [sys.executable, str(CHILD), *map(str, args)], stdout=subprocess.PIPE, env=env
    )


def _kill(child: subprocess.Popen[bytes]) -> bytes:
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.stdout is not None
    rest = child.stdout.read()
    child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    return rest


def test_a_writer_killed_halfway_leaves_the_previous_snapshot(
    store: SnapshotStore, warnings: list[str]
) -> None:
    size = 8 * 1024 * 1024
    store.write("b", 1, child_payload(1, size))
    child = _child("half", store.directory, 2, size)
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == b"half\n"
    finally:
        _kill(child)
    (temp,) = (p for p in store.directory.iterdir() if ".tmp-" in p.name)
    assert temp.stat().st_size > size // 2
    assert store.load_newest("b") == (1, child_payload(1, size))
    assert len(warnings) == 1
    assert str(temp) in warnings[0]
    assert store.list("b") == [1]
    assert [p.name for p in store.directory.iterdir()] == [store.path("b", 1).name]


def test_a_writer_killed_at_random_moments(store: SnapshotStore) -> None:
    """10 times: a child writing 4 MB snapshots in a loop is killed at a random moment; the
    directory then yields the snapshot of the last acknowledged seq or the next one (its
    rename may have happened just before the kill), complete, never anything else."""
    size = 4 * 1024 * 1024
    rng = random.Random(20240601)
    seq = 1
    store.write("b", seq, child_payload(seq, size))
    for _ in range(10):
        child = _child("loop", store.directory, seq + 1, size)
        assert child.stdout is not None
        try:
            assert child.stdout.readline() == b"ready\n"
            time.sleep(rng.uniform(0.0, 0.5))  # the moment is not tied to a write's end
        finally:
            out = _kill(child)
        acked = max([seq, *(int(line) for line in out.split(b"\n")[:-1])])
        loaded = store.load_newest("b")
        assert loaded is not None
        got, data = loaded
        assert got in (acked, acked + 1)
        assert data == child_payload(got, size)
        assert not [p for p in store.directory.iterdir() if ".tmp-" in p.name]
        assert len(store.list("b")) <= store.keep + 1
        seq = got


# -- board names ---------------------------------------------------------------------------------

_ODD = [
    "a",
    "A",
    "a/b",
    "../up",
    ".",
    "..",
    ".hidden",
    "a.b",
    "a%2Eb",
    "a b",
    "~",
    "a~0",
    "back\\slash",
    'colon:star*quote"<>|?',
    "CON",
    "nul",
    "üñí",
    "🏆 finals",
    "x" * 200,
    "x" * 199 + "y",
    "é" * 100,
    "é" * 99 + "e",
    "x" + "é" * 99,  # the long form's cut falls at each place in a %xx
    "xx" + "é" * 99,
    "%" * 200,
]


def test_odd_board_names_are_safe_and_distinct(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    for i, board in enumerate(_ODD):
        store.write(board, i, board.encode())
    names = os.listdir(tmp_path)
    assert len(names) == len(_ODD)
    assert len({name.lower() for name in names}) == len(_ODD)  # case-insensitive filesystems
    for name in names:
        assert re.fullmatch(r"[a-z0-9_%~-]+\.\d{20}\.snap", name), name
        assert len(name.encode()) + len(".tmp-0123456789abcdef") <= 255
    for i, board in enumerate(_ODD):
        assert store.load_newest(board) == (i, board.encode())
        assert store.list(board) == [i]


@given(st.text(min_size=1).filter(lambda s: _acceptable(s)))
def test_escaping_is_safe_and_injective(board: str) -> None:
    escaped = escape_board(board)
    assert re.fullmatch(r"[a-z0-9_%~-]+", escaped)
    assert len(escaped) <= 160
    other = board + "x" if len(board.encode()) < 200 else board[:-1]
    assert escape_board(other) != escaped


def _acceptable(board: str) -> bool:
    from ranked.core._names import check_name

    try:
        check_name(board, "board")
    except InvalidNameError:
        return False
    return True


# -- pruning -------------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [1, 2, 3])
def test_pruning_keeps_the_newest(tmp_path: Path, keep: int) -> None:
    store = SnapshotStore(tmp_path, keep=keep)
    for seq in range(1, 6):
        store.write(BOARD, seq, _payload(seq))
        assert store.list(BOARD) == list(range(max(1, seq - keep + 1), seq + 1))
    store.write("other", 1, b"o")
    assert store.list(BOARD) == list(range(6 - keep, 6))


def test_the_default_keep_is_two(store: SnapshotStore) -> None:
    assert store.keep == 2
    for seq in range(1, 6):
        store.write(BOARD, seq, _payload(seq))
    assert store.list(BOARD) == [4, 5]


def test_pruning_does_not_count_a_damaged_snapshot(tmp_path: Path, warnings: list[str]) -> None:
    """A damaged older snapshot is no reason to delete the good one before it: it is
    deleted itself (read again, since another store wrote it)."""
    SnapshotStore(tmp_path, keep=5).write(BOARD, 1, _payload(1))
    bad = SnapshotStore(tmp_path, keep=5).write(BOARD, 2, _payload(2))
    data = bytearray(bad.read_bytes())
    data[HEADER + 10] ^= 1
    bad.write_bytes(bytes(data))
    store = SnapshotStore(tmp_path)
    store.write(BOARD, 3, _payload(3))
    assert store.list(BOARD) == [1, 3]
    assert len(warnings) == 1
    assert str(bad) in warnings[0]


def test_pruning_trusts_a_snapshot_it_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a restore, the next write's pruning does not read the loaded file again."""
    writer = SnapshotStore(tmp_path)
    writer.write(BOARD, 1, _payload(1))
    writer.write(BOARD, 2, _payload(2))
    store = SnapshotStore(tmp_path)
    assert store.load_newest(BOARD) == (2, _payload(2))
    reads: list[Path] = []
    real = SnapshotStore._read

    def counting(self: SnapshotStore, path: Path, board: str, seq: int) -> object:
        reads.append(path)
        return real(self, path, board, seq)

    monkeypatch.setattr(SnapshotStore, "_read", counting)
    store.write(BOARD, 3, _payload(3))
    assert reads == []
    assert store.list(BOARD) == [2, 3]


def test_a_lower_seq_write_deletes_higher_seqs(store: SnapshotStore, warnings: list[str]) -> None:
    """A snapshot at seq N is the board's history now: one of a higher seq is from a history
    the journal lost."""
    store.write(BOARD, 1, _payload(1))
    store.write(BOARD, 5, _payload(5))
    store.write(BOARD, 3, _payload(3))
    assert store.list(BOARD) == [1, 3]
    assert len(warnings) == 1
    assert str(store.path(BOARD, 5)) in warnings[0]


def test_remove_deletes_one_board(store: SnapshotStore) -> None:
    for seq in (1, 2):
        store.write(BOARD, seq, b"x")
        store.write("other", seq, b"y")
    (store.directory / _temp_name(3)).write_bytes(b"")
    store.remove(BOARD)
    assert store.list(BOARD) == []
    assert store.load_newest(BOARD) is None
    assert store.list("other") == [1, 2]
    assert len(os.listdir(store.directory)) == 2


# -- bad arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("board", "seq", "payload", "error"),
    [
        ("", 1, b"x", InvalidNameError),
        ("a{b}", 1, b"x", InvalidNameError),
        ("a\nb", 1, b"x", InvalidNameError),
        ("x" * 201, 1, b"x", InvalidNameError),
        (b"arena", 1, b"x", InvalidNameError),
        (BOARD, -1, b"x", OutOfRangeError),
        (BOARD, MAX_SEQ + 1, b"x", OutOfRangeError),
        (BOARD, True, b"x", OutOfRangeError),
        (BOARD, 1.0, b"x", OutOfRangeError),
        (BOARD, 1, "text", TypeError),
        (BOARD, 1, None, TypeError),
    ],
)
def test_bad_arguments_write_nothing(
    store: SnapshotStore, board: object, seq: object, payload: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        store.write(board, seq, payload)  # type: ignore[arg-type]
    assert os.listdir(store.directory) == []


def test_bad_reads_raise_typed_errors(store: SnapshotStore) -> None:
    with pytest.raises(InvalidNameError):
        store.load_newest("")
    with pytest.raises(OutOfRangeError):
        store.load_newest(BOARD, max_seq=-1)
    with pytest.raises(OutOfRangeError):
        store.discard_after(BOARD, -1)
    with pytest.raises(InvalidNameError):
        store.list("{}")


@pytest.mark.parametrize("keep", [0, -1, True, 2.0, None])
def test_bad_keep(tmp_path: Path, keep: object) -> None:
    with pytest.raises(OutOfRangeError):
        SnapshotStore(tmp_path, keep=keep)  # type: ignore[arg-type]


def test_a_directory_that_cannot_be_used(tmp_path: Path) -> None:
    occupied = tmp_path / "file"
    occupied.write_bytes(b"")
    with pytest.raises(SnapshotFileError) as caught:
        SnapshotStore(occupied)
    assert isinstance(caught.value, JournalError)
    assert isinstance(caught.value, RankedError)
    assert isinstance(caught.value.__cause__, OSError)
    store = SnapshotStore(tmp_path / "gone")
    (tmp_path / "gone").rmdir()
    with pytest.raises(SnapshotFileError):
        store.write(BOARD, 1, b"x")
    with pytest.raises(SnapshotFileError):
        store.load_newest(BOARD)
