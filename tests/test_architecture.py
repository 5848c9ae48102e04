"""The architecture rule: engine and core <- backends <- features, and no feature reaches
past the seam (docs/architecture.md).

import-linter checks the layers and the forbidden imports over the package's Python
modules (contracts in pyproject.toml). Compiled modules are not in its graph, so the
features' own imports are also read here, and so are the type tests a feature could make
instead of an import.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "ranked"
FEATURES = ("leaderboard", "ratelimit", "queue", "notify", "guard", "journal", "service", "cli")
"""The features, and the surfaces above them: none reaches past the seam."""
CONCRETE = ("memory", "redis", "cluster", "native", "_redis_ops", "_wire")
BACKEND_CLASSES = {
    "MemoryBackend",
    "AsyncMemoryBackend",
    "RedisBackend",
    "AsyncRedisBackend",
    "ClusterBackend",
    "AsyncClusterBackend",
}
BACKEND_INSIDES = {"keyspace", "lock", "raw_values", "raw_deadlines"}
"""What the memory backend keeps to itself: its keyspace, its lock, the keyspace's tables."""


def _absolute(module: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.relative_to(PACKAGE.parent).with_suffix("").parts[: -node.level]
    return ".".join([*package, *([node.module] if node.module else [])])


def _reaches(path: Path) -> set[str]:
    """Concrete backend modules ``path`` imports, backend classes it names, and backend
    insides it touches (as ``.attribute``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = _absolute(path, node)
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Name) and node.id in BACKEND_CLASSES:
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in BACKEND_INSIDES:
            found.add(f".{node.attr}")
        for name in names:
            for concrete in CONCRETE:
                prefix = f"ranked.backends.{concrete}"
                if name == prefix or name.startswith(prefix + "."):
                    found.add(prefix)
    return found


def test_import_linter_contracts_hold() -> None:
    lint = shutil.which("lint-imports")
    if lint is None:
        pytest.fail("lint-imports is missing: install the test extras (import-linter)")
    done = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_feature_reaches_past_the_seam() -> None:
    reached = {}
    for feature in FEATURES:
        for path in sorted((PACKAGE / feature).rglob("*.py")):
            found = _reaches(path)
            if found:
                reached[path.relative_to(PACKAGE).as_posix()] = found
    assert reached == {}
