"""docs/cli.md: every ``$ ranked ...`` example runs against a real service and prints
what the page says (``...`` stands for any text)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from .conftest import ranked_serve

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
FENCE = re.compile(r"^```(\S*)(?: (\S+))?\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _examples() -> list[tuple[str, str]]:
    """(command, expected output) of every console example, in the page's order;
    files shown as ```csv NAME blocks come back as ("<file NAME>", content)."""
    found: list[tuple[str, str]] = []
    for kind, name, body in FENCE.findall(DOC.read_text(encoding="utf-8")):
        if name:
            found.append((f"<file {name}>", body))
        if kind != "console":
            continue
        for chunk in re.split(r"^\$ ", body, flags=re.MULTILINE)[1:]:
            command, _, output = chunk.partition("\n")
            if command.startswith("ranked "):
                found.append((command, output))
    return found


def _pattern(expected: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in expected.split("...")), re.DOTALL)


def test_every_example_prints_what_the_page_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = _examples()
    assert len(examples) > 15
    monkeypatch.chdir(tmp_path)
    with ranked_serve(tmp_path / "data") as service:
        for command, expected in examples:
            if command.startswith("<file "):
                Path(command[6:-1]).write_text(expected, encoding="utf-8")
                continue
            result = service.cli(*shlex.split(command)[1:])
            assert _pattern(expected).fullmatch(result.output), (command, result.output)
            assert result.exit_code == (1 if expected.startswith("ranked: ") else 0), command
