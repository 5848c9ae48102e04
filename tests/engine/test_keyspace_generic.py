"""Keyspace basics: dispatch, arity, TTLs with an injected clock, expiry, KEYS/SCAN, typed API."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ranked import Keyspace, ResponseError, SortedSet
from ranked.engine.commands import COMMAND_TABLE
from ranked.engine.keyspace import ACTIVE_EXPIRE_DELETES

SEMANTICS = Path(__file__).resolve().parents[2] / "docs" / "semantics.md"


class FakeClock:
    """A settable clock in seconds."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ks(clock: FakeClock) -> Keyspace:
    return Keyspace(clock=clock)


def listed(reply: object) -> list[Any]:
    """An array reply, checked and typed for sorting/indexing."""
    assert isinstance(reply, list)
    return reply


def error_of(ks: Keyspace, *args: object) -> str:
    with pytest.raises(ResponseError) as caught:
        ks.execute(*args)  # type: ignore[arg-type]
    return str(caught.value)


def test_arguments_are_encoded_like_redis_py(ks: Keyspace) -> None:
    ks.execute("SET", "k", 1.5)
    assert ks.execute("GET", b"k") == b"1.5"
    ks.execute("SET", "k", 10**20)
    assert ks.execute("GET", "k") == b"100000000000000000000"
    ks.execute("SET", "k", "é")
    assert ks.execute("GET", "k") == "é".encode()
    with pytest.raises(TypeError):
        ks.execute("SET", "k", True)
    with pytest.raises(TypeError):
        ks.execute("SET", "k", None)  # type: ignore[arg-type]


def test_names_are_case_insensitive_and_status_replies_are_bytes(ks: Keyspace) -> None:
    assert ks.execute("sEt", "k", "v") == b"OK"
    assert ks.execute("TYPE", "k") == b"string"
    assert ks.execute("type", "nokey") == b"none"


def test_unknown_command_text(ks: Keyspace) -> None:
    assert error_of(ks, "foo") == "ERR unknown command 'foo', with args beginning with: "
    assert (
        error_of(ks, "foo", "bar", "x\ny", "z\x00w")
        == "ERR unknown command 'foo', with args beginning with: 'bar' 'x y' 'z' "
    )
    long = error_of(ks, "foo", "a" * 100, "b" * 100, "c")
    assert long.endswith("'" + "a" * 100 + "' '" + "b" * 25 + "' ")


def test_arity_errors_use_the_command_table(ks: Keyspace) -> None:
    assert error_of(ks, "GET") == "ERR wrong number of arguments for 'get' command"
    assert error_of(ks, "ZADD", "k", "1") == "ERR wrong number of arguments for 'zadd' command"
    assert error_of(ks, "DBSIZE", "x") == "ERR wrong number of arguments for 'dbsize' command"
    assert error_of(ks, "ZRANK", "k", "a", "WITHSCORE").startswith("ERR wrong number")


def test_documented_commands_are_the_command_table() -> None:
    listed = SEMANTICS.read_text().split("Commands: ", 1)[1].split("Not provided:", 1)[0]
    documented = set(re.findall(r"\b[A-Z]{2,}\b", listed))
    assert documented == {command.name.upper() for command in COMMAND_TABLE.values()}
    assert {"BZPOPMIN", "BZPOPMAX", "BZMPOP"} <= documented


def test_del_exists_count_like_redis(ks: Keyspace) -> None:
    ks.execute("SET", "a", "1")
    ks.execute("SADD", "b", "x")
    assert ks.execute("EXISTS", "a", "a", "nokey", "b") == 3
    assert ks.execute("DEL", "a", "a", "nokey", "b") == 2
    assert ks.execute("DBSIZE") == 0


