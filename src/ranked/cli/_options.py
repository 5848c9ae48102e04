"""Options every command that touches a service's files shares."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

__all__ = ["DEFAULT_DATA_DIR", "data_dir_option"]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_DATA_DIR = "ranked-data"
"""Where a service keeps its journal, snapshots and keys when nothing says otherwise."""


def data_dir_option(function: F) -> F:
    """``--data-dir DIR`` (or ``RANKED_DATA_DIR``): the service's directory, as a Path."""
    return click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=DEFAULT_DATA_DIR,
        envvar="RANKED_DATA_DIR",
        show_default=True,
        help="The service's directory: journal, snapshots and API keys.",
    )(function)
