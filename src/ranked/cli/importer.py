"""``ranked import``: stream a file of ``member,score`` rows into a board of a running
service, in batches (``POST /v1/boards/{board}/scores/batch``).

Rows are checked here first (:mod:`._rows`) and a bad one is rejected with its line
number; the good ones go in batches, each atomic on the service. A batch the service
refuses (422) is split in halves, and the halves sent again, down to single rows: only
the rows the service itself refuses are rejected, with its reason, and the rest are
applied in the file's order (each part is atomic, and a refused part changes nothing).
For one bad row in a batch of ``b`` that is about ``2 log2 b`` requests instead of ``b``.

Idempotency: every request carries a key made of a random id of this run, the batch's
number and the part's place in it. A batch sent again after a dropped connection or a
503 (a service restarting) is applied once. The key is not derived from the file's name:
the journal keeps keys for good, so importing a file of the same name again (tomorrow's
``scores.csv``) would be silently skipped.
"""

from __future__ import annotations

import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final, Literal

import click
import msgspec
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from ..service.schemas import MAX_BATCH, BatchBody, BatchItem
from ._client import Client, Failure, board_path, client_options
from ._rows import FORMATS, Rejected, Row, read_rows, shown

__all__ = ["Importer", "Summary", "format_of", "import_"]

SHOWN_REJECTIONS: Final = 10
"""How many rejected rows the summary prints."""

Operator = Literal["best", "set", "incr", "decr"]


class _Exists(msgspec.Struct):
    board: str


class _Applied(msgspec.Struct):
    """What the importer reads of a batch's answer (one result per row, or none when
    the service applied this key before a restart and no longer keeps the answer)."""

    results: list[msgspec.Raw]


@dataclass
class Summary:
    """What an import did, so far."""

    read: int = 0
    accepted: int = 0
    rejected: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    first: list[Rejected] = field(default_factory=list)
    last_line: int = 0
    """The line of the last row the service applied or refused (every row before it is
    done: applied, or rejected and listed)."""

    def reject(self, row: Rejected) -> None:
        self.rejected += 1
        self.reasons[row.reason] += 1
        if len(self.first) < SHOWN_REJECTIONS:
            self.first.append(row)

    def lines(self) -> list[str]:
        """The summary as printed."""
        out = [f"rows read: {self.read}", f"accepted:  {self.accepted}"]
        out.append(f"rejected:  {self.rejected}")
        for reason, count in self.reasons.most_common():
            out.append(f"  {count:>8}  {reason}")
        if self.first:
            more = self.rejected - len(self.first)
            out.append("rejected rows" + (f" (the first {len(self.first)}):" if more else ":"))
            for row in self.first:
                out.append(f"  line {row.line}: {row.detail}: {row.text}")
        return out


class Importer:
    """Sends rows to one board in batches of ``batch`` rows; ``progress`` is called
    after each batch."""

    def __init__(
        self,
        client: Client,
        board: str,
        *,
        operator: Operator | None = None,
        batch: int = 500,
        progress: Callable[[], None] = lambda: None,
    ) -> None:
        self.client = client
        self.path = board_path(board, "scores", "batch")
        self.operator = operator
        self.batch = batch
        self.progress = progress
        self.run_id = uuid.uuid4().hex[:16]
        self.summary = Summary()

    def run(self, rows: Iterable[Row | Rejected]) -> Summary:
        """Read and send every row; a refusal other than a row's (a missing board, a
        bad key, a service gone for good) raises with :attr:`summary` telling how far it
        got."""
        summary = self.summary
        pending: list[Row] = []
        number = 0
        for row in rows:
            summary.read += 1
            if isinstance(row, Rejected):
                summary.reject(row)
                continue
            pending.append(row)
            if len(pending) >= self.batch:
                self._send(pending, f"import:{self.run_id}:{number}")
                number += 1
                pending = []
                self.progress()
        if pending:
            self._send(pending, f"import:{self.run_id}:{number}")
        self.progress()
        return summary

    def _send(self, rows: list[Row], key: str) -> None:
        body = BatchBody([BatchItem(r.member, r.score) for r in rows], self.operator, key)
        try:
            self.client.call("POST", self.path, _Applied, body=body, retry=True)
        except Failure as problem:
            if problem.status != 422:
                raise
            if len(rows) == 1:
                row = rows[0]
                self.summary.reject(
                    Rejected(
                        row.line,
                        f"refused by the service ({problem.slug})",
                        problem.detail,
                        shown(f"{row.member},{row.score}"),
                    )
                )
                self.summary.last_line = row.line
            else:
                half = len(rows) // 2
                self._send(rows[:half], key + ".0")
                self._send(rows[half:], key + ".1")
            return
        self.summary.accepted += len(rows)
        self.summary.last_line = rows[-1].line


