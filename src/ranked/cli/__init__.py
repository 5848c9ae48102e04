"""The ``ranked`` command: run the service, manage its keys and boards, move data in and out.

Every subcommand has ``--help``. Commands that read or write a service's files take
``--data-dir`` (default ``./ranked-data``, or ``RANKED_DATA_DIR``); they work whether or not
``ranked serve`` is running on that directory.
"""

from __future__ import annotations

import click

from .. import __version__
from .keys import keys

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ranked")
def main() -> None:
    """ranked: leaderboards as a service, embedded by default, on Redis by configuration."""


def _register() -> None:
    from .boards import boards, rebuild, snapshot
    from .exporter import export
    from .guard import guard
    from .importer import import_
    from .serve import demo, serve

    for command in (serve, demo, keys, boards, import_, export, rebuild, snapshot, guard):
        main.add_command(command)


_register()
