"""The service's API keys: scopes, the key format, and a store that keeps only their hashes.

Key format (59 ASCII characters, shown once, when the key is created)::

    rk_<id>_<secret>
    rk_3f9a0c1d2e4b_Vq0P3tE8mN1xYb6cH2kR5sJ9wL4aF7dG0uZ3iO8pQ1e

- ``rk_``: marks a ranked key (so a scanner or a reader recognises one in a log or a repo);
- ``<id>``: 12 lowercase hex digits (48 random bits), public: it names the key in
  ``ranked keys list`` and ``ranked keys revoke``;
- ``<secret>``: 43 characters of URL-safe base64 (``secrets.token_urlsafe(32)``: 256
  random bits). The secret may itself contain ``_``: a key is parsed by position, not split.

Scopes: ``admin`` allows everything ``write`` allows, which allows everything ``read``
allows (:meth:`Scope.allows`).

Storage: ``<data_dir>/keys.db``, a SQLite file (WAL, ``synchronous=FULL``, created with
mode 0600) holding for each key its id, scope, name, creation and revocation instants and
``sha256(key)`` in hex; never the key or its secret. A fast hash is the right one here: the
secret is 256 random bits, so there is nothing to guess that a slow hash would protect.
The schema is versioned in the ``ranked_keys_version`` table (version 1) and created by
:class:`KeyStore` on first use.

Staleness: :meth:`KeyStore.authenticate` remembers its answers in memory, keyed by the
key's hash, and forgets them all once another connection has committed to the file; it
asks SQLite whether one has (``PRAGMA data_version``) at most every ``refresh_interval``
seconds (:data:`REFRESH_INTERVAL`, 0.1 s, by default; ``0``: on every call). So:

- a new key authenticates at once, whichever process created it (a key never presented is
  looked up in the file);
- a key revoked through the same :class:`KeyStore` stops authenticating at once; revoked
  by another store or process (``ranked keys revoke`` while ``ranked serve`` runs), within
  ``refresh_interval`` of that revocation's commit.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from hmac import compare_digest
from pathlib import Path
from types import TracebackType
from typing import Final, TypeVar

from ..errors import KeyArgumentError, KeyNotFoundError, KeyStoreError

__all__ = [
    "KEY_PATTERN",
    "MAX_CACHED_MATCHES",
    "MAX_CACHED_MISSES",
    "REFRESH_INTERVAL",
    "SCHEMA_VERSION",
    "KeyInfo",
    "KeyStore",
    "Scope",
    "check_key_id",
]

KEY_PATTERN: Final = re.compile(r"rk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")
"""A well-formed key (``fullmatch``); group 1 is its id, group 2 its secret."""
_KEY_LENGTH: Final = 59
"""The length of every key :data:`KEY_PATTERN` matches."""

_ID_PATTERN: Final = re.compile(r"[0-9a-f]{12}")
_HASH_PATTERN: Final = re.compile(r"[0-9a-f]{64}")
_MAX_NAME: Final = 200

MAX_CACHED_MATCHES: Final = 4096
"""Most keys :meth:`KeyStore.authenticate` remembers as valid (the oldest goes first)."""

MAX_CACHED_MISSES: Final = 1024
"""Most well-formed but refused keys it remembers, in a cache of their own, so a stream
of random keys can neither grow memory nor push the valid keys out."""

REFRESH_INTERVAL: Final = 0.1
"""Seconds between two looks at whether another process changed the key file: how long a
revocation made elsewhere may go unseen. Looking costs a SQLite call, a few times the cost
of an answer from memory; once per interval, it is nothing per call."""

SCHEMA_VERSION: Final = 1
"""The key store schema this ranked writes and reads."""

_SCHEMA: Final = (
    "CREATE TABLE ranked_keys_version (version INTEGER NOT NULL)",
    "CREATE TABLE api_keys ("
    " id TEXT PRIMARY KEY,"
    " hash TEXT NOT NULL,"
    " scope TEXT NOT NULL,"
    " name TEXT,"
    " created_us INTEGER NOT NULL,"
    " revoked_us INTEGER)",
    f"INSERT INTO ranked_keys_version (version) VALUES ({SCHEMA_VERSION})",
)

_MIGRATIONS: Final[dict[int, tuple[str, ...]]] = {}
"""Statements that take a store from version ``v`` (the key) to ``v + 1``."""

V = TypeVar("V")
_Row = tuple[object, ...]
_Rows = list[_Row]

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND: Final = timedelta(microseconds=1)
_COLUMNS: Final = "id, hash, scope, name, created_us, revoked_us"


class Scope(StrEnum):
    """What a key may do: ``admin`` ⊇ ``write`` ⊇ ``read``."""

    ADMIN = "admin"
    WRITE = "write"
    READ = "read"

    def allows(self, needed: Scope) -> bool:
        """Whether a key of this scope may do what needs ``needed``. O(1)."""
        return _LEVELS[self] >= _LEVELS[needed]


_LEVELS: Final = {Scope.READ: 0, Scope.WRITE: 1, Scope.ADMIN: 2}


@dataclass(frozen=True)
class KeyInfo:
    """One key as the store knows it: everything but its secret."""

    id: str
    """The key's public part (12 hex digits)."""
    scope: Scope
    name: str | None
    """A label for people (who holds the key, what for); ``None`` if none was given."""
    created_at: datetime
    """When the key was created (UTC, microseconds)."""
    revoked_at: datetime | None
    """When the key was first revoked (UTC), or ``None`` while it is valid."""


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("ascii")).hexdigest()


