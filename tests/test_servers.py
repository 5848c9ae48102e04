"""The real-server fixtures start, answer, restart on the same port, and stop."""

from __future__ import annotations

import socket

import pytest

import servers
from servers import RedisCluster, RedisServer, ServerError, free_port, require_binary


def _refuses(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


def test_session_server_answers(redis_server: RedisServer) -> None:
    client = redis_server.client()
    assert client.ping() is True
    assert client.config_get("save") == {"save": ""}
    assert client.config_get("appendonly") == {"appendonly": "no"}
    assert client.config_get("bind") == {"bind": "127.0.0.1"}
    client.close()


def test_session_cluster_answers(redis_cluster: RedisCluster) -> None:
    assert len(set(redis_cluster.ports)) == 3
    for index in range(3):
        info = redis_cluster.cluster_info(index)
        assert info["cluster_state"] == "ok"
        assert info["cluster_known_nodes"] == "3"
        assert info["cluster_size"] == "3"  # three masters serving slots
    client = redis_cluster.client()
    # Keys in different slots land on different masters, and all are reachable.
    for key in ("a", "b", "c", "{board}:1", "{board}:2"):
        client.set(key, key)
        assert client.get(key) == key.encode()
    client.close()


def test_server_restart_keeps_port_and_stop_frees_it() -> None:
    with RedisServer() as server:
        port = server.port
        client = server.client()
        client.set("k", "v")
        server.restart()
        assert server.port == port
        assert client.ping() is True
        assert client.get("k") is None  # no persistence: a restart starts empty
        client.close()
        server.stop()
        assert not server.running
        assert _refuses(port)
        server.start()
        assert server.port == port
        assert server.client().ping() is True
    assert not server.running
    assert _refuses(port)


def test_cluster_restart_keeps_ports_and_slots() -> None:
    with RedisCluster() as cluster:
        ports = cluster.ports
        client = cluster.client()
        client.set("before", "1")
        client.close()
        cluster.restart()
        assert cluster.ports == ports
        client = cluster.client()
        assert client.get("before") is None
        client.set("after", "2")
        assert client.get("after") == b"2"
        client.close()
    assert not cluster.running
    assert all(_refuses(port) for port in ports)


def test_start_retries_when_the_port_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    # Hold a port, make the first probe return it: the server must move to another port.
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        probes = iter([taken])
        real_free_port = servers.free_port
        monkeypatch.setattr(servers, "free_port", lambda: next(probes, None) or real_free_port())
        with RedisServer() as server:
            assert server.port != taken
            assert server.client().ping() is True


def test_missing_binary_is_a_clear_error() -> None:
    with pytest.raises(ServerError, match="not found on PATH"):
        require_binary("redis-server-that-does-not-exist")


def test_free_port_is_bindable() -> None:
    port = free_port()
    assert 0 < port < 65536
