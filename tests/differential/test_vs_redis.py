"""Differential test: ranked's Keyspace against a real redis-server, reply for reply.

Random streams (``RANKED_DIFF_SEEDS`` seeds x ``RANKED_DIFF_COMMANDS`` commands, 60 x 5000 by
default) and a table of hand-picked tricky cases run on both; replies and error texts must
match exactly, except where Redis itself is random or unordered (see ``diff_gen.Check``).
A failure prints the seed, the step and a shrunk reproduction; the totals are printed at the
end of the module.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from diff_cases import CASES, commands_of
from diff_check import TOTALS, Differential, KeyspaceSide, Mismatch, RedisSide

from servers import RedisServer

SEEDS = int(os.environ.get("RANKED_DIFF_SEEDS", "60"))
COMMANDS = int(os.environ.get("RANKED_DIFF_COMMANDS", "5000"))
SEED_BASE = int(os.environ.get("RANKED_DIFF_SEED_BASE", "0"))

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def differential(
    redis_server: RedisServer, request: pytest.FixtureRequest
) -> Iterator[Differential]:
    sides = (RedisSide(redis_server.port, db=0), RedisSide(redis_server.port, db=1))
    sides[0].call(b"FLUSHALL")
    version = redis_server.client().info("server")["redis_version"]
    try:
        yield Differential(sides[0], KeyspaceSide(), sides[1], KeyspaceSide())
    finally:
        for side in sides:
            side.close()
        _print_totals(request, version)


def _print_totals(request: pytest.FixtureRequest, version: str) -> None:
    skipped = TOTALS["skipped (lex range over mixed scores)"]
    line = (
        f"\ndifferential vs redis-server {version}: {TOTALS['commands']} commands compared, "
        f"{TOTALS['mismatches']} mismatches ({TOTALS['streams']} streams x {COMMANDS}, "
        f"{TOTALS['cases']} tricky cases; {skipped} lex ranges over mixed scores skipped)"
    )
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if capture is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():  # shown even though teardown output is captured
        print(line)


def _fail_with(mismatches: list[Mismatch]) -> None:
    shown = "\n\n".join(mismatch.report() for mismatch in mismatches[:5])
    more = f"\n\n... and {len(mismatches) - 5} more" if len(mismatches) > 5 else ""
    pytest.fail(f"{len(mismatches)} mismatch(es) against Redis:\n\n{shown}{more}", False)


@pytest.mark.parametrize("seed", range(SEED_BASE, SEED_BASE + SEEDS))
def test_random_stream(differential: Differential, seed: int) -> None:
    differential.left.call(b"FLUSHALL")
    # Every third stream bulk-loads, so keys cross the 128-member encoding switch.
    mismatches = differential.run_stream(seed, COMMANDS, big=seed % 3 == 0)
    TOTALS["streams"] += 1
    if mismatches:
        _fail_with(mismatches)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tricky_case(differential: Differential, name: str) -> None:
    differential.left.call(b"FLUSHALL")
    mismatches = differential.run(name, commands_of(CASES[name]), max_mismatches=50)
    TOTALS["cases"] += 1
    if mismatches:
        _fail_with(mismatches)
