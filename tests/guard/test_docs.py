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


def test_the_score_text_vectors_of_the_signing_section() -> None:
    """Each ``x`` -> ``<score>`` pair the page gives is what the guard signs."""
    import re

    from ranked.guard import score_text

    text = " ".join(DOC.read_text().split())
    section = text[text.index("Test vectors") : text.index("checks them")]
    pairs = re.findall(r"`([^`]+)` -> `([^`]+)`", section)[1:]  # after "`x` -> `<score>`"
    assert len(pairs) == 8
    for given, written in pairs:
        assert score_text(float(eval(given))) == written, given  # the page's literals
