"""Open a backend from a URL: the one switch between embedded, Redis and Redis Cluster.

=================================================  ==========================================
URL                                                backend
=================================================  ==========================================
``memory://[name]``                                :class:`ranked.backends.memory.MemoryBackend`
``redis://[user:pass@]host[:port][/db]``           :class:`ranked.backends.redis.RedisBackend`
``rediss://...`` (TLS)                             :class:`~ranked.backends.redis.RedisBackend`
``unix:///path/to/redis.sock[?db=0]``              :class:`~ranked.backends.redis.RedisBackend`
``redis+cluster://host:port[,host:port...]``       :class:`ranked.backends.cluster.ClusterBackend`
``rediss+cluster://...`` (TLS)                     :class:`~ranked.backends.cluster.ClusterBackend`
=================================================  ==========================================

Backends are imported when first asked for, so ``memory://`` works without redis-py.
``memory://`` is the process's default store and ``memory://<name>`` a named one: every
backend opened on one URL in one process sees the same data, as clients of one server do.
Keyword options go to the backend: ``clock`` (a ``time.time``-like function) for memory
(it sets the clock of a store the call creates);
for Redis, redis-py client options plus ``clock`` (the local clock the server offset is
added to).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Final

from ..errors import UnsupportedURLError
from .base import AsyncBackend, Backend

__all__ = [
    "UnsupportedURLError",
    "open_async_backend",
    "open_async_scratch_backend",
    "open_backend",
    "open_scratch_backend",
    "scheme_of",
]

_REDIS = frozenset({"redis", "rediss", "unix"})
_CLUSTER = frozenset({"redis+cluster", "rediss+cluster"})
_MEMORY = frozenset({"memory"})
_CLASSES: Final = {
    "memory": ("MemoryBackend", "AsyncMemoryBackend"),
    "redis": ("RedisBackend", "AsyncRedisBackend"),
    "cluster": ("ClusterBackend", "AsyncClusterBackend"),
}
"""Each backend module's (blocking, asyncio) classes."""
_KNOWN = ", ".join(f"{name}://" for name in sorted(_MEMORY | _REDIS | _CLUSTER))


def scheme_of(url: str) -> str:
    """The URL's scheme, lower-cased; :class:`UnsupportedURLError` when unknown."""
    scheme, sep, _ = url.partition("://") if isinstance(url, str) else ("", "", "")
    scheme = scheme.lower()
    if not sep or scheme not in _MEMORY | _REDIS | _CLUSTER:
        raise UnsupportedURLError(f"unsupported backend URL {url!r}; expected one of: {_KNOWN}")
    return scheme


def open_backend(url: str, **options: Any) -> Backend:
    """The synchronous backend for ``url`` (see the module table). Nothing connects yet."""
    backend: Backend = _backend_class(url, blocking=True).from_url(url, **options)
    return backend


def open_async_backend(url: str, **options: Any) -> AsyncBackend:
    """The asyncio backend for ``url`` (see the module table). Nothing connects yet."""
    backend: AsyncBackend = _backend_class(url, blocking=False).from_url(url, **options)
    return backend


def open_scratch_backend(clock: Callable[[], float] | None = None) -> Backend:
    """A private in-process backend with an empty store of its own (``memory://``, shared
    with no URL, gone with its last handle): scratch space a feature builds a view in,
    such as a board as it stood at an instant. ``clock``: its clock (Unix seconds), which
    its TTLs count on."""
    backend: Backend = _backend_class("memory://", blocking=True)(clock=clock)
    return backend


def open_async_scratch_backend(clock: Callable[[], float] | None = None) -> AsyncBackend:
    """The asyncio twin of :func:`open_scratch_backend`."""
    backend: AsyncBackend = _backend_class("memory://", blocking=False)(clock=clock)
    return backend


def _backend_class(url: str, *, blocking: bool) -> Any:
    """The class serving ``url``'s scheme, its module imported now (a cluster URL is
    checked first)."""
    scheme = scheme_of(url)
    module = "memory" if scheme in _MEMORY else "redis" if scheme in _REDIS else "cluster"
    if module == "cluster":
        _check_cluster_url(url)
    blocking_name, asyncio_name = _CLASSES[module]
    loaded = importlib.import_module(f".{module}", __package__)
    return getattr(loaded, blocking_name if blocking else asyncio_name)


def _check_cluster_url(url: str) -> None:
    from .cluster import parse_cluster_url

    try:
        parse_cluster_url(url)
    except ValueError as error:
        raise UnsupportedURLError(str(error)) from error
