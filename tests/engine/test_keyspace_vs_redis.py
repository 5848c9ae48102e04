"""Hand-picked command sequences run on a real redis-server and on Keyspace: same replies.

The server is started by the fixture on a free loopback port (redis-server must be
installed: the test fails, never skips, without it). Orders that Redis leaves to its
hash tables (KEYS, SMEMBERS, ZRANDMEMBER, SCAN) are compared as sorted lists.
"""

from __future__ import annotations

import shlex
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ranked import Keyspace, ResponseError
from ranked.engine.commands import COMMAND_TABLE

redis = pytest.importorskip("redis")  # a test dependency in pyproject; never missing in CI

pytestmark = pytest.mark.redis

LONG = "b" * 65
TALL = "z" * 65
UNORDERED = {"keys", "smembers", "zrandmember"}

SEQUENCES = {
    "t1": [
        "zadd z 1 a 2 b 3 c",
        "zadd z nx xx 1 a",
        "zadd z gt lt 1 a",
        "zadd z nx gt 1 a",
        "zadd z incr 1 a 2 b",
        "zadd z 1 a 2",
        "zadd z 1",
        "zadd z nx",
        "zadd z abc a",
        "set str x",
        "zadd str abc a",
        "zadd str 1 a",
        "zadd z NX 1 NX",
        "zrange z 0 -1 withscores",
        "zadd z 1 a 2 a",
        "zadd z CH 3 b 4 b",
        "zadd z CH 5 c 5 c",
        "zadd z GT 1 new",
        "zadd nokey XX 1 a",
        "zadd nokey XX incr 1 a",
        "exists nokey",
        "zadd z nx incr 1 a",
        "zadd z gt incr 1 newer",
        "zadd z gt incr -100 newer",
        "zadd z lt incr -100 newer",
        "zincrby z inf a",
        "zincrby z -inf a",
        "zscore z a",
        "zincrby z 1e308 b",
        "zincrby z 1e308 b",
        "zincrby z 1e308 b",
        "zadd z 0x10 hex",
        "zscore z hex",
        "zadd z 1e400 x",
        "zadd z 1e-400 x",
        "zadd z 1e-310 den",
        "zscore z den",
        "zrange z 0 -1 withscores",
        "zrangebyscore z (1 +inf withscores limit 1 2",
        "zrangebyscore z -inf +inf limit -1 2",
        "zrangebyscore z -inf +inf limit 0 -1",
        "zrevrangebyscore z +inf -inf withscores",
        "zrevrangebyscore z -inf +inf withscores",
        "zrange z +inf -inf byscore rev limit 1 3 withscores",
        "zrange z 0 -1 rev",
        "zrange z -2 -1 rev withscores",
        "zrange z 0 1 limit 0 -1",
        "zrange z 0 1 limit 1 -1",
        "zcount z ( (",
        'zcount z " 1" 5',
        "zcount nokey a b",
        "zcount str 1 2",
        "zrange str a b",
        "zrange str 0 1",
        "zlexcount z - +",
        "zlexcount z + -",
        "zadd l 0 a 0 b 0 c 0 d 0 e",
        "zrangebylex l [b (d",
        "zrangebylex l - + limit 1 2",
        "zrevrangebylex l + - limit 1 2",
        "zrevrangebylex l (d [a",
        "zrange l [e [a bylex rev",
        "zlexcount l [b [b",
        "zlexcount l (b [b",
        "zremrangebylex l [a [b",
        "zrange l 0 -1",
        "zremrangebyrank l 0 0",
        "zremrangebyscore l -inf +inf",
        "exists l",
        "zrank z a",
        "zrevrank z a",
        "zrank z nope",
        "zrank nokey a",
        "zmscore z a nope b",
        "zmscore nokey a b",
        "zcard z",
        "zcard nokey",
        "zpopmin z",
        "zpopmax z 2",
        "zpopmin z 0",
        "zpopmin z -1",
        "zpopmin z x",
        "zpopmin z 1 2",
        "zpopmin nokey 5",
        "zpopmin str 0",
        "zpopmin str",
        "zmpop 1 z min",
        "zmpop 2 nokey z max count 2",
        "zmpop 0 z min",
        "zmpop x z min",
        "zmpop 2 z min",
        "zmpop 1 z foo",
        "zmpop 1 z min count 0",
        "zmpop 1 z min count 1 count 1",
        "zmpop 1 nokey min",
        "zmpop 2 str z min",
        "zmpop 2 z str min",
    ],
    "t2": [
        "zadd a 1 x 2 y 3 z",
        "zadd b 10 y 20 z 30 w",
        "sadd s x w q",
        "set str v",
        "zunion 2 a b withscores",
        "zunion 2 a b weights 2 0.5 withscores",
        "zunion 2 a b weights 2 withscores",
        "zunion 2 a b weights 2 nan",
        "zunion 2 a b weights 2 abc",
        "zunion 2 a b aggregate max withscores",
        "zunion 2 a b aggregate foo",
        "zunion 2 a b aggregate",
        "zunion 3 a b s withscores",
        "zinter 3 a b s withscores",
        "zinter 2 a b aggregate min withscores",
        "zinter 2 a nokey",
        "zunion 0 a",
        "zunion -1 a",
        "zunion x a",
        "zunion 3 a b",
        "zunion 2 a str",
        "zunion 2 a str foo",
        "zdiff 2 a b withscores",
        "zdiff 2 a b weights 1 1",
        "zdiff 1 a aggregate sum",
        "zunionstore d 2 a b",
        "zrange d 0 -1 withscores",
        "zunionstore d 2 a b withscores",
        "zinterstore d 2 a nokey",
        "exists d",
        "zdiffstore d 2 a a",
        "zinterstore d 2 a b weights 1 2 aggregate max",
        "zrange d 0 -1 withscores",
        "set d str",
        "expire d 100",
        "zunionstore d 1 a",
        "ttl d",
        "type d",
        "zunionstore a 2 a b",
        "zrange a 0 -1 withscores",
        "zintercard 2 a b",
        "zintercard 2 a b limit 1",
        "zintercard 2 a b limit 0",
        "zintercard 2 a b limit -1",
        "zintercard 2 a b limit x",
        "zintercard 2 a b withscores",
        "zintercard 2 a b aggregate sum",
        "zintercard 0 a",
        "zinterstore d 0 a",
        "zdiffstore d 0 a",
        "zinter 0 a",
        "zdiff 0 a",
        "zadd inf 1 inf",
        "zadd ninf 1 -inf",
        "zadd inf2 inf z",
        "zadd ninf2 -inf z",
        "zunion 2 inf2 ninf2 withscores",
        "zunion 2 inf2 ninf2 weights 0 1 withscores",
        "zinter 2 inf2 ninf2 withscores",
        "zunion 2 a b weights 1 1 weights 2 2 withscores",
        "zunion 1 a withscores withscores",
        "zrangestore d a 0 -1",
        "zrange d 0 -1 withscores",
        "zrangestore d a 0 -1 withscores",
        "zrangestore d a (5 +inf byscore limit 1 1",
        "zrange d 0 -1 withscores",
        "zrangestore d a 5 1",
        "exists d",
        "zrangestore d nokey 0 -1",
        "zrangestore d str 0 -1",
        "zrangestore d a [a [z bylex",
        "zrangestore d a x y",
        "zrandmember nokey",
        "zrandmember nokey 5",
        "zrandmember str",
        "zrandmember str 0",
        "zrandmember a 0",
        "zrandmember a 100",
        "zrandmember a 1 foo",
        "zrandmember a 1 withscores foo",
        "zrandmember a x",
        "zrandmember a -9223372036854775808",
        "zrandmember a 9223372036854775807",
        "zrandmember a 4611686018427387904 withscores",
        "zrandmember a 4611686018427387903 withscores",
        "zrandmember a -4611686018427387904 withscores",
        "zscan a 0",
        "zscan a x",
        "zscan a 0 count 0",
        "zscan a 0 foo",
        "zscan a 0 match *z*",
        "zscan a -1",
        "zscan str 0",
        "zscan str x",
        "zscan nokey 0 count 0",
        "zscan a 0 count 1 match",
        'zscan a "" ',
        "zscan a 18446744073709551615",
        "zscan a 18446744073709551616",
        "zadd big 1e17 a 1.5 b inf c -3 d 0x7fffffffffffffff e",
        "zscan big 0",
        "zrange big 0 -1 withscores",
    ],
    "t4": [
        "set k v ex 0",
        "set k v ex -1",
        "set k v ex x",
        "set k v px 9223372036854775807",
        "set k v ex 9223372036854775",
        "set k v exat 0",
        "set k v pxat 1",
        "exists k",
        "set k v nx xx",
        "set k v ex 1 px 1",
        "set k v ex 1 keepttl",
        "set k v keepttl ex 1",
        "set k v ex",
        "set k v foo",
        "set k v get",
        "set k v nx get",
        "set k v xx get",
        "set k v2 nx get",
        "set k v3 xx get",
        "zadd z 1 a",
        "set z v get",
        "set z v nx get",
        "set z v xx",
        "type z",
        "set k v ex 10 ex 100",
        "ttl k",
        "set k v nx nx",
        "set k v keepttl keepttl",
        "ttl k",
        "set k v",
        "ttl k",
        "set k v exat 9999999999",
        "ttl k",
        "set k v pxat 9999999999000 keepttl",
        "set k v get get",
        "set k v EX 10 foo",
        "set k v foo EX x",
        "get z",
        "incr z",
        "set n 9223372036854775807",
        "incr n",
        "decr n",
        "incrby n x",
        "incrby n -9223372036854775808",
        "set s abc",
        "incr s",
        'set s " 1"',
        "incr s",
        "set s 01",
        "incr s",
        "decrby n -9223372036854775808",
        "decrby n 5",
        "incr newkey",
        "zadd zz 1 a",
        "incr zz",
        "get zz",
        "set k v",
        "expire k 100 nx xx",
        "expire k 100 gt lt",
        "expire k 100 nx gt",
        "expire k 100 foo",
        "expire k 100 FOO bar",
        "expire k x",
        "expire k x foo",
        "expire k 100 xx",
        "ttl k",
        "expire k 100 gt",
        "expire k 50 lt",
        "ttl k",
        "expire k 10 nx",
        "persist k",
        "expire k 10 gt",
        "expire k 10 lt",
        "expire k 10 xx",
        "expire k 9223372036854775807",
        "expire k 9223372036854775",
        "expire k -9223372036854775",
        "expire k -9223372036854776",
        "pexpire k 9223372036854775807",
        "expireat k 9223372036854775",
        "expireat k 9223372036854776",
        "pexpireat k 9223372036854775807",
        "expire nokey 10",
        "expire k 0",
        "exists k",
        "set k v",
        "pexpire k -5",
        "exists k",
        "ttl nokey",
        "pttl nokey",
        "set k v",
        "ttl k",
        "pttl k",
        "persist k",
        "persist nokey",
        "expireat k 1",
        "exists k",
        "hset h a 1 b",
        "hset h a 1 b 2 a 3",
        "hget h a",
        "hmget h a x b",
        "hmget nokey a",
        "hincrby h a x",
        "hincrby h b 9223372036854775807",
        "hset h s abc",
        "hincrby h s 1",
        "hincrby h new 5",
        "hgetall h",
        "hdel h a x b",
        "hgetall h",
        "hgetall nokey",
        "hdel h s new",
        "exists h",
        "hincrby z a 1",
        "hincrby z a x",
        "hget z a",
        "hmget z a",
        "hdel z a",
        "hgetall z",
        "hset z a b",
        "sadd s2 a b a",
        "srem s2 a x",
        "smembers s2",
        "sismember s2 b",
        "sismember s2 x",
        "scard s2",
        "scard nokey",
        "smembers nokey",
        "sismember nokey a",
        "srem nokey a",
        "set str x",
        "hget str a",
        "sadd str a",
        "smembers str",
        "srem str a",
        "scard str",
        "sismember str a",
        "zadd str 1 a",
        "zscore str a",
        "zcard str",
        "zrem str a",
        "type nokey",
        "type s2",
        "type h",
        "type str",
        "dbsize",
        "del s2 str nokey str",
        "exists z z nokey",
        "scan 0 count 0",
        "scan x",
        "scan 0 foo",
        "scan 0 match",
        "scan 0 type",
        "scan 0 type string count 1000",
        'scan "" count 1000',
        "scan 18446744073709551616",
        "flushall async",
        "flushall foo",
        "flushall sync async",
        "dbsize x",
        "keys",
        "dbsize",
        "foo",
        "foo bar baz",
        "FOO 'x y' \"a\\nb\"",
        "ZaDd cs 1 a",
        "ZSCORE cs a",
        "get",
        "set a",
        "zrank cs a withscore",
        "zadd",
    ],
}

