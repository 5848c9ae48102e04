"""Sequenced steps (``ranked.backends.sequenced``): a write step applied only when the
index is exactly one event behind, recording the event's number atomically with its
effect; the same answers on memory, redis and cluster."""

from __future__ import annotations

from typing import Any

import pytest

from ranked.backends.generic import HASH_SET, SET_ADD
from ranked.backends.sequenced import APPLIED, READ_SEQ, RECORD_SEQ, Gap, sequenced
from ranked.core.keys import BoardKeys
from ranked.errors import RankedError, ResponseError

from .conftest import AsyncRunner, Steps, request, target

KEYS = BoardKeys("arena")
SEQ = KEYS.prefix + b":seq"


def bound(backend: Steps, step: Any) -> Any:
    return backend.backend.bind(step)


def test_applies_in_order_and_records(backend: Steps) -> None:
    from ranked.leaderboard._step_write import SUBMIT

    submit = bound(backend, sequenced(SUBMIT))
    read = bound(backend, READ_SEQ)
    assert read(SEQ) == 0
    first = submit(SEQ, 0, 1, request(b"ann", 5, "incr"))
    assert first[0].score == 5
    assert read(SEQ) == 1
    assert submit(SEQ, 0, 1, request(b"ann", 5, "incr")) is APPLIED  # a replay: nothing twice
    assert submit(SEQ, 2, 3, request(b"ann", 5, "incr")) == Gap(1)  # event 2 is missing
    assert backend.scores(target(), [b"ann"]) == [5.0]
    second = submit(SEQ, 1, 2, request(b"ann", 2, "incr"))
    assert second[0].score == 7
    assert read(SEQ) == 2


def test_plain_command_steps(backend: Steps) -> None:
    add = bound(backend, sequenced(SET_ADD))
    hset = bound(backend, sequenced(HASH_SET))
    key = KEYS.prefix + b":set"
    assert add(SEQ, 0, 1, key, [b"a", b"b"]) == 2
    assert add(SEQ, 0, 1, key, [b"c"]) is APPLIED
    hset(SEQ, 1, 2, KEYS.data, {b"f": b"v"}, None)
    assert bound(backend, READ_SEQ)(SEQ) == 2
    assert backend.set_members(key) == {b"a", b"b"}


def test_record_seq(backend: Steps) -> None:
    record = bound(backend, RECORD_SEQ)
    assert record(SEQ, 0, 1) is None
    assert record(SEQ, 0, 1) is APPLIED
    assert record(SEQ, 4, 5) == Gap(1)
    assert record(SEQ, 1, 2) is None
    assert bound(backend, READ_SEQ)(SEQ) == 2


def test_a_batch_is_applied_whole(backend: Steps) -> None:
    from ranked.leaderboard._step_write import SUBMIT_BATCH

    batch = bound(backend, sequenced(SUBMIT_BATCH))
    requests = [request(b"ann", 1, "incr"), request(b"bob", 2, "incr"), request(b"ann", 3, "incr")]
    outcomes = batch(SEQ, 0, 3, requests)
    assert [o[0].score for o in outcomes] == [1, 2, 4]
    assert batch(SEQ, 0, 3, requests) is APPLIED
    assert batch(SEQ, 1, 3, requests) is APPLIED  # a batch is never applied in part
    assert batch(SEQ, 4, 6, requests) == Gap(3)
    assert backend.scores(target(), [b"ann", b"bob"]) == [4.0, 2.0]


def test_a_refused_step_records_nothing(backend: Steps) -> None:
    from ranked.leaderboard._step_write import SUBMIT

    submit = bound(backend, sequenced(SUBMIT))
    backend.hash_set(KEYS.window("all"), {b"f": b"v"}, None)  # WRONGTYPE for the zset
    with pytest.raises(ResponseError):
        submit(SEQ, 0, 1, request(b"ann", 5, "incr"))
    assert bound(backend, READ_SEQ)(SEQ) == 0
    with pytest.raises(RankedError):
        submit(SEQ, 0, 1, request(b"ann", float("nan"), "incr"))
    assert bound(backend, READ_SEQ)(SEQ) == 0


def test_async_twin(async_backend: AsyncRunner) -> None:
    from ranked.leaderboard._step_write import SUBMIT

    async def scenario(backend: Steps) -> None:
        submit = backend.backend.bind(sequenced(SUBMIT))
        assert (await submit(SEQ, 0, 1, request(b"ann", 5, "incr")))[0].score == 5
        assert await submit(SEQ, 0, 1, request(b"ann", 5, "incr")) is APPLIED
        assert await backend.backend.bind(READ_SEQ)(SEQ) == 1

    async_backend.run(scenario)
