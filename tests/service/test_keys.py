"""API keys: the format, the scopes, the store (hashes only), authentication and its caches,
and two stores on one directory (``ranked serve`` and the ``ranked keys`` commands)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from ranked import KeyArgumentError, KeyNotFoundError, KeyStoreError, RankedError
from ranked.service import keys
from ranked.service.keys import (
    KEY_PATTERN,
    MAX_CACHED_MATCHES,
    MAX_CACHED_MISSES,
    REFRESH_INTERVAL,
    SCHEMA_VERSION,
    KeyInfo,
    KeyStore,
    Scope,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[KeyStore]:
    with KeyStore(tmp_path / "data") as opened:
        yield opened


def _wrong_secret(key: str) -> str:
    """``key`` with another secret of the right form (same id)."""
    return key[:16] + ("A" if key[16] != "A" else "B") + key[17:]


def _random_key() -> str:
    return f"rk_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"


# -- scopes and the format ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("scope", "allowed"),
    [
        (Scope.ADMIN, {Scope.ADMIN, Scope.WRITE, Scope.READ}),
        (Scope.WRITE, {Scope.WRITE, Scope.READ}),
        (Scope.READ, {Scope.READ}),
    ],
)
def test_scope_allows_itself_and_the_scopes_below(scope: Scope, allowed: set[Scope]) -> None:
    assert {needed for needed in Scope if scope.allows(needed)} == allowed


def test_scopes_are_their_names() -> None:
    assert [str(scope) for scope in Scope] == ["admin", "write", "read"]


def test_the_documented_example_is_a_well_formed_key() -> None:
    doc = keys.__doc__
    assert doc is not None
    example = next(line.strip() for line in doc.splitlines() if line.startswith("    rk_3"))
    assert KEY_PATTERN.fullmatch(example)


def test_create_returns_the_key_once_and_its_info(store: KeyStore) -> None:
    before = datetime.now(UTC)
    info, key = store.create(Scope.WRITE, name="game server")
    after = datetime.now(UTC)
    match = KEY_PATTERN.fullmatch(key)
    assert match is not None and len(key) == 59
    assert match.group(1) == info.id
    assert info.scope is Scope.WRITE and info.name == "game server"
    assert info.created_at.tzinfo is UTC and before <= info.created_at <= after
    assert info.revoked_at is None
    assert store.list() == [info]


def test_create_takes_a_scope_name_as_str(store: KeyStore) -> None:
    info, _ = store.create("read")
    assert info.scope is Scope.READ and info.name is None


def test_keys_and_ids_are_distinct(store: KeyStore) -> None:
    made = [store.create(Scope.READ) for _ in range(50)]
    assert len({info.id for info, _ in made}) == 50
    assert len({key for _, key in made}) == 50


@pytest.mark.parametrize("scope", ["owner", "ADMIN", "", None, 1])
def test_a_bad_scope_is_refused_and_changes_nothing(store: KeyStore, scope: object) -> None:
    with pytest.raises(KeyArgumentError, match="scope"):
        store.create(cast(Any, scope))
    assert store.list() == []


@pytest.mark.parametrize("name", ["", "a\nb", "tab\there", "x" * 201, 7, b"bytes"])
def test_a_bad_name_is_refused_and_changes_nothing(store: KeyStore, name: object) -> None:
    with pytest.raises(KeyArgumentError, match="name"):
        store.create(Scope.READ, name=cast(Any, name))
    assert store.list() == []


def test_names_may_be_any_printable_text(store: KeyStore) -> None:
    info, _ = store.create(Scope.READ, name="Zoë's bot 🎮 " + "x" * 186)
    assert store.list()[0].name == info.name


# -- list and revoke ---------------------------------------------------------------------


def test_list_is_oldest_first_and_includes_revoked_keys(store: KeyStore) -> None:
    first, _ = store.create(Scope.ADMIN, "first")
    second, _ = store.create(Scope.READ, "second")
    revoked = store.revoke(first.id)
    assert store.list() == [revoked, second]
    assert revoked.revoked_at is not None and revoked.revoked_at >= first.created_at


def test_revoking_twice_keeps_the_first_instant(store: KeyStore) -> None:
    info, _ = store.create(Scope.WRITE)
    once = store.revoke(info.id)
    time.sleep(0.002)
    assert store.revoke(info.id) == once
    assert store.list() == [once]


def test_revoking_an_unknown_id_raises_and_changes_nothing(store: KeyStore) -> None:
    info, key = store.create(Scope.WRITE)
    with pytest.raises(KeyNotFoundError, match="000000000000"):
        store.revoke("000000000000")
    assert store.list() == [info]
    assert store.authenticate(key) == info


@pytest.mark.parametrize("key_id", ["", "ABCDEF012345", "0123456789a", "0123456789abc", 12])
def test_revoking_a_malformed_id_raises(store: KeyStore, key_id: object) -> None:
    info, _ = store.create(Scope.WRITE)
    with pytest.raises(KeyArgumentError, match="12 lowercase hex"):
        store.revoke(cast(Any, key_id))
    assert store.list() == [info]


def test_revoking_a_whole_key_is_refused(store: KeyStore) -> None:
    """The id is the public part; a whole key is not an id, and the error names the id
    without repeating the secret."""
    info, key = store.create(Scope.WRITE)
    with pytest.raises(KeyArgumentError, match=f"its id is {info.id}") as raised:
        store.revoke(key)
    assert key.split("_", 2)[2] not in str(raised.value)
    assert store.authenticate(key) == info


def test_errors_belong_to_the_hierarchy() -> None:
    assert issubclass(KeyArgumentError, RankedError) and issubclass(KeyArgumentError, ValueError)
    assert issubclass(KeyNotFoundError, RankedError) and issubclass(KeyNotFoundError, LookupError)
    assert issubclass(KeyStoreError, RankedError)


# -- authenticate --------------------------------------------------------------------------


def test_authenticate_answers_the_keys_info(store: KeyStore) -> None:
    admin, admin_key = store.create(Scope.ADMIN)
    reader, reader_key = store.create(Scope.READ)
    for _ in range(2):  # from the file, then from memory
        assert store.authenticate(admin_key) == admin
        assert store.authenticate(reader_key) == reader


@pytest.mark.parametrize(
    "presented",
    [
        "",
        "rk_",
        "Bearer rk_0123456789ab_" + "a" * 43,
        "rk_0123456789ab_" + "a" * 42,
        "rk_0123456789ab_" + "a" * 44,
        "rk_0123456789AB_" + "a" * 43,
        "rk-0123456789ab_" + "a" * 43,
        "rk_0123456789ab-" + "a" * 43,
        "RK_0123456789ab_" + "a" * 43,
        "rk_0123456789ab_" + "a" * 42 + "=",
        "rk_0123456789ab_" + "a" * 42 + "\n",
        " rk_0123456789ab_" + "a" * 43,
        "rk_0123456789ab_" + "é" * 43,
    ],
)
def test_malformed_keys_are_refused(store: KeyStore, presented: str) -> None:
    store.create(Scope.ADMIN)
    assert store.authenticate(presented) is None


@pytest.mark.parametrize("presented", [None, b"rk_0123456789ab_" + b"a" * 43, 59])
def test_a_key_that_is_not_a_str_is_refused(store: KeyStore, presented: object) -> None:
    assert store.authenticate(cast(Any, presented)) is None


def test_a_malformed_variant_of_a_real_key_is_refused(store: KeyStore) -> None:
    _, key = store.create(Scope.ADMIN)
    for variant in (key + "x", key[:-1], key.upper(), f" {key}", f"{key}\n", "Bearer " + key):
        assert store.authenticate(variant) is None


def test_unknown_keys_and_wrong_secrets_are_refused(store: KeyStore) -> None:
    info, key = store.create(Scope.ADMIN)
    for _ in range(2):  # from the file, then from memory
        assert store.authenticate(_wrong_secret(key)) is None
        assert store.authenticate(_random_key()) is None
        assert store.authenticate(key) == info


def test_a_bearer_token_authenticates_as_its_key(store: KeyStore) -> None:
    """The token of an ``Authorization: Bearer`` header, as its raw bytes: the same
    answers as :meth:`KeyStore.authenticate` of the decoded, stripped text."""
    info, key = store.create(Scope.READ)
    for _ in range(2):  # from the file, then from memory
        assert store.authenticate_bearer(key.encode()) == info
        assert store.authenticate_bearer(f"  {key}\t".encode()) == info
    for refused in (
        b"",
        key.encode() + b"x",
        key.upper().encode(),
        _wrong_secret(key).encode(),
        _random_key().encode(),
        b"\xff" * 59,
        b"rk_" + b"!" * 56,  # the length of a key, not its form
        key.encode()[:-1] + b"\xe9",
    ):
        assert store.authenticate_bearer(refused) is None
    store.revoke(info.id)
    assert store.authenticate_bearer(key.encode()) is None


def test_a_revoked_key_stops_authenticating(store: KeyStore) -> None:
    info, key = store.create(Scope.WRITE)
    other, other_key = store.create(Scope.WRITE)
    assert store.authenticate(key) == info  # now remembered as valid
    store.revoke(info.id)
    assert store.authenticate(key) is None
    assert store.authenticate(other_key) == other


def test_a_key_revoked_before_it_is_ever_presented_is_refused(tmp_path: Path) -> None:
    with KeyStore(tmp_path) as store:
        info, key = store.create(Scope.WRITE)
        store.revoke(info.id)
    with KeyStore(tmp_path) as reopened:
        assert reopened.authenticate(key) is None


def test_secrets_are_compared_in_constant_time(
    store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stored hash is checked with hmac.compare_digest (recorded, then run as is)."""
    compared: list[tuple[str, str]] = []
    real = hmac.compare_digest

    def recording(a: str, b: str) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(keys, "compare_digest", recording)
    info, key = store.create(Scope.READ)
    wrong = _wrong_secret(key)
    assert store.authenticate(wrong) is None
    assert store.authenticate(key) == info
    stored = hashlib.sha256(key.encode()).hexdigest()
    assert compared == [(stored, hashlib.sha256(wrong.encode()).hexdigest()), (stored, stored)]