def format_of(path: str, given: str | None) -> str:
    """The file's format: ``given``, else from its suffix (``.csv``; ``.jsonl``,
    ``.ndjson``); else a usage error."""
    if given is not None:
        return given
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    raise click.UsageError(f"cannot tell the format of {path!r}: give --format csv or jsonl")


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--board", required=True, help="The board to submit to (it must exist).")
@click.option(
    "--format",
    "kind",
    type=click.Choice(FORMATS),
    default=None,
    help="csv or jsonl [default: from the file's suffix].",
)
@click.option(
    "--operator",
    type=click.Choice(["best", "set", "incr", "decr"]),
    default=None,
    help="Overrides the board's operator for these rows.",
)
@click.option(
    "--batch",
    type=click.IntRange(1, MAX_BATCH),
    default=500,
    show_default=True,
    help=f"Rows per request (at most {MAX_BATCH}); each batch is atomic.",
)
@client_options
def import_(
    file: str,
    board: str,
    kind: str | None,
    operator: Operator | None,
    batch: int,
    url: str,
    key: str | None,
) -> None:
    """Submit the member,score rows of FILE (CSV with a header, or JSON Lines) to a
    board, in batches, with a progress bar and a summary of rejected rows.

    Rows the API would refuse (empty or over-long member, control characters, a score
    that is not a finite number, a wrong column count) are rejected before sending;
    rows the service refuses are rejected with its reason. The exit status is 0 even
    with rejected rows; FILE - reads standard input.

    Example: ranked import scores.csv --board arena --key $RANKED_KEY
    """
    kind = format_of(file, kind) if file != "-" or kind else "csv"
    stream: IO[bytes] = (
        sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: SIM115
    )
    try:
        summary = _import(stream, kind, board, operator, batch, url, key)
    finally:
        if file != "-":
            stream.close()
    for line in summary.lines():
        click.echo(line)


def _import(
    stream: IO[bytes],
    kind: str,
    board: str,
    operator: Operator | None,
    batch: int,
    url: str,
    key: str | None,
) -> Summary:
    total = _size(stream)
    console = Console(stderr=True)
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
        disable=not console.is_terminal,
    )
    task = bar.add_task(f"import to {board}", total=total)

    def advance() -> None:
        if total is not None:
            bar.update(task, completed=stream.tell())

    with Client(url, key) as client:
        # A missing board, a bad key or no service: said before anything is read.
        client.call("GET", board_path(board), _Exists, retry=True)
        importer = Importer(client, board, operator=operator, batch=batch, progress=advance)
        try:
            with bar:
                return importer.run(read_rows(stream, kind))
        except Failure:
            got = importer.summary
            if got.accepted or got.rejected:
                for line in got.lines():
                    click.echo(line)
                click.echo(f"stopped: the rows to line {got.last_line} are done, the rest unsent")
            raise


def _size(stream: IO[bytes]) -> int | None:
    """The stream's size in bytes when it is a file (None: a pipe)."""
    try:
        if stream.seekable():
            here = stream.tell()
            end = stream.seek(0, 2)
            stream.seek(here)
            return end
    except OSError:
        pass
    return None
