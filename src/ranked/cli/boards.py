"""``ranked boards list|show|create``, ``ranked rebuild`` and ``ranked snapshot``: a
running service's boards, through its HTTP API (the same for every deployment, while the
service runs)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import click
import msgspec
from rich.console import Console
from rich.table import Table

from ..service.schemas import (
    BoardInfo,
    BoardList,
    BoardSettings,
    RebuildResult,
    SeasonSpec,
    SnapshotResult,
)
from ._client import Client, Failure, board_path, client_options

__all__ = ["boards", "rebuild", "snapshot"]


def _json(value: Any) -> str:
    return msgspec.json.format(msgspec.json.encode(value), indent=2).decode()


@click.group()
def boards() -> None:
    """List, show and create the boards of a running service (its HTTP API).

    Example: ranked boards list --url http://127.0.0.1:8080 --key $RANKED_KEY
    """


@boards.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the API's answer as JSON.")
@client_options
def list_boards(as_json: bool, url: str, key: str | None) -> None:
    """List the boards: name, members (in the current window), window, operator, order.

    Example: ranked boards list --key $RANKED_KEY
    """
    with Client(url, key) as client:
        found = client.call("GET", "/v1/boards", BoardList, retry=True)
    if as_json:
        click.echo(_json(found))
        return
    if not found.boards:
        click.echo("no boards (create one with `ranked boards create`)")
        return
    table = Table("board", "members", "window", "operator", "order")
    table.columns[1].justify = "right"
    for info in found.boards:
        settings = info.settings
        table.add_row(info.board, str(info.members), info.window, settings.operator, settings.order)
    Console(soft_wrap=True).print(table)


@boards.command("show")
@click.argument("board")
@client_options
def show(board: str, url: str, key: str | None) -> None:
    """Print a board's settings, size and current window as JSON.

    Example: ranked boards show arena --key $RANKED_KEY
    """
    with Client(url, key) as client:
        click.echo(_json(client.call("GET", board_path(board), BoardInfo, retry=True)))


def _season(name: str, start: str, end: str) -> SeasonSpec:
    instants = []
    for text in (start, end):
        try:
            instant = datetime.fromisoformat(text)
        except ValueError:
            raise click.BadParameter(
                f"{text!r} is not an ISO 8601 instant", param_hint="--season"
            ) from None
        if instant.tzinfo is None:
            raise click.BadParameter(
                f"{text!r} needs a time zone (Z or +hh:mm)", param_hint="--season"
            )
        instants.append(instant)
    return SeasonSpec(name, instants[0], instants[1])


def _differences(old: BoardSettings, new: BoardSettings) -> str:
    return ", ".join(
        f"{name} {getattr(old, name)!r} -> {getattr(new, name)!r}"
        for name in old.__struct_fields__
        if getattr(old, name) != getattr(new, name)
    )


@boards.command("create")
@click.argument("board")
@click.option(
    "--operator",
    type=click.Choice(["best", "set", "incr", "decr"]),
    default="best",
    show_default=True,
    help="What a submission does: keep the best, set, increment or decrement.",
)
@click.option(
    "--order",
    type=click.Choice(["desc", "asc"]),
    default="desc",
    show_default=True,
    help="desc: higher scores first; asc: lower first. Fixed for life.",
)
@click.option(
    "--tie-break",
    type=click.Choice(["member", "time"]),
    default="member",
    show_default=True,
    help="Equal scores by member, or the earlier achiever first. Fixed for life.",
)
@click.option(
    "--window",
    "windows",
    type=click.Choice(["all", "daily", "weekly", "monthly"]),
    multiple=True,
    help="A window every submission goes to (repeat; the first is read by default)"
    " [default: all]. Fixed for life.",
)
@click.option(
    "--season",
    "seasons",
    nargs=3,
    multiple=True,
    metavar="NAME START END",
    help="A season [START, END) in ISO 8601 with a time zone (repeat): submissions in"
    " it also go to window s:NAME. Fixed for life.",
)
@click.option(
    "--rank-style",
    type=click.Choice(["competition", "dense", "unique"]),
    default="competition",
    show_default=True,
    help="Ranks of equal scores: 1,2,2,4 / 1,2,2,3 / 1,2,3,4.",
)
@click.option(
    "--keep",
    type=click.IntRange(1, 10_000_000),
    default=None,
    help="Keep only the best N members [default: all].",
)
@click.option(
    "--keep-buffer",
    type=click.IntRange(0, 10_000_000),
    default=0,
    show_default=True,
    help="Members kept past --keep before trimming.",
)
@click.option(
    "--max-page-size",
    type=click.IntRange(1, 10_000),
    default=1000,
    show_default=True,
    help="The most entries one read returns.",
)
@click.option("--public-reads", is_flag=True, help="Let clients without a key read the board.")
@click.option(
    "--batch-incr-ms",
    type=click.IntRange(1, 10_000),
    default=None,
    help="Coalesce incr submissions per member over this many ms [default: off].",
)
@click.option(
    "--update",
    is_flag=True,
    help="If the board exists, give it these settings (those fixed for life must not differ).",
)
@client_options
def create(
    board: str,
    operator: str,
    order: str,
    tie_break: str,
    windows: tuple[str, ...],
    seasons: tuple[tuple[str, str, str], ...],
    rank_style: str,
    keep: int | None,
    keep_buffer: int,
    max_page_size: int,
    public_reads: bool,
    batch_incr_ms: int | None,
    update: bool,
    url: str,
    key: str | None,
) -> None:
    """Create BOARD with these settings (PUT /v1/boards/BOARD; an admin key).

    A board that exists already with the same settings is left alone (exit 0); with
    other settings it is an error unless --update is given.

    Example: ranked boards create arena --window all --window daily --keep 1000
    """
    settings = msgspec.convert(
        {
            "order": order,
            "operator": operator,
            "tie_break": tie_break,
            "windows": list(windows or ("all",)),
            "seasons": [msgspec.to_builtins(_season(*s)) for s in seasons],
            "rank_style": rank_style,
            "keep": keep,
            "keep_buffer": keep_buffer,
            "max_page_size": max_page_size,
            "public_reads": public_reads,
            "batch_incr_ms": batch_incr_ms,
        },
        BoardSettings,
    )
    path = board_path(board)
    with Client(url, key) as client:
        try:
            old: BoardSettings | None = client.call("GET", path, BoardInfo, retry=True).settings
        except Failure as problem:
            if problem.slug != "unknown-board":
                raise
            old = None
        if old == settings:
            click.echo(f"board {board} exists with these settings")
            return
        if old is not None and not update:
            raise Failure(
                f"board {board} exists with other settings ({_differences(old, settings)});"
                " give --update to change them"
            )
        info = client.call("PUT", path, BoardInfo, body=settings)
    done = "created" if old is None else "updated"
    click.echo(f"board {info.board} {done} ({info.members} members, window {info.window})")


@click.command()
@click.argument("board")
@click.option("--window", help="Rebuild this window alone (e.g. d2026-11-26); the others stay.")
@client_options
def rebuild(board: str, window: str | None, url: str, key: str | None) -> None:
    """Rebuild BOARD's index from its journal on the service (an admin key). Reads see
    the board partly built until it is done; a window rebuilt alone is put in place in
    one step.

    Example: ranked rebuild arena --key $RANKED_KEY
    """
    path = board_path(board, "rebuild")
    if window is not None:
        path += "?" + urlencode({"window": window})
    with Client(url, key) as client:
        done = client.call("POST", path, RebuildResult, wait=True)
    if done.window is not None:
        click.echo(
            f"board {board} window {done.window} rebuilt from its journal: {done.members} members"
        )
    else:
        click.echo(f"board {board} rebuilt from its journal: {done.replayed} events replayed")


@click.command()
@click.argument("board")
@client_options
def snapshot(board: str, url: str, key: str | None) -> None:
    """Write a snapshot of BOARD now (a memory:// board; an admin key): restarts load it
    and replay only the journal after it.

    Example: ranked snapshot arena --key $RANKED_KEY
    """
    with Client(url, key) as client:
        done = client.call("POST", board_path(board, "snapshot"), SnapshotResult, wait=True)
    if done.covers_board_seq is None:
        click.echo(f"board {board}: no snapshot taken (its backend keeps its own data)")
    else:
        click.echo(
            f"board {board}: snapshot written, covering its events to number"
            f" {done.covers_board_seq}"
        )
