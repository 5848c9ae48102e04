"""Writes the synchronous API from the asyncio one: ``<package>/_async/X.py`` -> ``_sync/X.py``.

The asyncio code is the source. unasync's token rules drop ``async`` and ``await`` and map
the asyncio names to their blocking twins (``__aenter__`` -> ``__enter__``,
``AsyncIterator`` -> ``Iterator``); :data:`NAMES` adds the project's own pairs
(``AsyncLeaderboard`` -> ``Leaderboard``, ``AsyncBackend`` -> ``Backend``, ...). The result is
put through ``ruff check --fix`` (import order) and ``ruff format``, and starts with a line
saying it is generated.

    python3 scripts/generate_sync.py           # write every _sync file
    python3 scripts/generate_sync.py --check   # exit 1 if any _sync file is not current
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Final

import tokenize_rt
import unasync

ROOT: Final = Path(__file__).resolve().parent.parent
SOURCE: Final = ROOT / "src" / "ranked"

NAMES: Final = {
    "AsyncBackend": "Backend",
    "AsyncBound": "Bound",
    "AsyncLeaderboard": "Leaderboard",
    "AsyncQueue": "Queue",
    "AsyncShardedQueue": "ShardedQueue",
    "AsyncRateLimiter": "RateLimiter",
    "AsyncRankWatcher": "RankWatcher",
    "AsyncMemoryBackend": "MemoryBackend",
    "AsyncBoardJournal": "BoardJournal",
    "AsyncAppender": "Appender",
    "AsyncGuard": "Guard",
    "validate_later": "validate_now",
    "acall_validator": "call_validator",
    "apost_webhook": "post_webhook",
    "wait_tasks": "wait_tasks_now",
    "restore_later": "restore_now",
    "off_loop": "in_line",
    "lane_for": "blocking_lane_for",
    "_async": "_sync",
    "aclose": "close",
    "open_async_backend": "open_backend",
    "open_async_scratch_backend": "open_scratch_backend",
    "run_async": "run_sync",
    "asyncio": "time",
    "WAIT_IN_TASK": "WAIT_IN_THREAD",
}
"""The project's asyncio names and their blocking twins (``asyncio.sleep`` -> ``time.sleep``)."""

_RULE: Final = unasync.Rule("/_async/", "/_sync/", additional_replacements=NAMES)


def header(source: Path) -> str:
    return (
        f"# Generated from {source.relative_to(SOURCE.parent).as_posix()} by "
        "scripts/generate_sync.py: do not edit.\n"
    )


def _ruff(arguments: list[str], text: str, name: str) -> str:
    done = subprocess.run(
        ["ruff", *arguments, "--stdin-filename", name, "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if done.returncode not in (0, 1) or (done.returncode == 1 and not done.stdout):
        raise SystemExit(f"ruff {' '.join(arguments)} failed on {name}:\n{done.stderr}")
    return done.stdout


def generated(source: Path) -> str:
    """The synchronous text of one asyncio module."""
    tokens = tokenize_rt.src_to_tokens(source.read_text(encoding="utf-8"))
    text = tokenize_rt.tokens_to_src(list(_RULE._unasync_tokens(tokens)))
    target = str(target_of(source))
    text = _ruff(["check", "--fix-only", "--quiet", "--exit-zero"], header(source) + text, target)
    return _ruff(["format", "--quiet"], text, target)


def target_of(source: Path) -> Path:
    return source.parent.parent / "_sync" / source.name


def sources() -> list[Path]:
    return sorted(SOURCE.rglob("_async/*.py"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    check = parser.parse_args().check
    stale = []
    for source in sources():
        target, text = target_of(source), generated(source)
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            continue
        stale.append(target)
        if not check:
            target.parent.mkdir(exist_ok=True)
            target.write_text(text, encoding="utf-8")
    for target in stale:
        verb = "stale" if check else "wrote"
        print(f"{verb}: {target.relative_to(ROOT)}", file=sys.stderr if check else sys.stdout)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
