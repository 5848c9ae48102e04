"""The README's service session, run as written in a shell (the port changed to a free
one): every answer is the one the README shows."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from servers import free_port

README = Path(__file__).resolve().parents[2] / "README.md"
MARK = "@@ranked-readme-answer@@"


def _session() -> list[tuple[str, str]]:
    """The ``$ command`` lines of the README's service session and what each prints."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## The service in one minute.*?```console\n(.*?)```", text, re.S)
    assert block is not None
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return [(command, "\n".join(lines)) for command, lines in steps]


def test_the_readme_session_answers_as_shown(tmp_path: Path) -> None:
    port = free_port()
    steps = _session()
    assert len(steps) >= 8
    script = ["set -u"]
    for command, _ in steps:
        command = command.replace("127.0.0.1:8080", f"127.0.0.1:{port}")
        command = command.replace("ranked serve", f"ranked serve --port {port}")
        script += [command, f"echo {MARK}"]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    shell = subprocess.Popen(
        ["bash", "-c", "\n".join(script)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = shell.communicate(timeout=120)
    finally:
        os.killpg(shell.pid, signal.SIGTERM)  # the service the session started
    answers = out.split(f"{MARK}\n")[: len(steps)]
    for (command, shown), answer in zip(steps, answers, strict=True):
        assert answer.rstrip("\n") == shown, (command, (tmp_path / "serve.log").read_text())