def test_expire_ttl_and_lazy_expiry(ks: Keyspace, clock: FakeClock) -> None:
    ks.execute("SET", "k", "v")
    assert ks.execute("TTL", "k") == -1
    assert ks.execute("EXPIRE", "k", 10) == 1
    assert ks.execute("TTL", "k") == 10
    assert ks.execute("PTTL", "k") == 10_000
    clock.now += 9.4
    assert ks.execute("TTL", "k") == 1  # rounded like Redis: (ms + 500) / 1000
    clock.now += 0.6
    assert ks.execute("PTTL", "k") == 0  # deadline reached but not passed: still there
    clock.now += 0.001
    assert ks.execute("GET", "k") is None
    assert ks.execute("TTL", "k") == -2
    assert ks.execute("EXISTS", "k") == 0


def test_expire_options(ks: Keyspace) -> None:
    ks.execute("SET", "k", "v")
    assert ks.execute("EXPIRE", "k", 100, "XX") == 0
    assert ks.execute("EXPIRE", "k", 100, "GT") == 0  # no TTL counts as infinite
    assert ks.execute("EXPIRE", "k", 100, "LT") == 1
    assert ks.execute("EXPIRE", "k", 200, "GT") == 1
    assert ks.execute("EXPIRE", "k", 300, "LT") == 0
    assert ks.execute("EXPIRE", "k", 10, "NX") == 0
    assert ks.execute("EXPIRE", "k", 50, "xx", "lt") == 1
    assert ks.execute("TTL", "k") == 50
    assert ks.execute("PERSIST", "k") == 1
    assert ks.execute("PERSIST", "k") == 0
    assert ks.execute("EXPIRE", "nokey", 10) == 0
    incompatible = "ERR NX and XX, GT or LT options at the same time are not compatible"
    assert error_of(ks, "EXPIRE", "k", 1, "NX", "GT") == incompatible
    assert error_of(ks, "EXPIRE", "k", 1, "GT", "LT") == (
        "ERR GT and LT options at the same time are not compatible"
    )
    assert error_of(ks, "EXPIRE", "k", 1, "foo") == "ERR Unsupported option foo"
    assert error_of(ks, "EXPIRE", "k", "x", "foo") == "ERR Unsupported option foo"
    assert error_of(ks, "EXPIRE", "k", "x") == "ERR value is not an integer or out of range"


def test_expire_overflow_and_past_deadlines(ks: Keyspace, clock: FakeClock) -> None:
    ks.execute("SET", "k", "v")
    assert error_of(ks, "EXPIRE", "k", 9223372036854775) == (
        "ERR invalid expire time in 'expire' command"
    )
    assert error_of(ks, "PEXPIRE", "k", 2**63 - 1) == "ERR invalid expire time in 'pexpire' command"
    assert ks.execute("PEXPIREAT", "k", 2**63 - 1) == 1
    assert ks.execute("EXPIRE", "k", -5) == 1
    assert ks.execute("EXISTS", "k") == 0
    ks.execute("SET", "k", "v")
    assert ks.execute("EXPIREAT", "k", int(clock.now)) == 1  # already past: deleted now
    assert ks.execute("DBSIZE") == 0


def test_set_options(ks: Keyspace, clock: FakeClock) -> None:
    assert ks.execute("SET", "k", "v", "NX") == b"OK"
    assert ks.execute("SET", "k", "w", "NX") is None
    assert ks.execute("SET", "k", "w", "NX", "GET") == b"v"
    assert ks.execute("SET", "k", "w", "XX", "GET") == b"v"
    assert ks.execute("SET", "n", "w", "XX", "GET") is None
    assert ks.execute("EXISTS", "n") == 0
    assert ks.execute("SET", "k", "v", "EX", 10, "EX", 20) == b"OK"
    assert ks.execute("TTL", "k") == 20
    assert ks.execute("SET", "k", "v", "KEEPTTL") == b"OK"
    assert ks.execute("TTL", "k") == 20
    assert ks.execute("SET", "k", "v") == b"OK"
    assert ks.execute("TTL", "k") == -1
    assert ks.execute("SET", "k", "v", "PXAT", int(clock.now * 1000) + 1500) == b"OK"
    assert ks.execute("PTTL", "k") == 1500
    assert ks.execute("SET", "k", "v", "PXAT", 1) == b"OK"
    assert ks.execute("EXISTS", "k") == 0
    for bad in (["NX", "XX"], ["EX", 1, "PX", 1], ["EX", 1, "KEEPTTL"], ["EX"], ["foo"]):
        assert error_of(ks, "SET", "k", "v", *bad) == "ERR syntax error"
    assert error_of(ks, "SET", "k", "v", "foo", "EX", "x") == "ERR syntax error"
    assert error_of(ks, "SET", "k", "v", "EX", "x") == "ERR value is not an integer or out of range"
    for bad_ttl in (["EX", 0], ["EX", -1], ["PX", 2**63 - 1], ["EXAT", 0]):
        assert error_of(ks, "SET", "k", "v", *bad_ttl) == (
            "ERR invalid expire time in 'set' command"
        )
    ks.execute("ZADD", "z", 1, "a")
    wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value"
    assert error_of(ks, "SET", "z", "v", "NX", "GET") == wrongtype
    assert ks.execute("SET", "z", "v", "XX") == b"OK"
    assert ks.execute("GET", "z") == b"v"


