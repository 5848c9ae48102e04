"""``ranked export``: write a board of a running service as ``member,score,rank`` rows,
page by page (``GET /v1/boards/{board}/entries`` with its cursors), as they arrive.

Every page is read from the window the first read names (the board's current primary
window unless ``--window`` names another), so a day that turns during the export does
not switch windows half way. The pages are consecutive reads, not one snapshot: a write
that lands during the export may move a member across a page boundary (seen twice or
not at all) — export a closed window, or a quiet board, for an exact copy. A file is
written under a ``.part`` name and renamed when complete.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Final

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from ..service.schemas import BoardInfo, CountOut, EntryOut, PageOut
from ._client import Client, board_path, client_options
from ._rows import FORMATS

__all__ = ["export", "number_text"]

PAGE: Final = 1000
"""Entries a read asks for (fewer when the board's ``max_page_size`` is smaller)."""

EXACT: Final = 2**53


def number_text(score: float) -> str:
    """A score as written: integral values as integers (``1500``), others as Python's
    shortest round-tripping form."""
    if score.is_integer() and -EXACT <= score <= EXACT:
        return str(int(score))
    return repr(score)


def _writer(kind: str, out: IO[str]) -> Callable[[EntryOut], None]:
    if kind == "csv":
        rows = csv.writer(out, lineterminator="\n")
        rows.writerow(["member", "score", "rank"])

        def csv_row(entry: EntryOut) -> None:
            rows.writerow([entry.member, number_text(entry.score), entry.rank])

        return csv_row

    def json_line(entry: EntryOut) -> None:
        member = json.dumps(entry.member, ensure_ascii=False)
        out.write(f'{{"member":{member},"score":{number_text(entry.score)},"rank":{entry.rank}}}\n')

    return json_line


@contextlib.contextmanager
def _opened(output: str) -> Iterator[IO[str]]:
    """Standard output, or ``output`` written as ``output.part`` and renamed at the end
    (removed if the export fails)."""
    if output == "-":
        stdout = sys.stdout
        yield stdout
        stdout.flush()  # the rows before the closing line on standard error
        return
    final = Path(output)
    part = final.with_name(final.name + ".part")
    try:
        with part.open("w", encoding="utf-8", newline="") as file:
            yield file
        os.replace(part, final)
    finally:
        part.unlink(missing_ok=True)


@click.command("export")
@click.option("--board", required=True, help="The board to export.")
@click.option(
    "--window",
    default=None,
    help="A window id (d2026-03-01, w2026-W09, m2026-03, s:NAME)"
    " [default: the board's current one].",
)
@click.option(
    "--format",
    "kind",
    type=click.Choice(FORMATS),
    default=None,
    help="csv or jsonl [default: from --output's suffix, else csv].",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    help="The file to write [default: standard output].",
)
@client_options
def export(
    board: str, window: str | None, kind: str | None, output: str, url: str, key: str | None
) -> None:
    """Write a board's entries (member, score, rank) as CSV or JSON Lines, best first,
    paging through the service; progress goes to standard error.

    Example: ranked export --board arena --output arena.csv --key $RANKED_KEY
    """
    if kind is None:
        kind = "jsonl" if Path(output).suffix.lower() in (".jsonl", ".ndjson") else "csv"
    with Client(url, key) as client:
        info = client.call("GET", board_path(board), BoardInfo, retry=True)
        window = window or info.window
        limit = min(PAGE, info.settings.max_page_size)
        total = client.call(
            "GET", board_path(board, "count"), CountOut, params={"window": window}, retry=True
        ).count
        console = Console(stderr=True)
        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
            # rows and a bar on one terminal would mix: no bar then
            disable=not console.is_terminal or (output == "-" and sys.stdout.isatty()),
        )
        written = 0
        with _opened(output) as out, progress:
            task = progress.add_task(f"export {board}", total=total)
            write = _writer(kind, out)
            params: dict[str, str | int] = {"limit": limit, "window": window}
            while True:
                page = client.call(
                    "GET", board_path(board, "entries"), PageOut, params=params, retry=True
                )
                for entry in page.entries:
                    write(entry)
                written += len(page.entries)
                progress.update(task, completed=written)
                if page.next is None:
                    break
                params["cursor"] = page.next
    where = "standard output" if output == "-" else output
    click.echo(f"exported {written} entries of {board} (window {window}) to {where}", err=True)
