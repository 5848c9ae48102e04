"""Chooses the sorted-set implementation: the C engine, or its pure-Python twin.

The C module ``ranked.engine._zset`` is used when it is importable. Setting the
environment variable ``RANKED_PUREPYTHON=1`` (any value but ``""`` or ``"0"``)
before import forces the pure-Python reference in ``skiplist.py``; so does a
missing C build. ``IMPLEMENTATION`` says which one loaded (``"c"`` or ``"python"``).
"""

from __future__ import annotations

import os

__all__ = ["IMPLEMENTATION", "SortedSet", "keys_with_prefix"]

if os.environ.get("RANKED_PUREPYTHON", "") not in ("", "0"):
    from .skiplist import SortedSet, keys_with_prefix

    IMPLEMENTATION = "python"
else:
    try:
        from ._zset import SortedSet, keys_with_prefix

        IMPLEMENTATION = "c"
    except ImportError:  # pragma: no cover - only on a machine without a C build
        from .skiplist import SortedSet, keys_with_prefix

        IMPLEMENTATION = "python"