def test_active_expiry_is_bounded_per_call(ks: Keyspace, clock: FakeClock) -> None:
    for index in range(20):
        ks.execute("SET", f"k{index}", "v", "PX", 100)
    ks.execute("SET", "stay", "v")
    clock.now += 1
    before = len(ks._values)
    ks.execute("GET", "stay")
    assert before - len(ks._values) == ACTIVE_EXPIRE_DELETES
    assert ks.expire_pending(3) == 3
    assert ks.expire_pending() == 20 - ACTIVE_EXPIRE_DELETES - 3
    assert ks.execute("DBSIZE") == 1


def test_stale_heap_entries_are_skipped(ks: Keyspace, clock: FakeClock) -> None:
    ks.execute("SET", "k", "v", "PX", 100)
    ks.execute("PEXPIRE", "k", 10_000)
    clock.now += 1
    assert ks.expire_pending() == 0
    assert ks.execute("EXISTS", "k") == 1
    for _ in range(500):  # rewriting a deadline many times keeps the heap bounded
        ks.execute("PEXPIRE", "k", 10_000)
    assert len(ks._heap) <= 2 * len(ks._deadlines) + 64


def test_expired_keys_are_never_reported(ks: Keyspace, clock: FakeClock) -> None:
    ks.execute("SET", "a", "v", "PX", 10)
    ks.execute("SET", "b", "v")
    clock.now += 1
    assert ks._values.keys() >= {b"a", b"b"}
    assert ks.execute("KEYS", "*") == [b"b"]
    assert ks.execute("DBSIZE") == 1
    assert ks.execute("SCAN", 0) == [b"0", [b"b"]]
    assert ks.execute("EXISTS", "a") == 0


def test_keys_and_scan(ks: Keyspace) -> None:
    for name in ("hello", "hallo", "hxllo", "other"):
        ks.execute("SET", name, "v")
    ks.execute("ZADD", "zset", 1, "m")
    assert sorted(listed(ks.execute("KEYS", "h[ae]llo"))) == [b"hallo", b"hello"]
    reply = ks.execute("SCAN", 0, "MATCH", "h?llo", "COUNT", 100, "TYPE", "string")
    assert listed(reply)[0] == b"0"
    assert sorted(listed(reply)[1]) == [b"hallo", b"hello", b"hxllo"]
    assert ks.execute("SCAN", 0, "TYPE", "ZSET", "COUNT", 100) == [b"0", [b"zset"]]
    assert ks.execute("SCAN", 0, "TYPE", "nosuchtype") == [b"0", []]
    assert error_of(ks, "SCAN", "x") == "ERR invalid cursor"
    assert error_of(ks, "SCAN", 0, "COUNT", 0) == "ERR syntax error"
    assert error_of(ks, "SCAN", 0, "MATCH") == "ERR syntax error"


