"""The README's examples run and print what the README says."""

from __future__ import annotations

import doctest
from pathlib import Path

from ranked.backends.memory import MemoryBackend

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples() -> None:
    # The README opens memory://, the process's default store: start it empty.
    MemoryBackend.from_url("memory://").flushall()
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 10
    assert result.failed == 0
