"""``ranked import`` and ``ranked export`` against a real ``ranked serve``: what reaches
the board, what is rejected and why, paging, windows, formats and round trips."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ranked.cli._client import Client, Failure
from ranked.cli._rows import Rejected, Row
from ranked.cli.importer import Importer
from ranked.service.keys import KeyStore, Scope
from servers import free_port

from .conftest import RunningService, create, entries, ranked_serve

GOOD_AND_BAD_CSV = (
    "member,score\n"
    "alice,10\n"  # 2
    "bob,20.5\n"  # 3
    ",3\n"  # 4 empty member
    "carl,abc\n"  # 5 not a number
    "dan,nan\n"  # 6 not finite
    "eve,1e400\n"  # 7 beyond float64
    "fay,1,2\n"  # 8 three fields
    '"g,h",7\n'  # 9 a quoted comma: good
    f"{'x' * 201},1\n"  # 10 too long
    "bad\x01x,2\n"  # 11 a control character
    "c1\u0085,2\n"  # 12 a C1 control character
    "\n"  # 13 blank: skipped
    "ok2, -3 \n"  # 14 spaces around the score: good
    "carl\n"  # 15 one field
    f"{'é' * 200},4\n"  # 16 200 characters (400 bytes): good
)


def _summary(stdout: str) -> dict[str, int]:
    found = {}
    for name in ("rows read", "accepted", "rejected"):
        match = re.search(f"^{name}: +([0-9]+)$", stdout, re.MULTILINE)
        assert match is not None, stdout
        found[name] = int(match.group(1))
    return found


def _reasons(stdout: str) -> dict[str, int]:
    return {
        m.group(2): int(m.group(1))
        for m in re.finditer(r"^ {2} *([0-9]+)  (.+)$", stdout, re.MULTILINE)
    }


def _shown_lines(stdout: str) -> list[int]:
    return [int(n) for n in re.findall(r"^  line ([0-9]+): ", stdout, re.MULTILINE)]


# -- import -------------------------------------------------------------------------------


def test_import_csv_sends_the_good_rows_and_counts_the_bad(
    service: RunningService, board: str, tmp_path: Path
) -> None:
    create(service, board)
    path = tmp_path / "scores.csv"
    path.write_text(GOOD_AND_BAD_CSV, encoding="utf-8")
    result = service.cli("import", str(path), "--board", board, "--batch", "2")
    assert result.exit_code == 0, result.output
    assert _summary(result.stdout) == {"rows read": 14, "accepted": 5, "rejected": 9}
    assert _reasons(result.stdout) == {
        "score not finite": 2,
        "control character": 2,
        "wrong column count": 2,
        "empty member": 1,
        "score not a number": 1,
        "member too long": 1,
    }
    assert _shown_lines(result.stdout) == [4, 5, 6, 7, 8, 10, 11, 12, 15]
    assert "line 11: the member holds control character '\\x01': bad\\x01x,2" in result.stdout
    assert "line 8: 3 fields where the header has 2: fay,1,2" in result.stdout
    assert sorted(entries(service, board)) == sorted(
        [("alice", 10, 2), ("bob", 20.5, 1), ("g,h", 7, 3), ("ok2", -3, 5), ("é" * 200, 4, 4)]
    )


def test_import_jsonl(service: RunningService, board: str, tmp_path: Path) -> None:
    create(service, board)
    lines = [
        '{"member": "j1", "score": 5}',
        '{"member": "j2", "score": "5"}',  # a string score
        "not json",
        "[1, 2]",
        '{"member": 3, "score": 1}',
        '{"member": "j3", "score": true}',
        '{"member": "j4", "score": NaN}',
        "",
        '{"member": "j5", "score": 2.5, "rank": 9}',  # an export's line: rank ignored
        '{"member": "j6"}',
        '{"member": "j\\u0007", "score": 1}',
        '{"member": "j7", "score": -1e3}',
    ]
    path = tmp_path / "scores.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = service.cli("import", str(path), "--board", board)
    assert result.exit_code == 0, result.output
    assert _summary(result.stdout) == {"rows read": 11, "accepted": 3, "rejected": 8}
    assert _reasons(result.stdout) == {
        "score not a number": 2,
        "not JSON": 1,
        "not a member/score object": 2,
        "member not a string": 1,
        "score not finite": 1,
        "control character": 1,
    }
    assert _shown_lines(result.stdout) == [2, 3, 4, 5, 6, 7, 10, 11]
    assert entries(service, board) == [("j1", 5, 1), ("j5", 2.5, 2), ("j7", -1000, 3)]


def test_import_shows_the_first_ten_rejected_rows(
    service: RunningService, board: str, tmp_path: Path
) -> None:
    create(service, board)
    path = tmp_path / "bad.csv"
    path.write_text("member,score\n" + "".join(f"m{i},x\n" for i in range(12)) + "ok,1\n")
    result = service.cli("import", str(path), "--board", board)
    assert result.exit_code == 0
    assert _summary(result.stdout) == {"rows read": 13, "accepted": 1, "rejected": 12}
    assert "rejected rows (the first 10):" in result.stdout
    assert _shown_lines(result.stdout) == list(range(2, 12))


def test_rows_the_service_refuses_are_rejected_one_by_one_with_its_reason(
    service: RunningService, board: str, tmp_path: Path
) -> None:
    """A time tie-break board takes int scores only: the service refuses the batch, and
    then each fractional row with its reason (locally bad rows never reach it)."""
    create(service, board, tie_break="time")
    path = tmp_path / "timed.csv"
    path.write_text("member,score\na,1.5\nb,x\nc,2.5\nd,3.25\n")
    result = service.cli("import", str(path), "--board", board)
    assert result.exit_code == 0, result.output
    assert _summary(result.stdout) == {"rows read": 4, "accepted": 0, "rejected": 4}
    assert _reasons(result.stdout) == {
        "refused by the service (out-of-range)": 3,
        "score not a number": 1,
    }
    assert "line 2: a time tie-break board takes int scores, not 1.5: a,1.5" in result.stdout
    assert _shown_lines(result.stdout) == [3, 2, 4, 5]
    assert entries(service, board) == []


def test_a_refused_batch_keeps_its_good_rows(tmp_path: Path) -> None:
    """x, 1e308 is good; x, 1 then is refused (1e308 + 1 is not exact); y, 5 is good:
    the batch is refused whole, its parts are sent again, only line 3 is rejected."""
    with ranked_serve(tmp_path / "data") as own:
        create(own, "counted", operator="incr")
        path = tmp_path / "incr.csv"
        path.write_text("member,score\nx,1e308\nx,1\ny,5\n")
        result = own.cli("import", str(path), "--board", "counted")
        assert result.exit_code == 0, result.output
        assert _summary(result.stdout) == {"rows read": 3, "accepted": 2, "rejected": 1}
        assert _shown_lines(result.stdout) == [3]
        assert entries(own, "counted") == [("x", 1e308, 1), ("y", 5, 2)]


def test_an_import_that_cannot_go_on_says_how_far_it_got(tmp_path: Path) -> None:
    """The service goes away after the first batch: the import stops with a Failure,
    and its summary holds the batch that was applied and the rows rejected before."""
    with ranked_serve(tmp_path / "data") as own:
        create(own, "b")
        before = entries(own, "b")
        server = own.server
        assert server is not None

        def rows() -> Iterator[Row | Rejected]:
            yield Row(2, "a", 1)
            yield Rejected(3, "empty member", "the member is empty", ",2")
            yield Row(4, "b", 2)  # the first batch, sent now
            server.stop()
            yield Row(5, "c", 3)
            yield Row(6, "d", 4)

        importer = Importer(Client(own.url, own.admin_key, attempts=2, backoff=0.01), "b", batch=2)
        with pytest.raises(Failure, match=f"^the service at {own.url} went away"):
            importer.run(rows())
    assert before == []
    got = importer.summary
    assert (got.read, got.accepted, got.rejected, got.last_line) == (5, 2, 1, 4)
    with ranked_serve(tmp_path / "data") as again:
        assert entries(again, "b") == [("b", 2, 1), ("a", 1, 2)]


def test_operator_override_and_a_new_key_for_every_run(
    service: RunningService, board: str, tmp_path: Path
) -> None:
    """The idempotency keys are per run, not per file: the same file imported twice
    with incr counts twice."""
    create(service, board, operator="best")
    path = tmp_path / "points.csv"
    path.write_text("member,score\na,5\nb,1\na,2\n")
    for _ in range(2):
        result = service.cli("import", str(path), "--board", board, "--operator", "incr")
        assert result.exit_code == 0
        assert _summary(result.stdout) == {"rows read": 3, "accepted": 3, "rejected": 0}
    assert entries(service, board) == [("a", 14, 1), ("b", 2, 2)]


def test_import_from_standard_input(service: RunningService, board: str) -> None:
    create(service, board)
    rows = b'{"member": "s1", "score": 1}\n{"member": "s2", "score": 2}\n'
    result = service.cli("import", "-", "--board", board, "--format", "jsonl", stdin=rows)
    assert result.exit_code == 0, result.output
    assert entries(service, board) == [("s2", 2, 1), ("s1", 1, 2)]


def test_import_reads_utf8_with_a_byte_order_mark_and_refuses_stray_bytes(
    service: RunningService, board: str, tmp_path: Path
) -> None:
    create(service, board)
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbfmember,score\r\nz\xc3\xa9,1\r\nbad\xff,2\r\n")
    result = service.cli("import", str(path), "--board", board)
    assert result.exit_code == 0, result.output
    assert _summary(result.stdout) == {"rows read": 2, "accepted": 1, "rejected": 1}
    assert _reasons(result.stdout) == {"not UTF-8": 1}
    assert entries(service, board) == [("zé", 1, 1)]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("name,points\na,1\n", "the first row must be a header naming the columns member"),
        ("member,score,member\na,1,b\n", "the first row must be a header"),
    ],
)
def test_a_csv_without_its_header_is_refused_whole(
    service: RunningService, board: str, tmp_path: Path, content: str, message: str
) -> None:
    create(service, board)
    path = tmp_path / "no-header.csv"
    path.write_text(content)
    result = service.cli("import", str(path), "--board", board)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"ranked: {path}: {message}")
    assert entries(service, board) == []


def test_import_to_a_missing_board_reads_nothing(service: RunningService, tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("member,score\na,1\n")
    result = service.cli("import", str(path), "--board", "no-such-board")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "ranked: 404 there is no board 'no-such-board' (field: board)\n"


def test_import_says_when_there_is_no_service(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("member,score\na,1\n")
    url = f"http://127.0.0.1:{free_port()}"
    result = RunningService(url, "", tmp_path).cli("import", str(path), "--board", "b")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"ranked: no service at {url} (start it with `ranked serve`)\n"


def test_import_with_a_read_key_is_the_403_line(
    service: RunningService, board: str, tmp_path: Path
) -> None:
    create(service, board)
    with KeyStore(service.data_dir) as keys:
        read_key = keys.create(Scope.READ)[1]
    path = tmp_path / "s.csv"
    path.write_text("member,score\na,1\n")
    result = service.cli("import", str(path), "--board", board, key=read_key)
    assert result.exit_code == 1
    assert result.stderr == (
        "ranked: 403 this operation needs a key of scope write (this one is read)\n"
    )
    assert entries(service, board) == []


def test_import_needs_a_format_it_can_tell(service: RunningService, tmp_path: Path) -> None:
    path = tmp_path / "scores.txt"
    path.write_text("member,score\n")
    result = service.cli("import", str(path), "--board", "b")
    assert result.exit_code == 2
    assert "give --format csv or jsonl" in result.stderr


# -- export -------------------------------------------------------------------------------


def _fill(service: RunningService, board: str, count: int, tmp_path: Path) -> None:
    path = tmp_path / f"{board}.csv"
    with path.open("w") as file:
        file.write("member,score\n")
        for i in range(count):
            file.write(f"member {i:05d},{(i * 7919) % 1000 + i / 8}\n")
    result = service.cli("import", str(path), "--board", board, "--batch", "300")
    assert result.exit_code == 0, result.output
    assert _summary(result.stdout)["accepted"] == count


def test_export_csv_is_the_board(service: RunningService, board: str, tmp_path: Path) -> None:
    create(service, board)
    _fill(service, board, 40, tmp_path)
    with service.api() as api:
        api.post(f"/v1/boards/{board}/scores", json={"member": "q\"u,o'te é", "score": 1e300})
    result = service.cli("export", "--board", board)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "member,score,rank"
    assert lines[1] == '"q""u,o\'te é",1e+300,1'
    rows = [(m, float(s), int(r)) for m, s, r in csv.reader(lines[1:])]
    assert rows == entries(service, board)
    assert result.stderr == f"exported 41 entries of {board} (window all) to standard output\n"


def test_export_jsonl_is_the_board(service: RunningService, board: str, tmp_path: Path) -> None:
    create(service, board)
    _fill(service, board, 40, tmp_path)
    output = tmp_path / "out.jsonl"
    result = service.cli("export", "--board", board, "--output", str(output))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert [(r["member"], r["score"], r["rank"]) for r in rows] == entries(service, board)
    assert not list(tmp_path.glob("*.part"))


def test_export_pages_through_a_big_board(
    service: RunningService, board: str, tmp_path: Path
) -> None:
    """2,500 entries on a board whose reads return at most 300: nine pages."""
    create(service, board, max_page_size=300)
    _fill(service, board, 2500, tmp_path)
    output = tmp_path / "big.csv"
    result = service.cli("export", "--board", board, "-o", str(output), "--format", "csv")
    assert result.exit_code == 0, result.output
    lines = output.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2501
    exported = [(m, float(s), int(r)) for m, s, r in (line.rsplit(",", 2) for line in lines[1:])]
    assert exported == entries(service, board)
    assert [rank for _m, _s, rank in exported] == list(range(1, 2501))
    assert len({member for member, _s, _r in exported}) == 2500


def test_export_then_import_gives_the_same_board(
    service: RunningService, board: str, tmp_path: Path
) -> None:
    create(service, board)
    _fill(service, board, 120, tmp_path)
    copy = board + "-copy"
    create(service, copy)
    for kind in ("csv", "jsonl"):
        output = tmp_path / f"round.{kind}"
        assert service.cli("export", "--board", board, "-o", str(output)).exit_code == 0
        result = service.cli("import", str(output), "--board", copy, "--operator", "set")
        assert result.exit_code == 0, result.output
        assert _summary(result.stdout) == {"rows read": 120, "accepted": 120, "rejected": 0}
        assert entries(service, copy) == entries(service, board)


def test_export_of_a_window(service: RunningService, board: str, tmp_path: Path) -> None:
    create(service, board, windows=["all", "daily"])
    _fill(service, board, 30, tmp_path)
    with service.api() as api:
        windows = api.post(
            f"/v1/boards/{board}/scores", json={"member": "late", "score": 5000}
        ).json()["windows"]
    daily = next(w["window"] for w in windows if w["window"] != "all")
    result = service.cli("export", "--board", board, "--window", daily, "--format", "jsonl")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["member"], r["score"], r["rank"]) for r in rows] == entries(
        service, board, window=daily
    )
    assert len(rows) == 31
    assert f"(window {daily})" in result.stderr


def test_export_of_a_window_the_board_does_not_keep_is_the_404_line(
    service: RunningService, board: str, tmp_path: Path
) -> None:
    create(service, board)
    output = tmp_path / "never.csv"
    result = service.cli("export", "--board", board, "--window", "m2026-03", "-o", str(output))
    assert result.exit_code == 1
    assert result.stderr == (
        f"ranked: 404 board {board!r} keeps no monthly windows (field: window)\n"
    )
    assert not output.exists()
    assert not list(tmp_path.glob("*.part"))


def test_export_of_an_empty_board(service: RunningService, board: str) -> None:
    create(service, board)
    result = service.cli("export", "--board", board)
    assert result.exit_code == 0
    assert result.stdout == "member,score,rank\n"
