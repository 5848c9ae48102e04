"""docs/queue.md: every example runs and prints what the page says."""

from __future__ import annotations

import doctest
from pathlib import Path

from ranked.backends.memory import MemoryBackend

DOC = Path(__file__).resolve().parents[2] / "docs" / "queue.md"


def test_queue_doc_examples() -> None:
    # The page opens its queues on memory://, the process's default store: start it empty.
    MemoryBackend.from_url("memory://").flushall()
    result = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 30
    assert result.failed == 0