def _micros(instant: datetime) -> int:
    return (instant - _EPOCH) // _MICROSECOND


def _instant(micros: int) -> datetime:
    return _EPOCH + micros * _MICROSECOND


def _check_scope(scope: object) -> Scope:
    if isinstance(scope, str):
        try:
            return Scope(scope)
        except ValueError:
            pass
    raise KeyArgumentError(f"scope must be one of admin, write, read, not {scope!r}")


def _check_name(name: object) -> str | None:
    if name is None:
        return None
    if not isinstance(name, str) or not name or len(name) > _MAX_NAME or not name.isprintable():
        raise KeyArgumentError(
            f"a key's name must be a non-empty str of at most {_MAX_NAME} printable"
            f" characters, not {name!r}"
        )
    return name


def check_key_id(key_id: object) -> str:
    """``key_id`` if it is a well-formed key id (12 lowercase hex digits), else
    :class:`~ranked.errors.KeyArgumentError` (which, given a whole key, names its id and
    not its secret). O(1)."""
    whole = KEY_PATTERN.fullmatch(key_id) if isinstance(key_id, str) else None
    if whole is not None:  # say so without repeating the secret
        raise KeyArgumentError(f"that is a whole key: its id is {whole.group(1)}")
    if not isinstance(key_id, str) or not _ID_PATTERN.fullmatch(key_id):
        raise KeyArgumentError(f"a key id is 12 lowercase hex digits, not {key_id!r}")
    return key_id


