"""``ranked keys create | list | revoke``: output, exit status, and what they leave on disk.

Run through click's CliRunner (stdout and stderr apart), and once as a real process
beside an open store, as ``ranked serve`` would hold it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import ranked
from ranked.cli import main
from ranked.service.keys import KEY_PATTERN, KeyInfo, KeyStore, Scope

SRC = Path(ranked.__file__).resolve().parent.parent


def _run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["keys", *args], env=env)


def _create(data_dir: Path, *args: str) -> tuple[KeyInfo, str]:
    done = _run("create", "--data-dir", str(data_dir), *args)
    assert done.exit_code == 0, done.output
    key = done.stdout.splitlines()[-1]
    with KeyStore(data_dir) as store:
        info = store.authenticate(key)
    assert info is not None
    return info, key


def _one_line_error(done: Result, code: int, text: str) -> None:
    assert done.exit_code == code, done.output
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: ") and text in line, line


# -- help ----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [[], ["create"], ["list"], ["revoke"]])
def test_every_command_has_help(command: list[str]) -> None:
    done = _run(*command, "--help")
    assert done.exit_code == 0
    assert done.stdout.startswith("Usage:")
    assert len(done.stdout.splitlines()) > 4


def test_the_group_is_registered_on_the_ranked_command() -> None:
    done = CliRunner().invoke(main, ["--help"])
    assert done.exit_code == 0 and "keys" in done.stdout


# -- create --------------------------------------------------------------------------------


def test_create_prints_the_key_alone_on_stdout(tmp_path: Path) -> None:
    done = _run("create", "--scope", "write", "--name", "game server", "--data-dir", str(tmp_path))
    assert done.exit_code == 0, done.output
    key = done.stdout.removesuffix("\n")
    assert KEY_PATTERN.fullmatch(key)
    with KeyStore(tmp_path) as store:
        info = store.authenticate(key)
    assert info is not None and info.scope is Scope.WRITE and info.name == "game server"
    assert info.id in done.stderr and "write" in done.stderr and key not in done.stderr


@pytest.mark.parametrize("scope", list(Scope))
def test_create_makes_each_scope(tmp_path: Path, scope: Scope) -> None:
    info, _ = _create(tmp_path, "--scope", str(scope))
    assert info.scope is scope and info.name is None


def test_create_takes_the_data_dir_from_the_environment(tmp_path: Path) -> None:
    done = _run("create", "--scope", "read", env={"RANKED_DATA_DIR": str(tmp_path / "env")})
    assert done.exit_code == 0, done.output
    with KeyStore(tmp_path / "env") as store:
        assert store.authenticate(done.stdout.splitlines()[-1]) is not None


def test_an_unknown_scope_is_refused_by_click(tmp_path: Path) -> None:
    done = _run("create", "--scope", "owner", "--data-dir", str(tmp_path))
    assert done.exit_code == 2
    assert "'owner' is not one of 'admin', 'write', 'read'" in done.stderr
    assert done.stdout == "" and list(tmp_path.iterdir()) == []


def test_a_missing_scope_is_refused(tmp_path: Path) -> None:
    done = _run("create", "--data-dir", str(tmp_path))
    assert done.exit_code == 2 and "--scope" in done.stderr


def test_a_bad_name_is_one_line_with_status_2_and_creates_nothing(tmp_path: Path) -> None:
    _create(tmp_path, "--scope", "read")
    done = _run("create", "--scope", "read", "--name", "a\nb", "--data-dir", str(tmp_path))
    _one_line_error(done, 2, "a key's name must be")
    with KeyStore(tmp_path) as store:
        assert len(store.list()) == 1


def test_a_file_that_is_not_a_key_store_is_status_1(tmp_path: Path) -> None:
    (tmp_path / "keys.db").write_bytes(b"not a database\n" * 100)
    done = _run("create", "--scope", "read", "--data-dir", str(tmp_path))
    _one_line_error(done, 1, "cannot be opened")


# -- list ----------------------------------------------------------------------------------


def test_list_shows_a_table_without_secrets(tmp_path: Path) -> None:
    first, first_key = _create(tmp_path, "--scope", "admin", "--name", "ops [bold]team[/]")
    second, second_key = _create(tmp_path, "--scope", "read")
    assert _run("revoke", first.id, "--data-dir", str(tmp_path)).exit_code == 0
    done = _run("list", "--data-dir", str(tmp_path), env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    header = next(line for line in lines if "scope" in line)
    for column in ("id", "scope", "name", "created", "revoked"):
        assert column in header
    first_row = next(line for line in lines if first.id in line)
    second_row = next(line for line in lines if second.id in line)
    assert lines.index(first_row) < lines.index(second_row)
    assert "admin" in first_row and "ops [bold]team[/]" in first_row
    assert first.created_at.strftime("%Y-%m-%d %H:%M:%S") in first_row
    assert first_row.count(first.created_at.strftime("%Y-%m-%d")) == 2  # created, revoked
    assert "read" in second_row and second_row.count("Z") == 1  # not revoked
    for key in (first_key, second_key):
        assert key.split("_", 2)[2] not in done.output


def test_list_json_lines(tmp_path: Path) -> None:
    first, _ = _create(tmp_path, "--scope", "admin", "--name", "Zoë")
    second, _ = _create(tmp_path, "--scope", "write")
    _run("revoke", second.id, "--data-dir", str(tmp_path))
    done = _run("list", "--json", "--data-dir", str(tmp_path))
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    with KeyStore(tmp_path) as store:
        revoked_at = store.list()[1].revoked_at
    assert revoked_at is not None
    assert rows == [
        {
            "id": first.id,
            "scope": "admin",
            "name": "Zoë",
            "created_at": first.created_at.isoformat(),
            "revoked_at": None,
        },
        {
            "id": second.id,
            "scope": "write",
            "name": None,
            "created_at": second.created_at.isoformat(),
            "revoked_at": revoked_at.isoformat(),
        },
    ]


def test_list_of_a_directory_without_keys_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    done = _run("list", "--data-dir", str(missing))
    assert done.exit_code == 0 and done.stdout == f"No keys in {missing}.\n"
    done = _run("list", "--json", "--data-dir", str(missing))
    assert done.exit_code == 0 and done.stdout == ""
    assert not missing.exists()


# -- revoke --------------------------------------------------------------------------------


def test_revoke_stops_the_key(tmp_path: Path) -> None:
    info, key = _create(tmp_path, "--scope", "write")
    done = _run("revoke", info.id, "--data-dir", str(tmp_path))
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(f"Revoked write key {info.id} at ")
    with KeyStore(tmp_path) as store:
        assert store.authenticate(key) is None
        first = store.list()[0].revoked_at
    again = _run("revoke", info.id, "--data-dir", str(tmp_path))
    assert again.exit_code == 0
    with KeyStore(tmp_path) as store:
        assert store.list()[0].revoked_at == first


def test_revoke_of_an_unknown_id_is_status_1_and_changes_nothing(tmp_path: Path) -> None:
    info, key = _create(tmp_path, "--scope", "write")
    done = _run("revoke", "000000000000", "--data-dir", str(tmp_path))
    _one_line_error(done, 1, "no key has id '000000000000'")
    with KeyStore(tmp_path) as store:
        assert store.authenticate(key) == info


def test_revoke_in_a_directory_without_keys_is_status_1_and_creates_nothing(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "missing"
    done = _run("revoke", "000000000000", "--data-dir", str(missing))
    assert done.exit_code == 1 and "no key has id '000000000000'" in done.stderr
    assert not missing.exists()


@pytest.mark.parametrize("key_id", ["nothex", "ABCDEF012345", "0123456789abc", ""])
def test_revoke_of_a_malformed_id_is_one_line_with_status_2(tmp_path: Path, key_id: str) -> None:
    _create(tmp_path, "--scope", "read")
    done = _run("revoke", key_id, "--data-dir", str(tmp_path))
    _one_line_error(done, 2, "a key id is 12 lowercase hex digits")


def test_revoke_of_a_whole_key_names_its_id_but_not_its_secret(tmp_path: Path) -> None:
    info, key = _create(tmp_path, "--scope", "read")
    done = _run("revoke", key, "--data-dir", str(tmp_path))
    _one_line_error(done, 2, f"that is a whole key: its id is {info.id}")
    assert key.split("_", 2)[2] not in done.output


# -- a real process beside a running service's store -----------------------------------------


def test_a_real_create_prints_the_key_last_and_a_running_store_accepts_it(
    tmp_path: Path,
) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    options = ["--scope", "write", "--name", "cli", "--data-dir", str(tmp_path)]
    with KeyStore(tmp_path) as service:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from ranked.cli import main; main()",
                "keys",
                "create",
                *options,
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        key = done.stdout.splitlines()[-1]
        assert done.stdout == key + "\n"
        info = service.authenticate(key)
        assert info is not None and info.scope is Scope.WRITE and info.name == "cli"
        assert info.id in done.stderr
