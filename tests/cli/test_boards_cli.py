"""``ranked boards list|show|create``, ``ranked rebuild``, ``ranked snapshot``, and how
every service command reports a refusal, a bad key and a missing service: against a
real ``ranked serve``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ranked.cli import main
from ranked.service.keys import KeyStore, Scope
from servers import free_port

from .conftest import SRC, RunningService, create, entries, ranked_serve

CLIENT_COMMANDS = [
    ["boards"],
    ["boards", "list"],
    ["boards", "show"],
    ["boards", "create"],
    ["import"],
    ["export"],
    ["rebuild"],
    ["snapshot"],
]


def _info(service: RunningService, board: str) -> dict[str, object]:
    with service.api() as api:
        answer = api.get(f"/v1/boards/{board}")
        assert answer.status_code == 200, answer.text
        found: dict[str, object] = answer.json()
        return found


# -- create, list, show -----------------------------------------------------------------


def test_create_gives_the_board_the_settings_asked_for(service: RunningService, board: str) -> None:
    result = service.cli(
        "boards",
        "create",
        board,
        "--operator",
        "incr",
        "--order",
        "asc",
        "--window",
        "all",
        "--window",
        "daily",
        "--rank-style",
        "dense",
        "--keep",
        "50",
        "--keep-buffer",
        "5",
        "--max-page-size",
        "200",
        "--public-reads",
        "--batch-incr-ms",
        "100",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == f"board {board} created (0 members, window all)\n"
    assert _info(service, board)["settings"] == {
        "order": "asc",
        "operator": "incr",
        "tie_break": "member",
        "windows": ["all", "daily"],
        "seasons": [],
        "rank_style": "dense",
        "keep": 50,
        "keep_buffer": 5,
        "max_page_size": 200,
        "public_reads": True,
        "batch_incr_ms": 100,
    }


def test_create_with_defaults_and_a_season(service: RunningService, board: str) -> None:
    result = service.cli(
        "boards",
        "create",
        board,
        "--season",
        "s1",
        "2020-01-01T00:00:00Z",
        "2100-01-01T00:00:00+00:00",
    )
    assert result.exit_code == 0, result.output
    settings = _info(service, board)["settings"]
    assert isinstance(settings, dict)
    assert settings["windows"] == ["all"]
    assert settings["seasons"] == [
        {"name": "s1", "start": "2020-01-01T00:00:00Z", "end": "2100-01-01T00:00:00Z"}
    ]
    assert settings["operator"] == "best" and settings["order"] == "desc"


def test_a_season_needs_a_time_zone(service: RunningService, board: str) -> None:
    result = service.cli(
        "boards", "create", board, "--season", "s1", "2020-01-01", "2021-01-01T00:00:00Z"
    )
    assert result.exit_code == 2
    assert "needs a time zone" in result.stderr
    _assert_no_board(service, board)


def test_create_again_with_the_same_settings_changes_nothing(
    service: RunningService, board: str
) -> None:
    assert service.cli("boards", "create", board, "--keep", "10").exit_code == 0
    result = service.cli("boards", "create", board, "--keep", "10")
    assert result.exit_code == 0
    assert result.stdout == f"board {board} exists with these settings\n"


def test_create_refuses_to_change_an_existing_board_without_update(
    service: RunningService, board: str
) -> None:
    assert service.cli("boards", "create", board, "--keep", "10").exit_code == 0
    before = _info(service, board)
    result = service.cli("boards", "create", board, "--keep", "20", "--public-reads")
    assert result.exit_code == 1
    assert result.stderr == (
        f"ranked: board {board} exists with other settings (keep 10 -> 20, public_reads"
        " False -> True); give --update to change them\n"
    )
    assert _info(service, board) == before


def test_update_changes_what_may_change(service: RunningService, board: str) -> None:
    assert service.cli("boards", "create", board, "--keep", "10").exit_code == 0
    result = service.cli("boards", "create", board, "--keep", "20", "--update")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"board {board} updated (0 members, window all)\n"
    settings = _info(service, board)["settings"]
    assert isinstance(settings, dict) and settings["keep"] == 20


def test_update_of_a_fixed_setting_is_the_services_409(service: RunningService, board: str) -> None:
    assert service.cli("boards", "create", board).exit_code == 0
    result = service.cli("boards", "create", board, "--order", "asc", "--update")
    assert result.exit_code == 1
    assert result.stderr == (
        f"ranked: 409 order of board {board!r} cannot change once it exists (field: order)\n"
    )
    settings = _info(service, board)["settings"]
    assert isinstance(settings, dict) and settings["order"] == "desc"


def test_a_name_the_service_refuses_is_its_422(service: RunningService) -> None:
    result = service.cli("boards", "create", "a b")
    assert result.exit_code == 1
    assert result.stderr == (
        "ranked: 422 a board name is 1 to 64 characters: letters, digits, _ . : - (field: board)\n"
    )


def test_list_shows_every_board_in_a_table(service: RunningService, board: str) -> None:
    create(service, board, operator="set", order="asc", windows=["all"])
    with service.api() as api:
        api.post(f"/v1/boards/{board}/scores", json={"member": "m", "score": 1})
    result = service.cli("boards", "list")
    assert result.exit_code == 0
    header = next(line for line in result.stdout.splitlines() if "board" in line)
    assert header.split()[1::2] == ["board", "members", "window", "operator", "order"]
    row = next(line for line in result.stdout.splitlines() if f" {board} " in line)
    assert row.split()[1::2] == [board, "1", "all", "set", "asc"]


def test_list_as_json_is_the_apis_answer(service: RunningService, board: str) -> None:
    create(service, board)
    result = service.cli("boards", "list", "--json")
    assert result.exit_code == 0
    with service.api() as api:
        assert json.loads(result.stdout) == api.get("/v1/boards").json()


def test_list_of_a_service_without_boards(tmp_path: Path) -> None:
    with ranked_serve(tmp_path / "empty") as empty:
        result = empty.cli("boards", "list")
    assert result.exit_code == 0
    assert result.stdout == "no boards (create one with `ranked boards create`)\n"


def test_show_prints_the_boards_settings_as_json(service: RunningService, board: str) -> None:
    create(service, board, windows=["all", "weekly"], keep=3)
    result = service.cli("boards", "show", board)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == _info(service, board)


def test_show_of_a_missing_board_is_the_404_line(service: RunningService) -> None:
    result = service.cli("boards", "show", "no-such-board")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "ranked: 404 there is no board 'no-such-board' (field: board)\n"


def test_board_names_with_punctuation(service: RunningService) -> None:
    name = "season:2026.q1_eu-west"
    assert service.cli("boards", "create", name).exit_code == 0
    result = service.cli("boards", "show", name)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["board"] == name


# -- rebuild and snapshot -----------------------------------------------------------------


def test_snapshot_and_rebuild_print_what_the_service_did(
    service: RunningService, board: str
) -> None:
    create(service, board)
    with service.api() as api:
        for i in range(5):
            api.post(f"/v1/boards/{board}/scores", json={"member": f"m{i}", "score": i})
    before = entries(service, board)
    result = service.cli("snapshot", board)
    assert result.exit_code == 0
    found = re.fullmatch(
        f"board {board}: snapshot written, covering its events to number ([0-9]+)\n",
        result.stdout,
    )
    assert found is not None, result.stdout
    with service.api() as api:
        api.post(f"/v1/boards/{board}/scores", json={"member": "m9", "score": 9})
    again = service.cli("snapshot", board).stdout
    assert again.endswith(f" to number {int(found.group(1)) + 1}\n")
    before = entries(service, board)
    result = service.cli("rebuild", board)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"board {board} rebuilt from its journal: ")
    assert result.stdout.endswith(" events replayed\n")
    assert entries(service, board) == before
    result = service.cli("rebuild", board, "--window", "all")
    assert result.stdout == f"board {board} window all rebuilt from its journal: 6 members\n"
    assert entries(service, board) == before


@pytest.mark.parametrize("command", ["rebuild", "snapshot"])
def test_rebuild_and_snapshot_need_an_admin_key(
    service: RunningService, board: str, command: str
) -> None:
    create(service, board)
    with KeyStore(service.data_dir) as keys:
        write_key = keys.create(Scope.WRITE)[1]
    result = service.cli(command, board, key=write_key)
    assert result.exit_code == 1
    assert result.stderr == (
        "ranked: 403 this operation needs a key of scope admin (this one is write)\n"
    )


# -- how refusals read ------------------------------------------------------------------


def test_a_wrong_key_is_the_401_line(service: RunningService) -> None:
    result = service.cli("boards", "list", key="rk_000000000000_" + "A" * 43)
    assert result.exit_code == 1
    assert result.stderr == "ranked: 401 the key is unknown or revoked\n"


def test_no_key_says_how_to_give_one(service: RunningService) -> None:
    result = service.cli("boards", "list", key="")
    assert result.exit_code == 1
    assert result.stderr == (
        "ranked: 401 this operation needs a key (Authorization: Bearer <key>);"
        " give one with --key or RANKED_KEY\n"
    )


def test_flags_override_the_environment(service: RunningService) -> None:
    result = service.cli("boards", "list", "--key", service.admin_key, key="rk_wrong")
    assert result.exit_code == 0, result.output


def test_an_unreachable_service_is_one_clear_line() -> None:
    """The installed command, in its own process: exit status 1 and one line."""
    url = f"http://127.0.0.1:{free_port()}"
    done = subprocess.run(
        [sys.executable, "-c", "from ranked.cli import main; main()", "boards", "list"],
        env={"PYTHONPATH": str(SRC), "RANKED_URL": url, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == f"ranked: no service at {url} (start it with `ranked serve`)\n"


@pytest.mark.parametrize(
    "args",
    [
        ["boards", "show", "x"],
        ["boards", "create", "x"],
        ["export", "--board", "x"],
        ["rebuild", "x"],
        ["snapshot", "x"],
    ],
)
def test_every_command_says_when_there_is_no_service(args: list[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = RunningService(url, "", SRC).cli(*args)
    assert result.exit_code == 1
    assert result.stderr == f"ranked: no service at {url} (start it with `ranked serve`)\n"


def test_a_url_that_is_not_http_is_a_usage_error(service: RunningService) -> None:
    result = service.cli("boards", "list", "--url", "localhost:8080")
    assert result.exit_code == 2
    assert "is not an http:// or https:// URL" in result.stderr


@pytest.mark.parametrize("path", CLIENT_COMMANDS, ids=" ".join)
def test_every_command_has_help_with_an_example(path: list[str]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0
    assert "Example: ranked " in result.stdout


def _assert_no_board(service: RunningService, board: str) -> None:
    with service.api() as api:
        assert api.get(f"/v1/boards/{board}").status_code == 404
