"""docs/guard.md: its example runs and prints what the page says."""

from __future__ import annotations

import doctest
from pathlib import Path

from ranked.backends.memory import MemoryBackend

DOC = Path(__file__).resolve().parents[2] / "docs" / "guard.md"


def test_guard_doc_example() -> None:
    MemoryBackend.from_url("memory://").flushall()
    result = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10
    assert result.failed == 0
