"""Every operation of the Redis backend is ONE round trip, counted on the wire.

Counting server-side (``total_commands_processed``) would also count the commands a script
runs inside Redis, so the test puts a small TCP relay between redis-py and the server and
counts request turns: bytes from the client after the server has answered (or on a new
connection) start a new round trip. No Redis behaviour is faked: the relay only copies.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ranked.backends.generic import ByteRange
from ranked.backends.redis import RedisBackend
from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle
from ranked.leaderboard._requests import LexWrite, SubmitRequest, Target
from servers import RedisServer

from .conftest import Steps

HOST = "127.0.0.1"


class CountingRelay:
    """A loopback TCP relay to one Redis port that counts request turns per connection."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self._listener = socket.create_server((HOST, 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self.turns = 0
        self._closing = False
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._spawn(self._accept)

    def _spawn(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection((HOST, self.upstream_port))
            self._sockets += [client, server]
            waiting = [False]  # True once a request went up and its reply has not come back
            self._spawn(self._pump, client, server, waiting, True)
            self._spawn(self._pump, server, client, waiting, False)

    def _pump(
        self, source: socket.socket, sink: socket.socket, waiting: list[bool], upward: bool
    ) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                for end in (source, sink):
                    with contextlib.suppress(OSError):
                        end.shutdown(socket.SHUT_RDWR)
                return
            with self._lock:
                if upward and not waiting[0]:
                    self.turns += 1
                waiting[0] = upward
            sink.sendall(data)

    def close(self) -> None:
        self._closing = True
        self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()


@pytest.fixture
def relay(redis_server: RedisServer) -> Iterator[CountingRelay]:
    redis_server.client().flushall()
    relay = CountingRelay(redis_server.port)
    try:
        yield relay
    finally:
        relay.close()


def board(name: str = "trips") -> Target:
    keys = BoardKeys(name)
    return Target(keys.window("all"), keys.dense("all"), keys.dense_counts("all"), 60_000)


def test_each_operation_is_one_round_trip(relay: CountingRelay) -> None:
    backend = Steps(RedisBackend.from_url(f"redis://{HOST}:{relay.port}/0"))
    target = board()
    style = RankStyle.DENSE

    def submit(member: bytes, value: float) -> SubmitRequest:
        return SubmitRequest(member, value, "incr", True, (target,), style, 0, keep=100)

    keys = BoardKeys("trips")
    with_ties = Target(target.key, target.dense_key, target.counts_key, 60_000, keys.ties("all"))
    tied = SubmitRequest(b"t", 1.0, "set", True, (with_ties,), style, 0, keep=100, tie=b"7")
    lex = Target(keys.window("lex"), keys.dense("lex"), keys.dense_counts("lex"), 60_000)

    # Warm up: connect (HELLO/SETINFO), measure the clock, load every script once.
    backend.now_ms()
    warm: list[Callable[[], object]] = [
        lambda: backend.submit(submit(b"a", 5)),
        lambda: backend.submit_batch([submit(b"b", 3), submit(b"c", 3)]),
        lambda: backend.ranks(target, [b"a", b"x"], True, style),
        lambda: backend.page(target, 0, 9, True, style),
        lambda: backend.page_after(target, 3.0, b"c", 5, True, style),
        lambda: backend.around(target, b"b", 1, 1, True, style),
        lambda: backend.by_score(target, 0, 10, 0, 5, True, style),
        lambda: backend.count(target),
        lambda: backend.count(target, 1, 4),
        lambda: backend.percentile(target, b"a", True),
        lambda: backend.scores(target, [b"a", b"zz"]),
        lambda: backend.hash_set(b"rk:{trips}:data", {b"a": b"Ann"}, 60_000),
        lambda: backend.hash_get(b"rk:{trips}:data", [b"a"]),
        lambda: backend.hash_delete(b"rk:{trips}:data", [b"a"]),
        lambda: backend.set_add(b"rk:{trips}:friends:a", [b"b", b"c"]),
        lambda: backend.set_members(b"rk:{trips}:friends:a"),
        lambda: backend.set_remove(b"rk:{trips}:friends:a", [b"b"]),
        lambda: backend.expire_at([target.key], backend.now_ms() + 60_000),
        lambda: backend.remove([target], [b"c"]),
        lambda: backend.delete([b"rk:{trips}:data"]),
        lambda: backend.submit(tied),
        lambda: backend.remove([with_ties], [b"t"]),
        lambda: backend.lex_replace(lex, b"rk:{trips}:ties:lex", LexWrite(b"m", b"1:m", "best")),
        lambda: backend.lex_count(lex.key, ByteRange(None, b"2", False, True)),
        lambda: backend.lex_range(lex.key, ByteRange(b"0", None, False, False), 0, 5, True),
    ]
    for operation in warm:
        operation()
    for operation in warm:
        before = relay.turns
        operation()
        assert relay.turns - before == 1, operation
    before = relay.turns
    backend.now_ms()  # the clock offset is cached: no round trip
    assert relay.turns == before
    backend.close()


def test_a_forgotten_script_costs_one_extra_round_trip(relay: CountingRelay) -> None:
    backend = Steps(RedisBackend.from_url(f"redis://{HOST}:{relay.port}/0"))
    target = board()
    style = RankStyle.UNIQUE
    backend.page(target, 0, 1, True, style)
    backend.client.script_flush()
    before = relay.turns
    backend.page(target, 0, 1, True, style)  # EVALSHA -> NOSCRIPT, then EVAL
    assert relay.turns - before == 2
    before = relay.turns
    backend.page(target, 0, 1, True, style)
    assert relay.turns - before == 1
    backend.close()
