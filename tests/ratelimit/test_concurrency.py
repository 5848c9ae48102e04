"""Many clients hammering one identity admit exactly the quota: no lost update anywhere."""

from __future__ import annotations

import asyncio
import threading

import pytest

from ranked.backends.factory import open_backend
from ranked.ratelimit import ALGORITHMS, Algorithm, AsyncRateLimiter, Policy, RateLimiter

from .conftest import Env

THREADS = 8
TRIES = 25
LIMIT = 60


def policy(algorithm: Algorithm) -> Policy:
    return Policy(LIMIT, 3600, algorithm)  # refills too slowly to matter during the test


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_threads_admit_exactly_the_limit(env: Env, algorithm: Algorithm) -> None:
    admitted: list[int] = []
    start = threading.Barrier(THREADS)

    def worker() -> None:
        # each thread opens its own client (memory: the shared backend)
        backend = env.backend if env.kind == "memory" else open_backend(env.url)
        limiter = RateLimiter(backend, policy(algorithm))
        start.wait()
        count = sum(limiter.hit("shared").allowed for _ in range(TRIES))
        admitted.append(count)
        if backend is not env.backend:
            backend.close()

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(admitted) == LIMIT


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_async_tasks_admit_exactly_the_limit(env: Env, algorithm: Algorithm) -> None:
    async def scenario() -> int:
        backend = env.open_async()
        limiter = AsyncRateLimiter(backend, policy(algorithm))
        try:
            decisions = await asyncio.gather(
                *(limiter.hit("shared") for _ in range(THREADS * TRIES))
            )
        finally:
            await backend.close()
        return sum(d.allowed for d in decisions)

    assert asyncio.run(scenario()) == LIMIT
