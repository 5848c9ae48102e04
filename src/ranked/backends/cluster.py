"""Redis Cluster backends (``redis+cluster://host:port[,host:port...]``).

The same operations, scripts and decoders as :mod:`.redis` (the classes here subclass
those), on ``redis.cluster.RedisCluster`` and its asyncio twin. Every key of one call must
lie in one hash slot: a board's keys share a ``{hash tag}``
(:class:`ranked.core.keys.BoardKeys`), so each operation stays one script on one node,
atomic and one round trip. A call whose keys span several slots is refused before
anything is sent, with :class:`CrossSlotError` (``cross_slot`` is False: features look
members up by key rather than combining keys of two slots).

Besides connection errors, ``CLUSTERDOWN`` and an unreachable slot map also raise
:class:`~ranked.errors.BackendUnavailableError`; redis-py refreshes its slot map by itself
after such an error, so the same backend object works once the cluster is back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar, Self, cast
from urllib.parse import unquote

import redis.asyncio.cluster
import redis.cluster
from redis.crc import key_slot
from redis.exceptions import (
    ClusterDownError,
    RedisClusterException,
    SlotNotCoveredError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..errors import BackendUnavailableError, CrossSlotError
from ._redis_ops import ServerClock
from .procedure import Call
from .redis import (
    AsyncRedisBackend,
    RedisBackend,
    client_options,
    connect_hook,
)

__all__ = [
    "AsyncClusterBackend",
    "ClusterBackend",
    "ClusterURL",
    "CrossSlotError",
    "parse_cluster_url",
]

SCHEMES = {"redis+cluster": False, "rediss+cluster": True}
"""Cluster URL schemes -> whether they use TLS."""


class ClusterURL:
    """A parsed ``redis+cluster://[user:password@]host:port[,host:port...][/0]`` URL."""

    __slots__ = ("nodes", "password", "tls", "username")

    def __init__(
        self, nodes: list[tuple[str, int]], username: str | None, password: str | None, tls: bool
    ) -> None:
        self.nodes = nodes
        self.username = username
        self.password = password
        self.tls = tls

    def options(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.username is not None:
            found["username"] = self.username
        if self.password is not None:
            found["password"] = self.password
        if self.tls:
            found["ssl"] = True
        return found


def _node(text: str, url: str) -> tuple[str, int]:
    if text.startswith("["):  # [IPv6]:port
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = text.rpartition(":")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{url!r}: {text!r} is not host:port")
    return host, int(port_text)


def parse_cluster_url(url: str) -> ClusterURL:
    """Split a cluster URL into startup nodes and credentials; ValueError when malformed.

    Only database 0 exists on a cluster, so the path may be empty, ``/`` or ``/0``;
    query options are not supported (pass keyword options instead).
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise ValueError(f"{url!r} is not a redis+cluster:// or rediss+cluster:// URL")
    location, _, path = rest.partition("/")
    if "?" in path or "?" in location or path not in ("", "0"):
        raise ValueError(f"{url!r}: a cluster URL takes no database or query, only /0")
    userinfo, at, hosts = location.rpartition("@")
    username = password = None
    if at:
        name, colon, secret = userinfo.partition(":")
        username = unquote(name) or None
        password = unquote(secret) if colon else None
    nodes = [_node(part, url) for part in hosts.split(",") if part]
    if not nodes:
        raise ValueError(f"{url!r} names no host:port")
    return ClusterURL(nodes, username, password, SCHEMES[scheme.lower()])


def _one_slot(call: Call[Any]) -> None:
    keys = call.keys
    if len(keys) > 1:
        slot = key_slot(keys[0])
        for key in keys:
            if key_slot(key) != slot:
                raise CrossSlotError(
                    f"keys of one call must share a hash slot: {keys[0]!r} is in slot {slot}, "
                    f"{key!r} in slot {key_slot(key)}; give related keys one {{hash tag}}"
                )


_CLUSTER_UNAVAILABLE: tuple[type[BaseException], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    ClusterDownError,
    SlotNotCoveredError,
    RedisClusterException,
)


class ClusterBackend(RedisBackend):
    """The :class:`~ranked.backends.base.Backend` on a Redis Cluster (sync)."""

    unavailable: ClassVar[tuple[type[BaseException], ...]] = _CLUSTER_UNAVAILABLE
    cross_slot = False

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Self:
        """A backend for ``redis+cluster://host:port[,host:port...]`` (``rediss+cluster``
        for TLS); ``options`` go to ``redis.cluster.RedisCluster``, which reads the slot
        map from a startup node at once (``BackendUnavailableError`` when none answers)."""
        clock = ServerClock(options.pop("clock", time.time))
        options.setdefault("redis_connect_func", connect_hook(clock, handshake=False))
        parsed = parse_cluster_url(url)
        # redis-py leaves ClusterNode.__init__ unannotated; its signature is (host, port, ...).
        make_node = cast(Callable[[str, int], redis.cluster.ClusterNode], redis.cluster.ClusterNode)
        nodes = [make_node(host, port) for host, port in parsed.nodes]
        kwargs = client_options({**parsed.options(), **options})
        try:  # the sync client reads the slot map right away
            client = redis.cluster.RedisCluster(startup_nodes=nodes, **kwargs)
        except _CLUSTER_UNAVAILABLE as error:
            raise BackendUnavailableError(f"{url}: {type(error).__name__}: {error}") from error
        return cls(client, url, server_clock=clock)

    def _check(self, call: Call[Any]) -> None:
        _one_slot(call)


class AsyncClusterBackend(AsyncRedisBackend):
    """The :class:`~ranked.backends.base.AsyncBackend` on a Redis Cluster (asyncio)."""

    unavailable: ClassVar[tuple[type[BaseException], ...]] = _CLUSTER_UNAVAILABLE
    cross_slot = False

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Self:
        """As :meth:`ClusterBackend.from_url`, with ``redis.asyncio.cluster.RedisCluster``."""
        # The asyncio cluster client takes no connect hook: its clock is measured again
        # after connection errors and every 30 s only.
        clock = ServerClock(options.pop("clock", time.time))
        parsed = parse_cluster_url(url)
        nodes = [redis.asyncio.cluster.ClusterNode(host, port) for host, port in parsed.nodes]
        kwargs = client_options({**parsed.options(), **options}, asynchronous=True)
        client = redis.asyncio.cluster.RedisCluster(startup_nodes=nodes, **kwargs)
        return cls(client, url, server_clock=clock)

    def _check(self, call: Call[Any]) -> None:
        _one_slot(call)