ENCODING = [
    "zadd l -0 a",
    "zscore l a",
    "zincrby l -0 new",
    "zscore l new",
    f"zadd s -0 {LONG}",
    "zadd s -0 a",
    "zscore s a",
    "zincrby s 0 a",
    "zscore s a",
    "zunion 1 s withscores",
    f"zrem s {LONG}",
    "zunionstore d 1 s",
    "zrange d 0 -1 withscores",
    "zscan s 0",
    f"zadd n1 -0 a 1 {LONG}",
    "zscore n1 a",
    "zadd sk -0 " + TALL + " " + " ".join(f"-0 m{i:03d}" for i in range(130)),
    *[
        line
        for spec in ("0 127", "0 128", "-inf inf byscore", "- + bylex", "0 -1 rev", "125 130")
        for line in (f"zrangestore d sk {spec}", "zscore d m000", "zscore d m129")
    ],
    "zadd n5 " + " ".join(f"-0 m{i:03d}" for i in range(128)),
    "zadd n5 -0 zz",
    "zscore n5 m000",
    "zscore n5 zz",
]
SEQUENCES["encoding"] = ENCODING

# Timeout texts at the edges of Redis 7.0.15's parse (strtold, x1000, ceill, long long).
# Each runs on a non-empty key, so no value here ever blocks: the forever ones included.
TIMEOUTS = (
    "0",
    "-0",
    "0.5",
    "+1",
    "1.",
    ".5",
    "1e3",
    "0x10",
    "0x1p-3",
    "-0.0001",
    "-0.001",
    "-1e-400",
    "1e-400",
    "9e15",
    "9223372036854775.807",
    "9223372036854775.808",
    "9.3e15",
    "1e400",
    "inf",
    "-infinity",
    "INF",
    "-1",
    "-.5e-0",
    "-0.0010000000000000000001",
    "0x1p16383",
    "0x1p-16445",
    "0x1p-16446",
    "1e5000",
    "1.2e4932",
    "1e-5000",
    "abc",
    "nan",
    "-nan",
    "1_0",
    "1e",
    "0x",
    ".",
    "-",
    "infinit",
    "''",
    "' 1'",
    "'1 '",
)
BLOCKING = [
    "zadd z " + " ".join(f"{n} m{n:02d}" for n in range(30)),
    "set str x",
    "bzpopmin",
    "bzpopmin z",
    "bzpopmax z",
    "bzmpop",
    "bzmpop 0 1",
    "bzmpop 0 1 z",
    "bzpopmin z 0",
    "bzpopmax z 0",
    "bzpopmin nokey z 0",
    "bzpopmax nokey z str 0",
    "bzpopmin z z 0",
    "BZPOPMAX z 0.5",
    "bzpopmin nokey 0.01",
    "bzpopmax nokey nokey2 0.01",
    "bzpopmin str 0.01",
    "bzpopmin nokey str 0",
    "bzpopmin str z 0",
    "bzpopmin z str 0",
    "bzpopmin str z abc",
    "bzpopmin str -1",
    "bzmpop 0 1 z min",
    "bzmpop 0 2 nokey z MAX COUNT 2",
    "bzmpop 0.01 1 nokey min",
    "bzmpop 0.01 2 nokey nokey2 max count 3",
    "bzmpop 0 2 str z min",
    "bzmpop 0 2 nokey str max",
    "bzmpop 0 2 z str max",
    "bzmpop abc 1 z min",
    "bzmpop -1 1 z min",
    "bzmpop abc 0 z min",
    "bzmpop 0 -1 z min",
    "bzmpop 0 x z min",
    "bzmpop 0 9999999999999999999 z min",
    "bzmpop 0 2 z min",
    "bzmpop 0 2147483648 z min",
    "bzmpop abc 1 z foo",
    "bzmpop abc 2 nokey str foo",
    "bzmpop abc 1 z min count 0",
    "bzmpop 0 1 z min count -1",
    "bzmpop 0 1 z min count x",
    "bzmpop 0 1 z min count",
    "bzmpop 0 1 z min count 1 count 1",
    "bzmpop 0 1 z min foo",
    "bzmpop 0 1 z min count 1 foo",
    "bzmpop abc 1 z min count 1",
    "bzmpop 0 1 z MIN COUNT 100",
    "exists z",
    "zadd small -0 a",
    "bzpopmin small 0",
    f"zadd big -0 {LONG}",
    "bzpopmax big 0",
    *(line for text in TIMEOUTS for line in ("zadd t 1 a", f"bzpopmin t {text}")),
    *(line for text in TIMEOUTS[:8] for line in ("zadd t 1 a", f"bzmpop {text} 1 t max")),
]
SEQUENCES["blocking"] = BLOCKING


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed: these tests need a real server")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # A bounded read: a blocking command that blocks by mistake fails instead of hanging.
    client = redis.Redis(
        port=port,
        protocol=2,
        socket_timeout=10,
        retry=redis.retry.Retry(redis.backoff.NoBackoff(), 0),
    )
    client.response_callbacks.clear()  # raw replies, as Keyspace gives them
    try:
        for _ in range(100):
            try:
                client.execute_command("PING")
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.fail("redis-server did not start")
        yield client
    finally:
        client.close()
        process.terminate()
        process.wait(10)


