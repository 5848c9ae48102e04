"""Which SortedSet ``ranked`` loads: the C engine by default, the twin with RANKED_PUREPYTHON=1.

Each case runs in a fresh interpreter, because the choice is made once, at import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, ranked
from ranked.engine import skiplist
cls = ranked.SortedSet
print(json.dumps({
    "implementation": ranked.IMPLEMENTATION,
    "module": cls.__module__,
    "is_twin": cls is skiplist.SortedSet,
    "works": list(cls({"b": 2, "a": 1}).items()) == [("a", 1.0), ("b", 2.0)],
}))
"""


def probe(flag: str | None) -> dict[str, object]:
    env = dict(os.environ)
    env.pop("RANKED_PUREPYTHON", None)
    if flag is not None:
        env["RANKED_PUREPYTHON"] = flag
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("flag", ["1", "yes"])
def test_env_switch_forces_the_pure_python_twin(flag: str) -> None:
    result = probe(flag)
    assert result == {
        "implementation": "python",
        "module": "ranked.engine.skiplist",
        "is_twin": True,
        "works": True,
    }


@pytest.mark.parametrize("flag", [None, "", "0"])
def test_c_engine_is_the_default(flag: str | None) -> None:
    result = probe(flag)
    assert result == {
        "implementation": "c",
        "module": "ranked.engine._zset",
        "is_twin": False,
        "works": True,
    }, "the C engine did not load: build it (pip install -e . --no-build-isolation)"
