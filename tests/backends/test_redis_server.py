"""Redis-specific behaviour of RedisBackend on a real redis-server: script cache loss,
server restarts, the server clock, all-or-nothing scripts and the dense companions."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import cast

import pytest
import redis

from ranked.backends.redis import RedisBackend
from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle, ranks
from ranked.errors import BackendUnavailableError, InvalidScoreError, OutOfRangeError, ResponseError
from ranked.leaderboard._requests import Composite, Operator, SubmitRequest, Target
from servers import RedisServer

from .conftest import Steps


def board(name: str = "arena", ttl_ms: int | None = None) -> Target:
    keys = BoardKeys(name)
    return Target(keys.window("all"), keys.dense("all"), keys.dense_counts("all"), ttl_ms)


def req(
    member: bytes,
    value: float,
    operator: Operator = "set",
    targets: tuple[Target, ...] | None = None,
    *,
    composite: Composite | None = None,
    keep: int | None = None,
) -> SubmitRequest:
    return SubmitRequest(
        member,
        value,
        operator,
        True,
        targets if targets is not None else (board(),),
        RankStyle.DENSE,
        0,
        composite=composite,
        keep=keep,
    )


@pytest.fixture
def backend(redis_server: RedisServer) -> Iterator[Steps]:
    made = Steps(RedisBackend.from_url(redis_server.url))
    made.client.flushall()
    yield made
    made.close()


def server_ms(client: redis.Redis) -> int:
    seconds, micros = client.time()
    return seconds * 1000 + micros // 1000


def companions(client: redis.Redis, target: Target) -> tuple[dict[float, int], list[float]]:
    counts = {float(k): int(v) for k, v in client.hgetall(target.counts_key).items()}
    pairs = cast(list[tuple[bytes, float]], client.zrange(target.dense_key, 0, -1, withscores=True))
    distinct = [score for _, score in pairs]
    return counts, distinct


def test_scripts_are_reloaded_after_script_flush(backend: Steps) -> None:
    backend.submit(req(b"a", 1))
    backend.client.script_flush()
    backend.client.config_resetstat()
    assert backend.submit(req(b"b", 2))[0].rank == 1
    stats = backend.client.info("commandstats")
    assert stats["cmdstat_eval"]["calls"] == 1  # one reload, then EVALSHA again
    backend.client.script_flush()
    assert backend.page(board(), 0, 5, True, RankStyle.COMPETITION) == [
        (b"b", 2.0, 1),
        (b"a", 1.0, 2),
    ]


def test_server_down_raises_unavailable_and_the_same_object_recovers() -> None:
    with RedisServer() as server:
        backend = Steps(RedisBackend.from_url(server.url))
        backend.submit(req(b"a", 1))
        server.stop()
        with pytest.raises(BackendUnavailableError) as raised:
            backend.submit(req(b"b", 2))
        assert isinstance(raised.value.__cause__, redis.ConnectionError)
        with pytest.raises(BackendUnavailableError):
            backend.page(board(), 0, 5, True, RankStyle.UNIQUE)
        with pytest.raises(BackendUnavailableError):
            backend.count(board())
        backend.now_ms()  # the clock keeps working on its last offset while down
        server.start()  # same port, empty data, empty script cache
        outcome = backend.submit(req(b"c", 3))[0]
        assert (outcome.rank, outcome.previous_score) == (1, None)
        assert backend.page(board(), 0, 5, True, RankStyle.UNIQUE) == [(b"c", 3.0, 1)]
        backend.close()
        backend.close()  # idempotent


def test_now_ms_is_the_server_clock_not_the_local_one(backend: Steps) -> None:
    skew_s = [-3600.0]
    skewed = Steps(RedisBackend.from_url(backend.url, clock=lambda: time.time() + skew_s[0]))
    assert abs(skewed.now_ms() - server_ms(backend.client)) < 1000
    # The offset is cached: a local clock jump shows until the offset is measured again...
    skew_s[0] = 7200.0
    assert skewed.now_ms() - server_ms(backend.client) > 10_000_000
    # ...which a connection error forces (the server may have restarted or moved).
    skewed._clock.invalidate()
    assert abs(skewed.now_ms() - server_ms(backend.client)) < 1000
    skewed.close()


def test_clock_is_measured_again_after_a_reconnect() -> None:
    with RedisServer() as server:
        skew_s = [0.0]
        backend = Steps(RedisBackend.from_url(server.url, clock=lambda: time.time() + skew_s[0]))
        assert abs(backend.now_ms() - server_ms(server.client())) < 1000
        skew_s[0] = 3600.0
        server.restart()
        assert backend.count(board()) == 0  # redis-py replaces the dead pooled connection
        assert abs(backend.now_ms() - server_ms(server.client())) < 1000
        backend.close()


def snapshot(client: redis.Redis, target: Target) -> tuple[object, ...]:
    """Everything a target holds: board and distinct scores with scores, counts hash."""
    return (
        client.zrange(target.key, 0, -1, withscores=True),
        client.zrange(target.dense_key, 0, -1, withscores=True),
        client.hgetall(target.counts_key),
    )


def test_a_failing_batch_undoes_the_requests_it_already_applied(backend: Steps) -> None:
    layout = Composite(score_bits=4, time_bits=8, epoch_ms=0, unit_ms=1000)
    target, other = board(ttl_ms=60_000), board("other")
    backend.submit_batch(
        [req(b"kept", 10, targets=(target,), composite=layout), req(b"x", 1, targets=(other,))]
    )
    before = (snapshot(backend.client, target), snapshot(backend.client, other))
    ttl_before = backend.client.pttl(target.key)
    batch = [
        req(b"new", 3, targets=(target, other), composite=layout),  # applied, then undone
        req(b"kept", 1, "incr", targets=(target,), composite=layout, keep=1),  # trims "new"
        req(b"kept", 9, "incr", targets=(target,), composite=layout),  # 11 + 9 > 15: error
    ]
    with pytest.raises(OutOfRangeError, match="outside"):
        backend.submit_batch(batch)
    assert (snapshot(backend.client, target), snapshot(backend.client, other)) == before
    assert 0 < backend.client.pttl(target.key) <= ttl_before  # TTLs are set only on success
    packed = 10 * 256 + 255.0
    assert companions(backend.client, target) == ({packed: 1}, [packed])


def test_incr_overflowing_to_infinity_is_refused(backend: Steps) -> None:
    backend.submit(req(b"a", 1e308))
    with pytest.raises(InvalidScoreError):
        backend.submit(req(b"a", 1e308, "incr"))
    assert backend.scores(board(), [b"a"]) == [1e308]


def test_a_key_of_another_type_gives_a_response_error(backend: Steps) -> None:
    backend.client.set(board().key, b"text")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        backend.submit(req(b"a", 1))


def test_companions_match_the_board_after_random_writes(backend: Steps) -> None:
    rng = random.Random(3)
    target = board()
    operators: tuple[Operator, ...] = ("set", "best", "incr", "decr")
    for _ in range(400):
        member = f"m{rng.randrange(40)}".encode()
        if rng.random() < 0.1:
            backend.remove([target], [member])
            continue
        value = float(rng.randrange(-5, 6))
        keep = 25 if rng.random() < 0.2 else None
        backend.submit(req(member, value, rng.choice(operators), (target,), keep=keep))
    board_scores = [s for _, s in backend.client.zrange(target.key, 0, -1, withscores=True)]
    counts, distinct = companions(backend.client, target)
    expected: dict[float, int] = {}
    for score in board_scores:
        expected[score] = expected.get(score, 0) + 1
    assert counts == expected
    assert distinct == sorted(expected)
    rows = backend.page(target, 0, 100, True, RankStyle.DENSE)
    assert [rank for _, _, rank in rows] == ranks([s for _, s, _ in rows], RankStyle.DENSE)


def test_scores_are_exact_float64_both_ways(backend: Steps) -> None:
    values = [0.1, 1 / 3, 2.0**53, -(2.0**53) + 1, 5e-324, 1.7976931348623157e308, -0.0]
    target = board()
    for index, value in enumerate(values):
        outcome = backend.submit(req(f"m{index}".encode(), value, targets=(target,)))[0]
        assert outcome.score == value
    stored = backend.scores(target, [f"m{i}".encode() for i in range(len(values))])
    assert stored == values
    assert str(stored[-1]) == "0.0"  # -0.0 is stored as 0.0


def test_ranks_of_more_members_than_one_zmscore_chunk(backend: Steps) -> None:
    # The script reads scores 1,000 members per ZMSCORE (unpack() is bounded in Lua).
    target = board()
    members = [b"p%05d" % i for i in range(2500)]
    backend.submit_batch([req(m, float(i % 7)) for i, m in enumerate(members[::2])])
    scores = [float(i % 7) for i in range(1250)]
    better = {s: sum(other > s for other in scores) for s in set(scores)}
    got = backend.ranks(target, members, True, RankStyle.COMPETITION)
    want = [None if i % 2 else (scores[i // 2], 1 + better[scores[i // 2]]) for i in range(2500)]
    assert got == want
