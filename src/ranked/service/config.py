"""The service's configuration: every setting once, with its default, its flag, its
environment variable and its TOML key. Precedence: a flag given on the command line, then
``RANKED_<NAME>``, then the TOML file (``--config``, ``RANKED_CONFIG``, or
``<data dir>/ranked.toml`` when it exists), then the default. docs/service.md shows the
table :func:`settings_table` prints."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Final, Literal

from ..errors import ServiceConfigError as ConfigError

__all__ = ["SETTINGS", "ConfigError", "ServiceConfig", "Setting", "load", "settings_table"]


@dataclass(frozen=True)
class Setting:
    name: str
    kind: type
    help: str


@dataclass(frozen=True)
class ServiceConfig:
    """Everything ``ranked serve`` needs; every field has a working default."""

    host: str = "127.0.0.1"
    port: int = 8080
    live_port: int = 0
    """The live channels' own port (:mod:`.fastlive`); 0: none (same port only)."""
    data_dir: Path = Path("ranked-data")
    backend: str = "memory://"
    journal: str = ""
    """Empty: ``sqlite:///<data_dir>/journal.db``."""
    durability: Literal["always", "batch", "none"] = "always"
    max_delay_ms: int = 10
    snapshot_every: int = 100_000
    log_level: Literal["debug", "info", "warning", "error"] = "info"

    @property
    def journal_url(self) -> str:
        """The journal's URL, with the durability options."""
        base = self.journal or f"sqlite:///{self.data_dir.resolve() / 'journal.db'}"
        glue = "&" if "?" in base else "?"
        return f"{base}{glue}durability={self.durability}&max_delay_ms={self.max_delay_ms}"


SETTINGS: Final = (
    Setting("host", str, "The address to listen on."),
    Setting("port", int, "The TCP port to listen on."),
    Setting(
        "live_port",
        int,
        "A second port serving only the live channels, cheaper per message (docs/live.md);"
        " 0: none.",
    ),
    Setting("data_dir", Path, "The journal, its snapshots and the API keys live here."),
    Setting("backend", str, "memory://, redis://host:port/db or redis+cluster://host:port,..."),
    Setting("journal", str, "sqlite:///path or postgresql://...; empty: <data_dir>/journal.db."),
    Setting("durability", str, "always (fsync before answering), batch or none."),
    Setting("max_delay_ms", int, "batch: the longest a write waits to be committed (ms)."),
    Setting("snapshot_every", int, "Snapshot a memory:// board every this many events."),
    Setting("log_level", str, "debug, info, warning or error."),
)


def load(flags: dict[str, Any], environ: dict[str, str] | None = None) -> ServiceConfig:
    """The configuration from ``flags`` (those given: not None), the environment and the
    TOML file, in that precedence. :class:`ConfigError` names a bad value."""
    environ = dict(os.environ) if environ is None else environ
    given = {name: value for name, value in flags.items() if value is not None}
    config_path = given.pop("config", None) or environ.get("RANKED_CONFIG")
    values: dict[str, Any] = {}
    data_dir = Path(given.get("data_dir") or environ.get("RANKED_DATA_DIR") or "ranked-data")
    path = Path(config_path) if config_path else data_dir / "ranked.toml"
    if config_path or path.exists():
        values.update(_toml(path))
    for setting in SETTINGS:
        raw = environ.get(f"RANKED_{setting.name.upper()}")
        if raw is not None:
            values[setting.name] = _parse(setting, raw, f"RANKED_{setting.name.upper()}")
    values.update(given)
    config = replace(ServiceConfig(), **{k: v for k, v in values.items()})
    _check(config)
    return config


def _toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            found = tomllib.load(file)
    except OSError as error:
        raise ConfigError(f"cannot read the configuration file {str(path)!r}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{str(path)!r} is not TOML: {error}") from None
    known = {s.name: s for s in SETTINGS}
    values: dict[str, Any] = {}
    for name, value in found.items():
        setting = known.get(name)
        if setting is None:
            raise ConfigError(f"{str(path)!r}: unknown setting {name!r}")
        if setting.kind is Path:
            value = Path(str(value))
        elif not isinstance(value, setting.kind) or isinstance(value, bool):
            raise ConfigError(f"{str(path)!r}: {name} must be a {setting.kind.__name__}")
        values[name] = value
    return values


def _parse(setting: Setting, raw: str, source: str) -> Any:
    if setting.kind is int:
        try:
            return int(raw)
        except ValueError:
            raise ConfigError(f"{source} must be an integer, not {raw!r}") from None
    if setting.kind is Path:
        return Path(raw)
    return raw


def _check(config: ServiceConfig) -> None:
    if not 0 <= config.port <= 65535:
        raise ConfigError(f"port must be in [0, 65535], not {config.port}")
    if not 0 <= config.live_port <= 65535:
        raise ConfigError(f"live_port must be in [0, 65535], not {config.live_port}")
    if config.live_port and config.live_port == config.port:
        raise ConfigError(f"live_port must differ from port ({config.port})")
    if config.durability not in ("always", "batch", "none"):
        raise ConfigError(f"durability must be always, batch or none, not {config.durability!r}")
    if config.log_level not in ("debug", "info", "warning", "error"):
        raise ConfigError(
            f"log_level must be debug, info, warning or error, not {config.log_level!r}"
        )
    if not 1 <= config.max_delay_ms <= 60_000:
        raise ConfigError(f"max_delay_ms must be in [1, 60000], not {config.max_delay_ms}")
    if config.snapshot_every < 1:
        raise ConfigError(f"snapshot_every must be at least 1, not {config.snapshot_every}")


def settings_table() -> str:
    """The settings as a Markdown table (docs/service.md)."""
    defaults = ServiceConfig()
    rows = ["| setting | flag | environment | default | meaning |", "|---|---|---|---|---|"]
    for setting in SETTINGS:
        default = getattr(defaults, setting.name)
        rows.append(
            f"| `{setting.name}` | `--{setting.name.replace('_', '-')}` |"
            f" `RANKED_{setting.name.upper()}` | `{default}` | {setting.help} |"
        )
    return "\n".join(rows)


assert {s.name for s in SETTINGS} == {f.name for f in fields(ServiceConfig)}
