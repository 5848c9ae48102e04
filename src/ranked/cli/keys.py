"""``ranked keys``: create, list and revoke the service's API keys (docs/keys.md).

They work whether or not ``ranked serve`` runs on the same data directory: a running
service sees a new key at once and a revocation within
:data:`~ranked.service.keys.REFRESH_INTERVAL`. Exit status: 0 done, 1 an unknown key id or
an unusable key file, 2 bad input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import KeyArgumentError, KeyNotFoundError, KeyStoreError
from ..service.keys import KeyInfo, KeyStore, Scope, check_key_id
from ._options import data_dir_option

__all__ = ["keys"]

_FILE = "keys.db"


def _bad_input(message: str) -> click.ClickException:
    """An error click prints as one line, exiting with status 2."""
    error = click.ClickException(message)
    setattr(error, "exit_code", 2)  # noqa: B010 - a class variable of click's, set per instance
    return error


@contextmanager
def _store(data_dir: Path) -> Iterator[KeyStore]:
    """The key store of ``data_dir``; its errors as click's (status 1, or 2 for bad input)."""
    try:
        with KeyStore(data_dir) as store:
            yield store
    except KeyArgumentError as error:
        raise _bad_input(str(error)) from error
    except (KeyNotFoundError, KeyStoreError) as error:
        raise click.ClickException(str(error)) from error


def _when(instant: datetime | None) -> str:
    return "" if instant is None else instant.strftime("%Y-%m-%d %H:%M:%SZ")


def _as_json(info: KeyInfo) -> dict[str, str | None]:
    revoked = None if info.revoked_at is None else info.revoked_at.isoformat()
    return {
        "id": info.id,
        "scope": str(info.scope),
        "name": info.name,
        "created_at": info.created_at.isoformat(),
        "revoked_at": revoked,
    }


@click.group()
def keys() -> None:
    """Create, list and revoke the service's API keys.

    Keys live in DATA_DIR/keys.db as SHA-256 hashes only: a key is shown once, when it is
    created. Scopes: admin (everything), write (submit scores, and read), read.
    """


@keys.command()
@click.option(
    "--scope",
    type=click.Choice([str(scope) for scope in Scope]),
    required=True,
    help="What the key may do: admin includes write, which includes read.",
)
@click.option("--name", help="A label for people: who holds the key, what it is for.")
@data_dir_option
def create(scope: str, name: str | None, data_dir: Path) -> None:
    """Create a key and print it, alone, on the last line of stdout (the only time it is
    shown: store it now). A note about it goes to stderr, so
    KEY=$(ranked keys create --scope read) takes the key alone."""
    with _store(data_dir) as store:
        info, key = store.create(scope, name)
    label = "" if info.name is None else f" ({info.name})"
    click.echo(
        f"Created {info.scope} key {info.id}{label} in {data_dir}."
        " It is shown once, below: store it now.",
        err=True,
    )
    click.echo(key)


@keys.command(name="list")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="JSON Lines: one object per key (id, scope, name, created_at, revoked_at).",
)
@data_dir_option
def list_keys(as_json: bool, data_dir: Path) -> None:
    """List every key, revoked ones included, oldest first (ids, never secrets)."""
    found: list[KeyInfo] = []
    if (data_dir / _FILE).exists():  # reading creates nothing
        with _store(data_dir) as store:
            found = store.list()
    if as_json:
        for info in found:
            click.echo(json.dumps(_as_json(info), ensure_ascii=False))
        return
    if not found:
        click.echo(f"No keys in {data_dir}.")
        return
    table = Table()
    for column in ("id", "scope", "name", "created", "revoked"):
        # Only a name wraps (folding a long word: nothing is cut off).
        table.add_column(column, no_wrap=column != "name", overflow="fold")
    for info in found:
        # Text: a name shows as typed, never read as rich markup.
        when = (_when(info.created_at), _when(info.revoked_at))
        table.add_row(info.id, str(info.scope), Text(info.name or ""), *when)
    Console(highlight=False).print(table)


@keys.command()
@click.argument("key_id")
@data_dir_option
def revoke(key_id: str, data_dir: Path) -> None:
    """Revoke the key KEY_ID (its 12-digit id, as `ranked keys list` shows it): it no longer
    authenticates. Revoking a revoked key changes nothing."""
    try:
        check_key_id(key_id)
    except KeyArgumentError as error:
        raise _bad_input(str(error)) from error
    if not (data_dir / _FILE).exists():  # nothing to revoke: create no file
        raise click.ClickException(f"no key has id {key_id!r} (no {_FILE} in {data_dir})")
    with _store(data_dir) as store:
        info = store.revoke(key_id)
    click.echo(f"Revoked {info.scope} key {info.id} at {_when(info.revoked_at)}.")