def test_the_caches_are_bounded(store: KeyStore) -> None:
    """A flood of random well-formed keys neither grows memory without limit nor pushes
    the valid keys out of memory (white box: the caches' sizes)."""
    info, key = store.create(Scope.READ)
    assert store.authenticate(key) == info
    for _ in range(MAX_CACHED_MISSES + 100):
        assert store.authenticate(_random_key()) is None
    assert len(store._misses) == MAX_CACHED_MISSES
    assert list(store._matches.values()) == [info]
    assert store.authenticate(key) == info
    assert MAX_CACHED_MATCHES >= MAX_CACHED_MISSES


def test_many_valid_keys_keep_the_cache_bounded(store: KeyStore) -> None:
    made = [store.create(Scope.READ) for _ in range(MAX_CACHED_MATCHES + 10)]
    for info, key in made:
        assert store.authenticate(key) == info
    assert len(store._matches) == MAX_CACHED_MATCHES
    assert store.authenticate(made[0][1]) == made[0][0]  # forgotten, so read again


def test_threads_share_one_store(store: KeyStore) -> None:
    valid = [store.create(Scope.WRITE) for _ in range(8)]
    failures: list[str] = []

    def work(index: int) -> None:
        for round_ in range(200):
            info, key = valid[(index + round_) % len(valid)]
            if store.authenticate(key) != info:
                failures.append(f"valid key {info.id} refused")
            if store.authenticate(_random_key()) is not None:
                failures.append("random key accepted")
            if round_ % 50 == 0:
                made, made_key = store.create(Scope.READ)
                if store.authenticate(made_key) != made:
                    failures.append(f"new key {made.id} refused")

    threads = [threading.Thread(target=work, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(store.list()) == 8 + 4 * 4


# -- two stores on one directory (the service and the CLI) ---------------------------------


def test_two_stores_see_each_others_creates_at_once(tmp_path: Path) -> None:
    with KeyStore(tmp_path) as service, KeyStore(tmp_path) as cli:
        assert service.list() == []
        info, key = cli.create(Scope.WRITE, "from the cli")
        assert service.authenticate(key) == info
        assert service.list() == [info]
        mine, mine_key = service.create(Scope.READ)
        assert cli.authenticate(mine_key) == mine
        assert cli.list() == [info, mine]


def test_a_revocation_by_another_store_counts_within_the_refresh_interval(
    tmp_path: Path,
) -> None:
    with KeyStore(tmp_path) as service, KeyStore(tmp_path) as cli:
        info, key = cli.create(Scope.WRITE)
        other, other_key = cli.create(Scope.WRITE)
        assert service.authenticate(key) == info  # remembered as valid
        assert service.authenticate(_wrong_secret(other_key)) is None  # remembered as refused
        revoked_at = time.monotonic()
        cli.revoke(info.id)
        time.sleep(max(0.0, REFRESH_INTERVAL - (time.monotonic() - revoked_at)))
        assert service.authenticate(key) is None
        assert service.authenticate(other_key) == other
        assert service.list()[0].revoked_at is not None


def test_with_no_refresh_interval_a_revocation_elsewhere_counts_at_once(tmp_path: Path) -> None:
    with KeyStore(tmp_path, refresh_interval=0) as service, KeyStore(tmp_path) as cli:
        info, key = cli.create(Scope.ADMIN)
        assert service.authenticate(key) == info
        cli.revoke(info.id)
        assert service.authenticate(key) is None


def test_a_revocation_elsewhere_is_not_seen_before_the_interval_is_up(tmp_path: Path) -> None:
    """The interval is what saves the SQLite call: within it, memory answers."""
    with KeyStore(tmp_path, refresh_interval=3600) as service, KeyStore(tmp_path) as cli:
        info, key = cli.create(Scope.ADMIN)
        assert service.authenticate(key) == info
        cli.revoke(info.id)
        assert service.authenticate(key) == info
        service.revoke(info.id)  # through this store: counts at once
        assert service.authenticate(key) is None


@pytest.mark.parametrize("interval", [-1.0, float("nan")])
def test_a_negative_refresh_interval_is_refused(tmp_path: Path, interval: float) -> None:
    with pytest.raises(KeyArgumentError, match="refresh_interval"):
        KeyStore(tmp_path, refresh_interval=interval)


# -- the file ------------------------------------------------------------------------------


def test_only_hashes_are_on_disk(tmp_path: Path) -> None:
    with KeyStore(tmp_path) as store:
        made = [store.create(scope) for scope in Scope for _ in range(3)]
        store.revoke(made[0][0].id)
        for _, key in made:
            store.authenticate(key)
        on_disk = b"".join(path.read_bytes() for path in sorted(tmp_path.iterdir()))
        for info, key in made:
            secret = key.split("_", 2)[2]
            assert secret.encode() not in on_disk
            assert key.encode() not in on_disk
            assert info.id.encode() in on_disk
            assert hashlib.sha256(key.encode()).hexdigest().encode() in on_disk
    assert sorted(path.name for path in tmp_path.iterdir()) == ["keys.db"]


def test_the_file_is_private_and_in_wal_mode(tmp_path: Path) -> None:
    with KeyStore(tmp_path / "new" / "dir") as store:
        store.create(Scope.READ)
        path = tmp_path / "new" / "dir" / "keys.db"
        assert store.path == path
        assert path.stat().st_mode & 0o777 == 0o600
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("SELECT version FROM ranked_keys_version").fetchall() == [
                (SCHEMA_VERSION,)
            ]
        conn.close()


def test_keys_survive_reopening(tmp_path: Path) -> None:
    with KeyStore(tmp_path) as store:
        info, key = store.create(Scope.ADMIN, "kept")
    with KeyStore(tmp_path) as reopened:
        assert reopened.list() == [info]
        assert reopened.authenticate(key) == info


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    (tmp_path / "keys.db").write_bytes(b"not a database, just some text\n" * 100)
    with pytest.raises(KeyStoreError, match="cannot be opened"):
        KeyStore(tmp_path)


def test_another_sqlite_database_is_refused(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "keys.db") as conn:
        conn.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY)")
    conn.close()
    with pytest.raises(KeyStoreError, match="not a ranked key store"):
        KeyStore(tmp_path)


def test_a_newer_schema_version_is_refused(tmp_path: Path) -> None:
    KeyStore(tmp_path).close()
    with sqlite3.connect(tmp_path / "keys.db") as conn:
        conn.execute("UPDATE ranked_keys_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.close()
    with pytest.raises(KeyStoreError, match=f"schema version {SCHEMA_VERSION + 1}"):
        KeyStore(tmp_path)


def test_a_malformed_row_is_refused(tmp_path: Path) -> None:
    KeyStore(tmp_path).close()
    with sqlite3.connect(tmp_path / "keys.db") as conn:
        conn.execute(
            "INSERT INTO api_keys VALUES ('0123456789ab', ?, 'owner', NULL, 0, NULL)",
            ("0" * 64,),
        )
    conn.close()
    with KeyStore(tmp_path) as store, pytest.raises(KeyStoreError, match="malformed row"):
        store.list()


def test_a_data_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(KeyStoreError, match="cannot be opened"):
        KeyStore(tmp_path / "file")


def test_a_closed_store_refuses_every_call(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    info, key = store.create(Scope.READ)
    store.close()
    store.close()  # idempotent
    for call in (
        lambda: store.create(Scope.READ),
        store.list,
        lambda: store.revoke(info.id),
        lambda: store.authenticate(key),
    ):
        with pytest.raises(KeyStoreError, match="closed"):
            call()


def test_key_info_is_frozen(store: KeyStore) -> None:
    info, _ = store.create(Scope.READ)
    assert isinstance(info, KeyInfo)
    with pytest.raises(AttributeError):
        info.scope = Scope.ADMIN  # type: ignore[misc]