def _server_reply(client: Any, args: list[str]) -> object:
    try:
        return client.execute_command(*args)
    except redis.ResponseError as error:
        text = str(error)
        # redis-py strips the "ERR " prefix from generic errors; Keyspace keeps it.
        return ("error", text if text.startswith("WRONGTYPE") else "ERR " + text)


def _keyspace_reply(ks: Keyspace, args: list[str]) -> object:
    if args and args[0].lower().startswith("bz"):
        return _bounded(ks, args)
    return _plain_reply(ks, args)


def _plain_reply(ks: Keyspace, args: list[str]) -> object:
    try:
        return ks.execute(*args)
    except ResponseError as error:
        return ("error", str(error))


def _bounded(ks: Keyspace, args: list[str]) -> object:
    """A blocking command run in a thread joined with a timeout: a wrong wait fails."""
    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(_plain_reply(ks, args)), daemon=True)
    thread.start()
    thread.join(10)
    assert found, f"{shlex.join(args)} blocked on the keyspace"
    return found[0]


def _comparable(args: list[str], reply: object) -> object:
    name = args[0].lower()
    if name in UNORDERED and isinstance(reply, list):
        return sorted(reply)
    if name == "scan" and isinstance(reply, list):
        return [reply[0], sorted(reply[1])]
    return reply


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_same_replies_as_redis(server: Any, name: str) -> None:
    server.execute_command("FLUSHALL")
    ks = Keyspace()
    for line in SEQUENCES[name]:
        args = shlex.split(line)
        expected = _comparable(args, _server_reply(server, args))
        assert _comparable(args, _keyspace_reply(ks, args)) == expected, line


def test_command_table_arities_are_the_servers(server: Any) -> None:
    for name, command in COMMAND_TABLE.items():
        info = server.execute_command("COMMAND", "INFO", name)
        assert info[0][0] == name and info[0][1] == command.arity, name
