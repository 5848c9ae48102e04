"""The ``impl`` fixture: every engine test runs once on each SortedSet implementation.

``c`` is the compiled ``ranked.engine._zset``; ``python`` is ``ranked.engine.skiplist``.
A C engine that cannot be imported makes its half of the suite FAIL (never skip): a
missing build must not look like a green run. Select one half with ``-k python`` / ``-k c``.
"""

from __future__ import annotations

import importlib
from typing import cast

import pytest

from ranked.engine import skiplist

Impl = type[skiplist.SortedSet]

IMPLEMENTATIONS = ("c", "python")


def load_implementation(name: str) -> Impl:
    """The SortedSet class of one implementation; a missing C build fails the test."""
    if name == "python":
        return skiplist.SortedSet
    try:
        module = importlib.import_module("ranked.engine._zset")
    except ImportError as error:
        pytest.fail(
            "the C engine ranked.engine._zset cannot be imported "
            f"({error}); build it with `pip install -e . --no-build-isolation` "
            "or `python setup.py build_ext --inplace`",
            pytrace=False,
        )
    # Both classes follow the same contract (_zset.pyi); type the C one like the twin.
    return cast(Impl, module.SortedSet)


@pytest.fixture(params=IMPLEMENTATIONS)
def impl(request: pytest.FixtureRequest) -> Impl:
    """The SortedSet class under test."""
    return load_implementation(cast(str, request.param))
