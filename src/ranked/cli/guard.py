"""``ranked guard ...``: a running service's write guards and their moderation, through
its HTTP API (admin key): set / show / off, pending / promote / reject, ban / unban /
bans, purge, audit (docs/guard.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import msgspec

from ..service.guard_routes import (
    AuditOut,
    BanList,
    Flag,
    GuardOut,
    GuardSettings,
    PendingList,
    PendingOut,
)
from ..service.schemas import SubmitResult
from ._client import Client, Failure, board_path, client_options

__all__ = ["guard"]


def _echo(value: Any) -> None:
    click.echo(msgspec.json.format(msgspec.json.encode(value), indent=2).decode())


@click.group()
def guard() -> None:
    """A board's write guard and its moderation (needs an admin key).

    Example: ranked guard pending arena --key $RANKED_KEY
    """


@guard.command("set")
@click.argument("board")
@click.argument("settings", required=False)
@click.option(
    "--file",
    "path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read the settings (JSON) from this file.",
)
@client_options
def set_guard(
    board: str, settings: str | None, path: Path | None, url: str, key: str | None
) -> None:
    """Set BOARD's guard from SETTINGS (a JSON object, see docs/guard.md) or --file.

    Example: ranked guard set arena '{"max_score": 100000, "pending_rank": 100}'
    """
    text = path.read_text(encoding="utf-8") if path is not None else settings
    if text is None:
        raise click.UsageError("give the settings as an argument or with --file")
    try:
        body = msgspec.json.decode(text.encode(), type=GuardSettings)
    except msgspec.MsgspecError as error:
        raise click.BadParameter(f"the settings do not fit: {error}") from None
    with Client(url, key) as client:
        _echo(client.call("PUT", board_path(board, "guard"), GuardOut, body=body))


@guard.command("show")
@click.argument("board")
@client_options
def show(board: str, url: str, key: str | None) -> None:
    """Print BOARD's guard settings (secrets as their ids)."""
    with Client(url, key) as client:
        _echo(client.call("GET", board_path(board, "guard"), GuardOut, retry=True))


@guard.command("off")
@click.argument("board")
@client_options
def off(board: str, url: str, key: str | None) -> None:
    """Remove BOARD's guard (its bans and audit stay in the journal)."""
    with Client(url, key) as client:
        try:
            client.call("DELETE", board_path(board, "guard"), Flag)
        except Failure as failure:
            if failure.slug != "no-guard":
                raise
            click.echo("the board had no guard")  # the end state asked for: not an error
            return
    click.echo("guard removed")


@guard.command("pending")
@click.argument("board")
@client_options
def pending(board: str, url: str, key: str | None) -> None:
    """List BOARD's submissions held for review, oldest first."""
    with Client(url, key) as client:
        found = client.call("GET", board_path(board, "pending"), PendingList, retry=True)
    if not found.pending:
        click.echo("nothing pending")
        return
    for entry in found.pending:
        click.echo(f"{entry.id}  {entry.member}  {entry.score:g}  {entry.reason}")


@guard.command("promote")
@click.argument("board")
@click.argument("pending_id")
@client_options
def promote(board: str, pending_id: str, url: str, key: str | None) -> None:
    """Apply a held submission with its original instant."""
    with Client(url, key) as client:
        done = client.call(
            "POST", board_path(board, "pending", pending_id, "promote"), SubmitResult
        )
    click.echo(f"promoted: {done.member} {done.score:g}, rank {done.rank}")


@guard.command("reject")
@click.argument("board")
@click.argument("pending_id")
@click.option("--reason", required=True, help="Why (journaled).")
@client_options
def reject(board: str, pending_id: str, reason: str, url: str, key: str | None) -> None:
    """Drop a held submission."""
    with Client(url, key) as client:
        entry = client.call(
            "POST",
            board_path(board, "pending", pending_id, "reject"),
            PendingOut,
            body={"reason": reason},
        )
    click.echo(f"rejected: {entry.member} {entry.score:g}")


@guard.command("ban")
@click.argument("board")
@click.argument("member")
@click.option("--reason", required=True, help="Why (journaled).")
@click.option("--purge", is_flag=True, help="Also remove its scores from every window.")
@client_options
def ban(board: str, member: str, reason: str, purge: bool, url: str, key: str | None) -> None:
    """Refuse MEMBER's future writes to BOARD (and with --purge remove its scores)."""
    with Client(url, key) as client:
        done = client.call("PUT", board_path(board, "bans", member), Flag, body={"reason": reason})
        click.echo("banned" if done.changed else "already banned")
        if purge:
            removed = client.call(
                "POST", board_path(board, "members", member, "purge"), Flag, body={"reason": reason}
            )
            click.echo("scores removed" if removed.changed else "no scores to remove")


@guard.command("unban")
@click.argument("board")
@click.argument("member")
@click.option("--reason", required=True, help="Why (journaled).")
@client_options
def unban(board: str, member: str, reason: str, url: str, key: str | None) -> None:
    """Lift MEMBER's ban on BOARD."""
    with Client(url, key) as client:
        done = client.call(
            "DELETE", board_path(board, "bans", member), Flag, params={"reason": reason}
        )
    click.echo("unbanned" if done.changed else "was not banned")


@guard.command("bans")
@click.argument("board")
@client_options
def bans(board: str, url: str, key: str | None) -> None:
    """List BOARD's banned members."""
    with Client(url, key) as client:
        found = client.call("GET", board_path(board, "bans"), BanList, retry=True)
    for member in found.members:
        click.echo(member)


@guard.command("purge")
@click.argument("board")
@click.argument("member")
@click.option("--reason", required=True, help="Why (journaled).")
@client_options
def purge(board: str, member: str, reason: str, url: str, key: str | None) -> None:
    """Remove MEMBER's scores from every window of BOARD, and its held submissions."""
    with Client(url, key) as client:
        done = client.call(
            "POST", board_path(board, "members", member, "purge"), Flag, body={"reason": reason}
        )
    click.echo("removed" if done.changed else "nothing to remove")


@guard.command("audit")
@click.argument("board")
@click.option("--member", default=None, help="Only this member's verdicts.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the API's answer as JSON.")
@client_options
def audit(
    board: str, member: str | None, limit: int, as_json: bool, url: str, key: str | None
) -> None:
    """Print BOARD's newest journaled verdicts, oldest first."""
    params: dict[str, str | int] = {"limit": limit}
    if member is not None:
        params["member"] = member
    with Client(url, key) as client:
        found = client.call("GET", board_path(board, "audit"), AuditOut, params=params, retry=True)
    if as_json:
        _echo(found)
        return
    for item in found.audit:
        extra = json.dumps(item.detail, separators=(",", ":")) if item.detail else ""
        click.echo(
            f"{item.seq}  {item.action}  {item.member or '-'}  "
            f"{'' if item.score is None else f'{item.score:g}'}  {item.actor or '-'}  "
            f"{item.reason or ''}  {extra}".rstrip()
        )
