"""ClusterBackend on a real 3-master Redis Cluster: slot routing, cross-slot refusals,
script reloads on every node, and recovery after the whole cluster restarts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import redis

from ranked.backends.cluster import AsyncClusterBackend, ClusterBackend, CrossSlotError
from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle
from ranked.errors import BackendUnavailableError
from ranked.leaderboard._requests import SubmitRequest, Target
from servers import RedisCluster

from .conftest import Steps


def url_of(cluster: RedisCluster) -> str:
    return cluster.url


def board(name: str) -> Target:
    keys = BoardKeys(name)
    return Target(keys.window("all"), keys.dense("all"), keys.dense_counts("all"), 60_000)


def req(member: bytes, value: float, *targets: Target) -> SubmitRequest:
    return SubmitRequest(member, value, "set", True, targets, RankStyle.DENSE, 0)


def flush(cluster: RedisCluster) -> None:
    for index in range(len(cluster.ports)):
        node = cluster.node_client(index)
        node.flushall()
        node.close()


@pytest.fixture
def backend(redis_cluster: RedisCluster) -> Iterator[Steps]:
    flush(redis_cluster)
    made = Steps(ClusterBackend.from_url(url_of(redis_cluster)))
    yield Steps(made)
    made.close()


def holders(cluster: RedisCluster, key: bytes) -> list[int]:
    """Indexes of the nodes that hold ``key``."""
    found = []
    for index in range(len(cluster.ports)):
        node: redis.Redis = cluster.node_client(index)
        if key in node.keys("*"):  # a node answers KEYS for its own slots only
            found.append(index)
        node.close()
    return found


def test_every_key_of_a_board_lands_on_the_node_of_its_slot(
    backend: Steps, redis_cluster: RedisCluster
) -> None:
    names = [f"board{i}" for i in range(12)]  # enough boards to use every node
    for name in names:
        backend.submit(req(b"a", 1, board(name)))
        backend.hash_set(BoardKeys(name).data, {b"a": b"Ann"}, None)
    used = set()
    for name in names:
        target, keys = board(name), BoardKeys(name)
        places = {tuple(holders(redis_cluster, key)) for key in (*key_list(target), keys.data)}
        assert len(places) == 1 and len(next(iter(places))) == 1
        used |= places
    assert len(used) == 3


def key_list(target: Target) -> tuple[bytes, bytes, bytes]:
    return target.key, target.dense_key, target.counts_key


def test_keys_of_several_slots_are_refused_before_anything_is_sent(
    backend: Steps, redis_cluster: RedisCluster
) -> None:
    one, two = board("one"), board("two")
    assert BoardKeys("one").slot != BoardKeys("two").slot
    with pytest.raises(CrossSlotError, match="hash slot"):
        backend.submit(req(b"a", 1, one, two))
    with pytest.raises(CrossSlotError):
        backend.remove([one, two], [b"a"])
    with pytest.raises(CrossSlotError):
        backend.delete([one.key, two.key])
    assert holders(redis_cluster, one.key) == []
    mixed = Target(one.key, two.dense_key, one.counts_key)
    with pytest.raises(CrossSlotError):
        backend.page(mixed, 0, 1, True, RankStyle.DENSE)
    assert isinstance(CrossSlotError("x"), ValueError)


def test_a_cluster_refuses_cross_slot_steps(backend: Steps) -> None:
    assert backend.cross_slot is False


def test_scripts_are_reloaded_on_every_node_after_script_flush(
    backend: Steps, redis_cluster: RedisCluster
) -> None:
    names = [f"b{i}" for i in range(12)]
    for name in names:
        backend.submit(req(b"a", 1, board(name)))
    for index in range(len(redis_cluster.ports)):
        node = redis_cluster.node_client(index)
        node.script_flush()
        node.close()
    for name in names:
        assert backend.submit(req(b"b", 2, board(name)))[0].rank == 1
        assert backend.page(board(name), 0, 1, True, RankStyle.DENSE)[0] == (b"b", 2.0, 1)


def test_cluster_restart_gives_unavailable_then_the_same_object_recovers() -> None:
    with RedisCluster() as cluster:
        backend = Steps(ClusterBackend.from_url(url_of(cluster)))
        target = board("restart")
        backend.submit(req(b"a", 1, target))
        cluster.stop()
        with pytest.raises(BackendUnavailableError):
            backend.submit(req(b"b", 2, target))
        cluster.restart()
        outcome = None
        for _ in range(50):  # the slot map may need a moment to settle after the restart
            try:
                outcome = backend.submit(req(b"c", 3, target))[0]
                break
            except BackendUnavailableError:
                asyncio.run(asyncio.sleep(0.1))
        assert outcome is not None and outcome.rank == 1
        backend.close()


def test_async_cluster_backend(redis_cluster: RedisCluster) -> None:
    flush(redis_cluster)

    async def scenario() -> None:
        backend = Steps(AsyncClusterBackend.from_url(url_of(redis_cluster)))
        try:
            await backend.connect()
            targets = [board(f"async{i}") for i in range(6)]
            await asyncio.gather(
                *(backend.submit(req(b"m%d" % n, n, t)) for t in targets for n in range(20))
            )
            for t in targets:
                assert await backend.count(t.key) == 20
                top = await backend.page(t, 0, 2, True, RankStyle.COMPETITION)
                assert top == [(b"m19", 19.0, 1), (b"m18", 18.0, 2), (b"m17", 17.0, 3)]
            with pytest.raises(CrossSlotError):
                await backend.remove(targets[:2], [b"m1"])
        finally:
            await backend.close()

    asyncio.run(scenario())
