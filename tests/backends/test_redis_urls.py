"""open_backend / open_async_backend: every URL scheme, including a real unix socket."""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import redis.asyncio

from ranked.backends.cluster import AsyncClusterBackend, ClusterBackend, parse_cluster_url
from ranked.backends.factory import UnsupportedURLError, open_async_backend, open_backend
from ranked.backends.memory import AsyncMemoryBackend, MemoryBackend
from ranked.backends.redis import AsyncRedisBackend, RedisBackend
from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle
from ranked.errors import RankedError
from ranked.leaderboard._requests import SubmitRequest, Target
from servers import RedisCluster, RedisServer, require_binary

from .conftest import Steps


def board() -> Target:
    keys = BoardKeys("urls")
    return Target(keys.window("all"), keys.dense("all"), keys.dense_counts("all"))


def submit_and_read(backend: Steps) -> list[tuple[bytes, float, int]]:
    backend.submit(SubmitRequest(b"a", 2, "set", True, (board(),), RankStyle.UNIQUE, 0))
    rows: list[tuple[bytes, float, int]] = backend.page(board(), 0, 0, True, RankStyle.UNIQUE)
    return rows


@pytest.fixture
def unix_socket_server() -> Iterator[Path]:
    """A redis-server listening only on a unix socket (servers.py speaks TCP only)."""
    binary = require_binary("redis-server")
    with tempfile.TemporaryDirectory(prefix="ranked-unix-") as directory:
        path = Path(directory) / "redis.sock"
        args = [binary, "--port", "0", "--unixsocket", str(path), "--save", "", "--dir", directory]
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 15
            while not ping(path):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on unix socket {path}")
                time.sleep(0.05)
            yield path
        finally:
            process.terminate()
            process.wait(timeout=10)


def ping(path: Path) -> bool:
    if not path.exists():
        return False
    client = redis.Redis(unix_socket_path=str(path))
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False
    finally:
        client.close()


def test_memory_urls_open_the_embedded_backend() -> None:
    assert isinstance(open_backend("memory://"), MemoryBackend)
    assert isinstance(open_async_backend("MEMORY://"), AsyncMemoryBackend)


def test_redis_url_opens_a_working_backend(redis_server: RedisServer) -> None:
    redis_server.client().flushall()
    backend = Steps(open_backend(redis_server.url))
    assert isinstance(backend.backend, RedisBackend)
    kwargs = backend.client.connection_pool.connection_kwargs
    assert (kwargs["host"], kwargs["port"], kwargs["db"]) == ("127.0.0.1", redis_server.port, 0)
    assert backend.cross_slot is True
    assert submit_and_read(backend) == [(b"a", 2.0, 1)]
    backend.close()


def test_unix_url_reaches_a_server_on_a_unix_socket(unix_socket_server: Path) -> None:
    backend = Steps(open_backend(f"unix://{unix_socket_server}?db=0"))
    assert isinstance(backend.backend, RedisBackend)
    assert backend.client.connection_pool.connection_class is redis.UnixDomainSocketConnection
    assert submit_and_read(backend) == [(b"a", 2.0, 1)]
    backend.close()


def test_rediss_url_builds_a_tls_pool_without_connecting() -> None:
    backend = Steps(open_backend("rediss://user:secret@cache.example:6380/2"))
    assert isinstance(backend.backend, RedisBackend)
    pool = backend.client.connection_pool
    assert pool.connection_class is redis.SSLConnection
    kwargs = pool.connection_kwargs
    assert (kwargs["host"], kwargs["port"], kwargs["db"]) == ("cache.example", 6380, 2)
    assert (kwargs["username"], kwargs["password"]) == ("user", "secret")
    backend.close()
    async_backend = Steps(open_async_backend("rediss://cache.example:6380/0"))
    assert isinstance(async_backend.backend, AsyncRedisBackend)
    assert async_backend.client.connection_pool.connection_class is redis.asyncio.SSLConnection
    asyncio.run(async_backend.close())


def test_cluster_url_opens_the_cluster_backend(redis_cluster: RedisCluster) -> None:
    url = redis_cluster.url
    backend = Steps(open_backend(url))
    assert isinstance(backend.backend, ClusterBackend)
    assert backend.cross_slot is False
    assert isinstance(backend.now_ms(), int)
    backend.close()
    async_backend = Steps(open_async_backend(url))
    assert isinstance(async_backend.backend, AsyncClusterBackend)
    asyncio.run(async_backend.close())


def test_cluster_url_parsing() -> None:
    parsed = parse_cluster_url("redis+cluster://bob:p%40ss@10.0.0.1:7000,[::1]:7001,h:7002/0")
    assert parsed.nodes == [("10.0.0.1", 7000), ("::1", 7001), ("h", 7002)]
    assert (parsed.username, parsed.password, parsed.tls) == ("bob", "p@ss", False)
    assert parse_cluster_url("rediss+cluster://h:1").options() == {"ssl": True}


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost",
        "redis",
        "",
        "postgres://x/y",
        "redis+cluster://",
        "redis+cluster://host",
        "redis+cluster://host:notaport",
        "redis+cluster://host:7000/3",
        "redis+cluster://host:70000",
    ],
)
def test_bad_urls_raise_a_typed_error(url: str) -> None:
    for opener in (open_backend, open_async_backend):
        with pytest.raises(UnsupportedURLError) as raised:
            opener(url)
        assert isinstance(raised.value, RankedError)
        assert isinstance(raised.value, ValueError)


def test_unreachable_cluster_raises_unavailable() -> None:
    from ranked.errors import BackendUnavailableError
    from servers import free_port

    with pytest.raises(BackendUnavailableError):
        Steps(open_backend(f"redis+cluster://127.0.0.1:{free_port()}"))


def test_unreachable_server_fails_at_first_use_not_at_open() -> None:
    from ranked.errors import BackendUnavailableError
    from servers import free_port

    backend = Steps(open_backend(f"redis://127.0.0.1:{free_port()}/0"))
    with pytest.raises(BackendUnavailableError):
        backend.count(board())
    assert isinstance(backend.now_ms(), int)  # the clock falls back to its last offset
    backend.close()


def test_redis_server_fixture_url_scheme(redis_server: RedisServer) -> None:
    assert redis_server.url.startswith("redis://")