class KeyStore:
    """The API keys of the service whose data directory is ``data_dir`` (file
    ``keys.db`` in it; the directory is created if missing).

    Several stores may open one directory, in one process or several (``ranked serve``
    and the ``ranked keys`` commands): SQLite serialises their writes. Thread-safe: one
    lock guards the connection and the caches. Every method is one transaction, so
    atomic. Raises :class:`~ranked.errors.KeyStoreError` if the file cannot be used.

    ``refresh_interval``: at most how long, in seconds, :meth:`authenticate` may go on
    accepting a key another process revoked (``0``: no time at all, for the cost of one
    more SQLite call per authentication; see the module docstring).
    """

    def __init__(self, data_dir: Path, *, refresh_interval: float = REFRESH_INTERVAL) -> None:
        if not refresh_interval >= 0:
            raise KeyArgumentError(f"refresh_interval must be >= 0, not {refresh_interval!r}")
        self.path: Final = Path(data_dir) / "keys.db"
        self._refresh_interval: Final = float(refresh_interval)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = self._open()
        self._matches: dict[str, KeyInfo] = {}
        self._misses: dict[str, None] = {}
        self._data_version = self._read_data_version(self._conn)
        self._next_refresh = time.monotonic() + self._refresh_interval

    # -- opening and closing -----------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        name = f"key store {str(self.path)!r}"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Created private before SQLite opens it; SQLite gives -wal and -shm its mode.
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as error:
            raise KeyStoreError(f"{name} cannot be opened: {error}") from error
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise KeyStoreError(f"{name} cannot use WAL mode (got {mode!r})")
            conn.execute("PRAGMA synchronous=FULL")
            self._prepare(conn, name)
        except sqlite3.Error as error:
            conn.close()
            raise KeyStoreError(f"{name} cannot be opened: {error}") from error
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _prepare(conn: sqlite3.Connection, name: str) -> None:
        """Create the schema in an empty file, migrate an older one, refuse anything else."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            tables = {
                row[0]
                for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if "ranked_keys_version" not in tables:
                if tables:
                    raise KeyStoreError(
                        f"{name} is a SQLite database but not a ranked key store"
                        f" (it has tables {sorted(tables)})"
                    )
                for statement in _SCHEMA:
                    conn.execute(statement)
            else:
                rows = conn.execute("SELECT version FROM ranked_keys_version").fetchall()
                if len(rows) != 1 or not isinstance(rows[0][0], int):
                    raise KeyStoreError(f"{name} has no valid schema version")
                version = rows[0][0]
                if version > SCHEMA_VERSION or version < 1:
                    raise KeyStoreError(
                        f"{name} has schema version {version}; this ranked reads versions"
                        f" 1 to {SCHEMA_VERSION}"
                    )
                while version < SCHEMA_VERSION:
                    for statement in _MIGRATIONS[version]:
                        conn.execute(statement)
                    version += 1
                    conn.execute("UPDATE ranked_keys_version SET version = ?", (version,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the file. Idempotent; any later call raises KeyStoreError."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._forget()

    def __enter__(self) -> KeyStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise KeyStoreError(f"key store {str(self.path)!r} is closed")
        return self._conn

    # -- changing keys -----------------------------------------------------------------

    def create(self, scope: Scope | str, name: str | None = None) -> tuple[KeyInfo, str]:
        """A new key of ``scope``: its info, and the key itself (the only time it is shown:
        the store keeps its hash). O(log n); atomic."""
        checked_scope = _check_scope(scope)
        checked_name = _check_name(name)
        created_at = datetime.now(UTC)
        with self._lock:
            conn = self._connection()
            while True:
                key_id = secrets.token_hex(6)
                key = f"rk_{key_id}_{secrets.token_urlsafe(32)}"
                row = (key_id, _hash(key), str(checked_scope), checked_name, _micros(created_at))
                try:
                    with self._transaction(conn):
                        conn.execute(
                            f"INSERT INTO api_keys ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL)", row
                        )
                except sqlite3.IntegrityError:
                    continue  # the id is taken (1 in 2**48 per existing key): draw again
                break
            # The caches stay: a key nobody could have presented yet is in neither.
        return KeyInfo(key_id, checked_scope, checked_name, created_at, None), key

    def revoke(self, key_id: str) -> KeyInfo:
        """Revoke the key ``key_id``: it no longer authenticates. Revoking a revoked key
        changes nothing (its ``revoked_at`` stays the first revocation's). Raises
        :class:`~ranked.errors.KeyNotFoundError` for an unknown id. O(log n); atomic."""
        checked = check_key_id(key_id)
        revoked_us = _micros(datetime.now(UTC))
        with self._lock:
            conn = self._connection()
            with self._transaction(conn):
                conn.execute(
                    "UPDATE api_keys SET revoked_us = ? WHERE id = ? AND revoked_us IS NULL",
                    (revoked_us, checked),
                )
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM api_keys WHERE id = ?", (checked,)
                ).fetchall()
            self._forget()
        if not row:
            raise KeyNotFoundError(f"no key has id {checked!r}")
        return self._info(row[0])

    @contextmanager
    def _transaction(self, conn: sqlite3.Connection) -> Iterator[None]:
        """One write transaction: committed if the block returns, rolled back if it raises.
        SQLite's errors (but a constraint's, which the caller handles) become KeyStoreError."""
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as error:
            raise KeyStoreError(f"key store {str(self.path)!r}: {error}") from error

    # -- reading keys ------------------------------------------------------------------

    def list(self) -> builtins.list[KeyInfo]:
        """Every key, revoked ones included, oldest first. O(n)."""
        with self._lock:
            rows = self._read(
                self._connection(),
                f"SELECT {_COLUMNS} FROM api_keys ORDER BY created_us, id",
                (),
            )
        return [self._info(row) for row in rows]

    def authenticate(self, presented: str) -> KeyInfo | None:
        """The info of the valid key ``presented``, or ``None`` if it is malformed, unknown,
        or revoked.

        Cost: a format check and one SHA-256; then an answer from memory, or one lookup by
        id in the file whose stored hash is compared in constant time
        (:func:`hmac.compare_digest`). The caches are keyed by the hash (never by the key),
        bounded (:data:`MAX_CACHED_MATCHES`, :data:`MAX_CACHED_MISSES`), and dropped when
        the file changes (see the module docstring for how soon that is seen).
        """
        if not isinstance(presented, str):
            return None
        match = KEY_PATTERN.fullmatch(presented)
        if match is None:
            return None
        digest = _hash(presented)
        with self._lock:
            conn = self._connection()
            self._refresh(conn)
            info = self._matches.get(digest)
            if info is not None or digest in self._misses:
                return info
            rows = self._read(
                conn, f"SELECT {_COLUMNS} FROM api_keys WHERE id = ?", (match.group(1),)
            )
            if rows and compare_digest(str(rows[0][1]), digest):
                info = self._info(rows[0])
                if info.revoked_at is not None:
                    info = None
            if info is None:
                _remember(self._misses, digest, None, MAX_CACHED_MISSES)
            else:
                _remember(self._matches, digest, info, MAX_CACHED_MATCHES)
            return info

    def authenticate_bearer(self, token: bytes) -> KeyInfo | None:
        """:meth:`authenticate` of the token of an ``Authorization: Bearer`` header, as
        its raw bytes (decoded as Latin-1, surrounding whitespace stripped).

        A key answered from memory costs one SHA-256 of the bytes as they came and one
        lookup, without the lock while no look at the file is due (the caches change
        only under it, and a dict lookup sees them whole); anything else (padding, a
        first sight, a refusal) goes through :meth:`authenticate`, so the answers are
        the same."""
        if len(token) == _KEY_LENGTH:  # as issued: no padding to strip
            digest = hashlib.sha256(token).hexdigest()
            if self._conn is not None and time.monotonic() < self._next_refresh:
                info = self._matches.get(digest)
            else:
                with self._lock:
                    self._refresh(self._connection())
                    info = self._matches.get(digest)
            if info is not None:
                return info
        return self.authenticate(token.decode("latin-1").strip())

    def _refresh(self, conn: sqlite3.Connection) -> None:
        """Drop the caches if another connection committed since the last look."""
        if self._refresh_interval:
            now = time.monotonic()
            if now < self._next_refresh:
                return
            self._next_refresh = now + self._refresh_interval
        version = self._read_data_version(conn)
        if version != self._data_version:
            self._data_version = version
            self._forget()

    def _read_data_version(self, conn: sqlite3.Connection) -> int:
        # Changes when another connection commits; never for this connection's own commits.
        try:
            version: int = conn.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error as error:
            raise KeyStoreError(f"key store {str(self.path)!r}: {error}") from error
        return version

    def _read(self, conn: sqlite3.Connection, sql: str, args: _Row) -> _Rows:
        try:
            rows: _Rows = conn.execute(sql, args).fetchall()
        except sqlite3.Error as error:
            raise KeyStoreError(f"key store {str(self.path)!r}: {error}") from error
        return rows

    def _forget(self) -> None:
        self._matches.clear()
        self._misses.clear()

    def _info(self, row: _Row) -> KeyInfo:
        """A row as a KeyInfo; KeyStoreError if it is not one this store could write."""
        key_id, digest, scope, name, created_us, revoked_us = row
        if (
            not isinstance(key_id, str)
            or not _ID_PATTERN.fullmatch(key_id)
            or not isinstance(digest, str)
            or not _HASH_PATTERN.fullmatch(digest)
            or not isinstance(scope, str)
            or scope not in _LEVELS
            or not (name is None or isinstance(name, str))
            or not isinstance(created_us, int)
            or not (revoked_us is None or isinstance(revoked_us, int))
        ):
            raise KeyStoreError(f"key store {str(self.path)!r} has a malformed row {row[0]!r}")
        try:
            return KeyInfo(
                key_id,
                Scope(scope),
                name,
                _instant(created_us),
                None if revoked_us is None else _instant(revoked_us),
            )
        except OverflowError as error:
            raise KeyStoreError(
                f"key store {str(self.path)!r} has an instant out of range in row {key_id!r}"
            ) from error


def _remember(cache: dict[str, V], digest: str, value: V, limit: int) -> None:
    """Add to a bounded cache, dropping its oldest entry when it is full. O(1)."""
    if len(cache) >= limit:
        del cache[next(iter(cache))]
    cache[digest] = value