def test_scan_pages_cover_everything_despite_changes(ks: Keyspace) -> None:
    for index in range(300):
        ks.execute("SET", f"k{index}", "v")
    seen: set[bytes] = set()
    cursor: bytes = b"0"
    calls = 0
    while True:
        cursor, found = listed(ks.execute("SCAN", cursor, "COUNT", 7))
        assert isinstance(found, list)
        assert len(found) <= 8
        seen.update(found)
        calls += 1
        if calls == 10:
            ks.execute("DEL", *(f"k{index}" for index in range(200, 250)))
            for index in range(1000, 1100):
                ks.execute("SET", f"k{index}", "v")
        if cursor == b"0":
            break
    assert calls > 30
    kept = {f"k{index}".encode() for index in [*range(200), *range(250, 300)]}
    assert kept <= seen


def test_flushall(ks: Keyspace) -> None:
    ks.execute("SET", "a", "1", "EX", 100)
    assert ks.execute("FLUSHALL", "ASYNC") == b"OK"
    assert ks.execute("DBSIZE") == 0
    assert error_of(ks, "FLUSHALL", "foo") == "ERR syntax error"
    assert error_of(ks, "FLUSHALL", "SYNC", "ASYNC") == "ERR syntax error"


def test_typed_api(ks: Keyspace, clock: FakeClock) -> None:
    assert ks.zset("board") is None
    board = ks.zset("board", create=True)
    assert isinstance(board, SortedSet)
    board.add("ann", 10)
    assert ks.execute("ZSCORE", "board", "ann") == b"10"
    assert ks.zset(b"board") is board
    assert ks.set_deadline("board", ks.now_ms() + 5000)
    assert ks.deadline("board") == ks.now_ms() + 5000
    assert ks.execute("PTTL", "board") == 5000
    assert ks.set_deadline("board", None)
    assert ks.deadline("board") is None
    assert not ks.set_deadline("missing", 1)
    ks.execute("SET", "s", "v")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        ks.zset("s")
    assert ks.delete("s")
    assert not ks.delete("s")
    board.remove("ann")  # emptied behind the keyspace's back: gone on next access
    assert ks.execute("EXISTS", "board") == 0
    assert list(ks.iter_keys()) == []
    assert len(ks) == 0


def test_keys_with_prefix_finds_live_keys_under_the_prefix(clock: FakeClock) -> None:
    ks = Keyspace(clock=clock)
    ks.execute("SET", "ranked:{a}:x", "1")
    ks.execute("SET", "ranked:{ab}:y", "1")  # shares the prefix's bytes: found too
    ks.execute("ZADD", "ranked:{a}:z", 1, "m")
    ks.execute("SET", "ranked:{a}:gone", "1", "PX", 10)
    ks.execute("SET", "ranked:{b}:x", "1")
    ks.execute("SET", "ranked", "1")  # shorter than the prefix
    clock.now += 1  # the PX 10 key has expired
    assert ks.keys_with_prefix(b"ranked:{a}") == [b"ranked:{a}:x", b"ranked:{a}:z"]
    assert ks.keys_with_prefix(b"ranked:{a") == [b"ranked:{a}:x", b"ranked:{ab}:y", b"ranked:{a}:z"]
    assert ks.keys_with_prefix(b"nothing") == []
    assert len(ks.keys_with_prefix(b"")) == 5
    assert ks.get("ranked:{a}:gone") is None


def test_keys_with_prefix_twins_agree() -> None:
    from ranked.engine import skiplist

    native = pytest.importorskip("ranked.engine._zset")
    mapping: dict[Any, object] = {b"p:1": 1, b"q:1": 2, "p:str": 3, b"p": 4, b"p:2": 5, 7: 6}
    for scan in (native.keys_with_prefix, skiplist.keys_with_prefix):
        assert scan(mapping, b"p:") == [b"p:1", b"p:2"]
        assert scan(mapping, b"") == [b"p:1", b"q:1", b"p", b"p:2"]
        with pytest.raises(TypeError):
            scan(mapping, "p:")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            scan(list(mapping), b"p:")  # type: ignore[arg-type]
