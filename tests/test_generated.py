"""The synchronous API is generated from the asyncio one and is current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "ranked"


def test_every_generated_file_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_sync.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_every_sync_module_says_it_is_generated_and_has_its_source() -> None:
    for target in PACKAGE.rglob("_sync/*.py"):
        first = target.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# Generated from "), target
        assert (target.parent.parent / "_async" / target.name).exists(), target
