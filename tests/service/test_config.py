"""The service's settings: flags over RANKED_* variables over the TOML file over the
defaults; a bad value is a typed error naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranked.errors import ServiceConfigError
from ranked.service.config import ServiceConfig, load


def test_defaults_need_nothing(tmp_path: Path) -> None:
    config = load({"data_dir": tmp_path}, environ={})
    assert config == ServiceConfig(data_dir=tmp_path)
    assert config.journal_url == (
        f"sqlite:///{tmp_path.resolve() / 'journal.db'}?durability=always&max_delay_ms=10"
    )


def test_flags_over_environment_over_file(tmp_path: Path) -> None:
    (tmp_path / "ranked.toml").write_text(
        'port = 9001\nbackend = "redis://file:1/0"\nlog_level = "debug"\n'
    )
    environ = {"RANKED_PORT": "9002", "RANKED_BACKEND": "redis://env:1/0"}
    config = load({"data_dir": tmp_path, "port": 9003}, environ=environ)
    assert config.port == 9003  # the flag
    assert config.backend == "redis://env:1/0"  # the environment over the file
    assert config.log_level == "debug"  # the file over the default
    named = tmp_path / "other.toml"
    named.write_text('durability = "batch"\nmax_delay_ms = 50\n')
    config = load({"data_dir": tmp_path, "config": named}, environ={})
    assert (config.durability, config.max_delay_ms, config.port) == ("batch", 50, 8080)
    assert config.journal_url.endswith("?durability=batch&max_delay_ms=50")
    config = load({"data_dir": tmp_path}, environ={"RANKED_CONFIG": str(named)})
    assert config.durability == "batch"


@pytest.mark.parametrize(
    ("flags", "environ", "toml", "match"),
    [
        ({"port": 70000}, {}, None, "port"),
        ({}, {"RANKED_PORT": "eighty"}, None, "RANKED_PORT"),
        ({}, {"RANKED_DURABILITY": "sometimes"}, None, "durability"),
        ({}, {}, "colour = 'red'\n", "unknown setting 'colour'"),
        ({}, {}, "port = 'x'\n", "port must be a int"),
        ({}, {}, "port = \n", "not TOML"),
        ({"max_delay_ms": 0}, {}, None, "max_delay_ms"),
        ({"live_port": 8080}, {}, None, "live_port must differ from port"),
        ({}, {"RANKED_LIVE_PORT": "70000"}, None, "live_port must be in"),
    ],
)
def test_a_bad_setting_is_named(
    tmp_path: Path, flags: dict[str, object], environ: dict[str, str], toml: str | None, match: str
) -> None:
    if toml is not None:
        (tmp_path / "ranked.toml").write_text(toml)
    with pytest.raises(ServiceConfigError, match=match):
        load({"data_dir": tmp_path, **flags}, environ=environ)
