"""Crash-safe snapshot files: the newest good snapshot of each board, in one directory.

A snapshot is an opaque payload (bytes the caller produces and restores) taken at a journal
``seq``: the board's state once every event up to that seq is applied. Restoring is the
newest snapshot that verifies plus the journal's events after its seq. This module knows
nothing about boards beyond their names.

File names: ``<board>.<seq:020d>.snap``. ``<board>`` is the board name's UTF-8 bytes with
every byte outside ``[a-z0-9_-]`` written ``%xx`` (lower-case hex), so the name is safe on
any filesystem (no ``/``, no leading ``.``, no case-only differences for a case-insensitive
one) and ``.`` only separates fields. A name whose escape is longer than
:data:`_MAX_ESCAPED` characters is cut (never inside a ``%xx``) and ends with ``~`` and 32
hex digits of its BLAKE2b hash, so every name :func:`~ranked.core._names.check_name`
accepts fits in 255 bytes with the temporary suffix. The header also carries the exact
board name, so a file of another board is never taken for this one's.

File format (little-endian)::

    offset  size  field
    0       4     magic b"RKSN"
    4       2     format version (1)
    6       2     n: length of the board name in UTF-8 bytes
    8       8     seq (u64)
    16      8     payload length (u64)
    24      4     payload checksum: CRC-32 (zlib.crc32)
    28      n     board name (UTF-8)
    28+n    4     header checksum: CRC-32 of bytes 0 .. 28+n
    32+n    len   payload
    then    16    footer: payload checksum (u32), payload length (u64), b"NSKR"

Checksum: CRC-32 from the standard library's ``zlib`` (about 2 GB/s on one core; it releases
the GIL). CRC-32C is about 5x faster with the ``crc32c`` wheel, but would be ranked's first
runtime dependency for a step that is a small part of a load; BLAKE2b is 2.5x slower than
CRC-32. A CRC detects accidental damage (every burst of up to 32 bits, and any other damage
with probability 1 - 2**-32), not tampering.

A file verifies when: it is at least a header long; the magic, version and header checksum
are right; the header names this board and the seq of the file name; the file is exactly
``header + length + 16`` bytes (so a torn or truncated file is found from its size,
without reading it); the footer repeats the header; the payload's CRC matches. Any defect
is one WARNING on the ``ranked.journal`` logger naming the file and the defect, and the
next older snapshot is tried: :meth:`SnapshotStore.load_newest` never raises for a
damaged file and never returns a wrong payload.

Writing (:meth:`SnapshotStore.write`) is crash-safe: the file is written under a temporary
name ``<board>.<seq>.snap.tmp-<16 hex>`` in the same directory (held under an exclusive
``flock`` while it is written), fsynced, renamed over the final name with ``os.replace``,
and the directory is fsynced. A crash at any point leaves either the previous files or the
new complete one, never a torn file under a final name (a torn temporary file at most).
Temporary files whose writer has died (their lock is free) are removed by the next
``load_newest``, ``write`` or ``remove`` of that board, with one WARNING each; a temporary
file being written by a live writer, in this process or another, is left alone.

Once a new snapshot is durable, :meth:`SnapshotStore.write` prunes the board: the newest
``keep`` good snapshots stay (the new one included), older files and damaged ones are
deleted, and so are snapshots of a higher seq than the new one (see
:meth:`SnapshotStore.discard_after`: they are from a history the journal lost).

Costs: ``write`` writes the payload once and reads it once (the checksum), plus one fsync of
the file and one of the directory; when pruning, an older snapshot that this store has not
written or verified itself is read once to verify it. ``load_newest`` reads the header with
one small read and the payload with one read straight into the returned ``bytes``, then
checksums it. Listing is O(files in the directory).

Thread safety: one :class:`SnapshotStore` may be used from several threads; several
processes may read a directory while one writes it. POSIX only (``flock``, fsync of a
directory).
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import hashlib
import logging
import os
import re
import secrets
import struct
import threading
import zlib
from pathlib import Path
from typing import Final

from ..core._names import check_name
from ..errors import OutOfRangeError, SnapshotError, SnapshotFileError

__all__ = ["FORMAT_VERSION", "MAGIC", "MAX_SEQ", "SnapshotStore"]

MAGIC: Final = b"RKSN"
"""The first four bytes of every snapshot file."""

FORMAT_VERSION: Final = 1
"""The snapshot file format this ranked writes and reads."""

MAX_SEQ: Final = 2**63 - 1
"""The largest seq a snapshot can carry (the journal's seqs are SQLite rowids)."""

_END_MAGIC: Final = b"NSKR"
_FIXED: Final = struct.Struct("<4sHHQQI")  # magic, version, n, seq, length, payload crc
_CRC: Final = struct.Struct("<I")
_FOOTER: Final = struct.Struct("<IQ4s")  # payload crc, length, end magic

# 160 + ".<20 digits>.snap" + ".tmp-<16 hex>" = 207 bytes, within the usual 255.
_MAX_ESCAPED: Final = 160
_HASH_HEX: Final = 32
_SAFE: Final = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_-")
_FINAL: Final = re.compile(r"(\d{20})\.snap")
_TEMP: Final = re.compile(r"(\d{20})\.snap\.tmp-[0-9a-f]{16}")

_log = logging.getLogger("ranked.journal")


def escape_board(board: str) -> str:
    """The file-name form of ``board`` (see the module docstring): injective, made of
    ``[a-z0-9_%~-]`` only, at most :data:`_MAX_ESCAPED` characters."""
    raw = board.encode("utf-8")
    escaped = "".join(chr(b) if b in _SAFE else f"%{b:02x}" for b in raw)
    if len(escaped) <= _MAX_ESCAPED:
        return escaped
    cut = _MAX_ESCAPED - _HASH_HEX - 1
    if "%" in escaped[cut - 2 : cut]:  # never leave half of a %xx
        cut = escaped.rindex("%", cut - 2, cut)
    digest = hashlib.blake2b(raw, digest_size=_HASH_HEX // 2).hexdigest()
    return f"{escaped[:cut]}~{digest}"


def _check_seq(seq: object, what: str) -> int:
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_SEQ:
        raise OutOfRangeError(f"{what} must be an int in 0..{MAX_SEQ} (MAX_SEQ), not {seq!r}")
    return seq


def _identity(stat: os.stat_result) -> tuple[int, int, int]:
    """What tells a file verified before from one replaced or rewritten since."""
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _write_all(fd: int, data: memoryview) -> None:
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_if_dead(path: Path) -> bool:
    """Remove the temporary file ``path`` if no live writer holds its lock; True if removed.

    A writer locks its temporary file right after creating it and keeps the lock until it
    is renamed or removed, and a lock dies with its process, so a free lock means an
    abandoned file (see :meth:`SnapshotStore._create_temp` for the moment in between)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False  # renamed or removed meanwhile
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # being written
        try:
            os.unlink(path)
        except FileNotFoundError:
            return False
        return True
    finally:
        os.close(fd)


class SnapshotStore:
    """Snapshots of named boards, as files in one directory (created if missing).

    ``keep`` (an int >= 1, default 2) is how many good snapshots of each board
    :meth:`write` keeps. Bad arguments raise :class:`~ranked.errors.InvalidNameError`
    (board), :class:`~ranked.errors.OutOfRangeError` (seq, keep) or ``TypeError`` (payload)
    before anything is touched; a directory that cannot be used or a file that cannot be
    written raises :class:`~ranked.errors.SnapshotFileError` (the ``OSError`` is its cause).
    """

    def __init__(self, directory: str | os.PathLike[str], *, keep: int = 2) -> None:
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise OutOfRangeError(f"keep must be an int >= 1, not {keep!r}")
        self._directory = Path(directory)
        self._keep = keep
        try:
            self._directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise SnapshotFileError(
                f"snapshot directory {str(self._directory)!r} cannot be used: {error}"
            ) from error
        self._lock = threading.Lock()
        # Files this store wrote or verified: (inode, size, mtime) when it did. Pruning trusts
        # them without reading them again.
        self._verified: dict[Path, tuple[int, int, int]] = {}

    @property
    def directory(self) -> Path:
        return self._directory

    @property
    def keep(self) -> int:
        return self._keep

    def path(self, board: str, seq: int) -> Path:
        """The file name of ``board``'s snapshot at ``seq`` (whether it exists or not)."""
        check_name(board, "board")
        _check_seq(seq, "seq")
        return self._directory / f"{escape_board(board)}.{seq:020d}.snap"

    # -- writing ---------------------------------------------------------------------------

    def write(self, board: str, seq: int, payload: bytes | bytearray | memoryview) -> Path:
        """Write ``board``'s snapshot at ``seq`` durably and return its path; then prune.

        Atomic: a reader (or a restart after a crash) sees the file complete or not at all.
        When it returns, the file and its name are on disk (fsynced): a crash, even a power
        cut, leaves this snapshot or a newer one. A snapshot of the same seq is replaced.
        Pruning (after the new file is durable) keeps the newest :attr:`keep` good
        snapshots and deletes older and damaged files, and snapshots of a higher seq (as
        :meth:`discard_after`). O(len(payload)) plus two fsyncs.
        """
        check_name(board, "board")
        _check_seq(seq, "seq")
        if not isinstance(payload, bytes | bytearray | memoryview):
            raise TypeError(f"payload must be bytes, not {type(payload).__name__}")
        data = memoryview(payload).cast("B")
        name = escape_board(board)
        final = self._directory / f"{name}.{seq:020d}.snap"
        board_bytes = board.encode("utf-8")
        crc = zlib.crc32(data)
        header = _FIXED.pack(MAGIC, FORMAT_VERSION, len(board_bytes), seq, len(data), crc)
        header += board_bytes
        header += _CRC.pack(zlib.crc32(header))
        footer = _FOOTER.pack(crc, len(data), _END_MAGIC)
        try:
            temp, fd = self._create_temp(f"{name}.{seq:020d}.snap")
        except OSError as error:
            raise self._failed(final, error) from error
        try:
            try:
                for part in (memoryview(header), data, memoryview(footer)):
                    _write_all(fd, part)
                os.fsync(fd)
                os.replace(temp, final)
                stat = os.fstat(fd)
            finally:
                os.close(fd)  # releases the lock, after the rename
            _fsync_directory(self._directory)
        except BaseException as error:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            if isinstance(error, OSError):
                raise self._failed(final, error) from error
            raise
        with self._lock:
            self._verified[final] = _identity(stat)
            try:
                self._prune(board, name, seq)
            except OSError as error:  # the snapshot is durable: pruning can wait for the next
                _log.warning("snapshots of board %r not pruned: %s", board, error)
        return final

    def _create_temp(self, stem: str) -> tuple[Path, int]:
        """Create and lock a new temporary file for ``stem``; return it and its fd.

        Between its creation and its lock another store may find the file, take the lock and
        remove it as abandoned: so once locked, the file must still be the one under the
        name, else a fresh one is made."""
        while True:
            temp = self._directory / f"{stem}.tmp-{secrets.token_hex(8)}"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
            fd = os.open(temp, flags, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    linked = os.stat(temp).st_ino == os.fstat(fd).st_ino
                except FileNotFoundError:
                    linked = False
            except BaseException:
                os.close(fd)
                raise
            if linked:
                return temp, fd
            os.close(fd)

    def _failed(self, final: Path, error: OSError) -> SnapshotFileError:
        return SnapshotFileError(f"snapshot file {str(final)!r} cannot be written: {error}")

    def _prune(self, board: str, name: str, seq: int) -> None:
        """Delete what the durable snapshot at ``seq`` makes useless (the lock is held)."""
        finals, temps = self._scan(name)
        self._remove_dead_temps(temps)
        good = 1  # the one just written
        doomed: builtins.list[tuple[int, Path]] = []
        for older in sorted((s for s in finals if s != seq), reverse=True):
            path = finals[older]
            if older > seq:
                _log.warning(
                    "snapshot file %s removed: its seq %d is past the new snapshot's %d",
                    path,
                    older,
                    seq,
                )
                doomed.append((older, path))
            elif good < self._keep and self._is_good(path, board, older):
                good += 1
            else:
                doomed.append((older, path))
        self._delete(doomed)

    def _is_good(self, path: Path, board: str, seq: int) -> bool:
        try:
            stat = path.stat()
        except OSError:
            return False
        if self._verified.get(path) == _identity(stat):
            return True
        try:
            _, identity = self._read(path, board, seq)
        except SnapshotError as defect:
            _log.warning("snapshot file %s removed: %s", path, defect)
            return False
        except OSError as error:
            _log.warning("snapshot file %s removed: it cannot be read (%s)", path, error)
            return False
        self._verified[path] = identity
        return True

    def _delete(self, doomed: builtins.list[tuple[int, Path]]) -> None:
        if not doomed:
            return
        for _, path in doomed:
            self._verified.pop(path, None)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        _fsync_directory(self._directory)

    # -- reading ---------------------------------------------------------------------------

    def load_newest(self, board: str, max_seq: int | None = None) -> tuple[int, bytes] | None:
        """The newest snapshot of ``board`` that verifies, as ``(seq, payload)``, or None.

        With ``max_seq``, snapshots of a higher seq are skipped (one WARNING each): the
        journal ends at ``max_seq``, so they hold events it lost. A damaged, truncated or
        foreign file is skipped with one WARNING naming it and what is wrong, and the next
        older one is tried; it is left in place (the next :meth:`write` deletes it).
        Abandoned temporary files of the board are removed (one WARNING each). Reads the
        chosen file once (and each skipped one at most once).
        """
        check_name(board, "board")
        if max_seq is not None:
            _check_seq(max_seq, "max_seq")
        finals, temps = self._scan_or_fail(board)
        self._remove_dead_temps(temps)
        for seq in sorted(finals, reverse=True):
            path = finals[seq]
            if max_seq is not None and seq > max_seq:
                _log.warning(
                    "snapshot file %s skipped: its seq %d is past max_seq %d (the journal's end)",
                    path,
                    seq,
                    max_seq,
                )
                continue
            try:
                payload, identity = self._read(path, board, seq)
            except FileNotFoundError:
                continue  # pruned by a writer meanwhile: a newer one exists
            except SnapshotError as defect:
                _log.warning("snapshot file %s skipped: %s", path, defect)
                continue
            except OSError as error:
                _log.warning("snapshot file %s skipped: it cannot be read (%s)", path, error)
                continue
            with self._lock:  # a later prune need not read it again
                self._verified[path] = identity
            return seq, payload
        return None

    def _read(self, path: Path, board: str, seq: int) -> tuple[bytes, tuple[int, int, int]]:
        """The payload of ``path`` once it verifies (see the module docstring) and the file's
        identity; a defect raises :class:`SnapshotError` saying what is wrong, an unreadable
        file ``OSError``."""
        expected_board = board.encode("utf-8")
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            size = stat.st_size
            head = handle.read(_FIXED.size + len(expected_board) + _CRC.size)
            if len(head) < _FIXED.size:
                raise SnapshotError(f"truncated: {size} bytes, shorter than a header")
            magic, version, n, stored_seq, length, crc = _FIXED.unpack_from(head)
            if magic != MAGIC:
                raise SnapshotError(f"not a ranked snapshot file (magic {magic!r})")
            if version != FORMAT_VERSION:
                raise SnapshotError(
                    f"format version {version} (this ranked reads {FORMAT_VERSION}): a newer"
                    " ranked's file, or a damaged header"
                )
            header_size = _FIXED.size + n + _CRC.size
            if n != len(expected_board):
                head += handle.read(max(0, header_size - len(head)))
            if len(head) < header_size:
                raise SnapshotError(f"truncated: {size} bytes, inside the header")
            (header_crc,) = _CRC.unpack_from(head, header_size - _CRC.size)
            if zlib.crc32(head[: header_size - _CRC.size]) != header_crc:
                raise SnapshotError("header checksum mismatch (a damaged header)")
            stored_board = head[_FIXED.size : _FIXED.size + n]
            if stored_board != expected_board:
                other = stored_board.decode("utf-8", "replace")
                raise SnapshotError(f"it is a snapshot of board {other!r}, not {board!r}")
            if stored_seq != seq:
                raise SnapshotError(f"its header says seq {stored_seq}, its name says {seq}")
            total = header_size + length + _FOOTER.size
            if size != total:
                state = "truncated" if size < total else "too long"
                raise SnapshotError(f"{state}: {size} bytes, the header says {total}")
            handle.seek(header_size)
            payload = handle.read(length)
            footer = handle.read(_FOOTER.size)
        if len(payload) != length or len(footer) != _FOOTER.size:
            raise SnapshotError("truncated while being read")
        if _FOOTER.unpack(footer) != (crc, length, _END_MAGIC):
            raise SnapshotError("the footer does not match the header (a damaged end)")
        if zlib.crc32(payload) != crc:
            raise SnapshotError("payload checksum mismatch (a damaged payload)")
        return payload, _identity(stat)

    # -- housekeeping ----------------------------------------------------------------------

    def discard_after(self, board: str, seq: int) -> builtins.list[int]:
        """Delete ``board``'s snapshots of a seq above ``seq`` and return their seqs.

        Call it once a board is restored with ``load_newest(board, max_seq=end)`` from a
        journal that ends at ``end``: a snapshot past the journal's end holds events the
        journal lost (batch mode), and must not be loaded once the journal has grown past
        it with other events. Durable (the directory is fsynced) when it returns.
        """
        check_name(board, "board")
        _check_seq(seq, "seq")
        finals, _ = self._scan_or_fail(board)
        doomed = sorted((s, p) for s, p in finals.items() if s > seq)
        with self._lock:
            self._delete_or_fail(doomed)
        return [s for s, _ in doomed]

    def remove(self, board: str) -> None:
        """Delete every snapshot of ``board`` and its abandoned temporary files."""
        check_name(board, "board")
        finals, temps = self._scan_or_fail(board)
        self._remove_dead_temps(temps)
        with self._lock:
            self._delete_or_fail(sorted(finals.items()))

    def _delete_or_fail(self, doomed: builtins.list[tuple[int, Path]]) -> None:
        try:
            self._delete(doomed)
        except OSError as error:
            raise SnapshotFileError(
                f"snapshot files in {str(self._directory)!r} cannot be removed: {error}"
            ) from error

    def _scan_or_fail(self, board: str) -> tuple[dict[int, Path], builtins.list[Path]]:
        try:
            return self._scan(escape_board(board))
        except OSError as error:
            raise SnapshotFileError(
                f"snapshot directory {str(self._directory)!r} cannot be read: {error}"
            ) from error

    def _scan(self, name: str) -> tuple[dict[int, Path], builtins.list[Path]]:
        """The board's snapshot files by seq, and its temporary files (``OSError`` if the
        directory cannot be listed)."""
        prefix = name + "."
        finals: dict[int, Path] = {}
        temps: builtins.list[Path] = []
        for entry in os.listdir(self._directory):
            if not entry.startswith(prefix):
                continue
            rest = entry[len(prefix) :]
            if match := _FINAL.fullmatch(rest):
                finals[int(match.group(1))] = self._directory / entry
            elif _TEMP.fullmatch(rest):
                temps.append(self._directory / entry)
        return finals, temps

    def _remove_dead_temps(self, temps: builtins.list[Path]) -> None:
        for temp in temps:
            try:
                removed = _unlink_if_dead(temp)
            except OSError as error:  # not worth failing a load or a write for
                _log.warning("temporary snapshot file %s cannot be removed: %s", temp, error)
                continue
            if removed:
                _log.warning(
                    "temporary snapshot file %s removed: left by an interrupted write", temp
                )

    def list(self, board: str) -> builtins.list[int]:
        """The seqs of ``board``'s snapshot files present, ascending (not verified)."""
        check_name(board, "board")
        return sorted(self._scan_or_fail(board)[0])
