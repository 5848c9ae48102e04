"""``ranked serve`` settles Python's cyclic collector once the boards are restored (a hook
among the service's start hooks): what startup built leaves the collector's generations
and later collections run less often (docs/service.md, "Choices made here")."""

from __future__ import annotations

import asyncio
import gc

from ranked.cli import serve


def test_the_collector_is_settled() -> None:
    before = gc.get_threshold()
    startup = [[index] for index in range(1000)]  # tracked objects that live on
    frozen = gc.get_freeze_count()
    try:
        asyncio.run(serve._settle_collector())
        assert gc.get_threshold() == serve._COLLECTOR_THRESHOLDS
        assert gc.get_freeze_count() >= frozen + len(startup)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
