"""Sorted-set commands through Keyspace.execute: replies, errors and their precedence,
and the Redis 7.0.15 listpack side effects (all verified on the real server)."""

from __future__ import annotations

from typing import Any

import pytest

from ranked import Keyspace, ResponseError
from ranked.errors import RankedError

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
LONG = "b" * 65  # longer than zset-max-listpack-value


@pytest.fixture
def ks() -> Keyspace:
    keyspace = Keyspace()
    keyspace.execute("ZADD", "z", 1, "a", 2, "b", 3, "c")
    keyspace.execute("SET", "str", "v")
    return keyspace


def listed(reply: object) -> list[Any]:
    """An array reply, checked and typed for sorting/indexing."""
    assert isinstance(reply, list)
    return reply


def error_of(ks: Keyspace, *args: str | int | float) -> str:
    with pytest.raises(ResponseError) as caught:
        ks.execute(*args)
    assert isinstance(caught.value, RankedError)
    return str(caught.value)


def test_zadd_option_errors_in_redis_order(ks: Keyspace) -> None:
    assert error_of(ks, "ZADD", "z", "NX", "XX", 1, "a") == (
        "ERR XX and NX options at the same time are not compatible"
    )
    gt_lt = "ERR GT, LT, and/or NX options at the same time are not compatible"
    assert error_of(ks, "ZADD", "z", "GT", "LT", 1, "a") == gt_lt
    assert error_of(ks, "ZADD", "z", "NX", "GT", 1, "a") == gt_lt
    assert error_of(ks, "ZADD", "z", "INCR", 1, "a", 2, "b") == (
        "ERR INCR option supports a single increment-element pair"
    )
    assert error_of(ks, "ZADD", "z", "NX", "XX", 1) == "ERR syntax error"
    assert error_of(ks, "ZADD", "z", 1, "a", 2) == "ERR syntax error"
    assert error_of(ks, "ZADD", "z", 1, "x", "abc", "y") == "ERR value is not a valid float"
    assert ks.execute("ZCARD", "z") == 3  # nothing applied
    assert error_of(ks, "ZADD", "str", "abc", "a") == "ERR value is not a valid float"
    assert error_of(ks, "ZADD", "str", 1, "a") == WRONGTYPE
    for bad in ("nan", "1e400", "1e-400", " 1", "1 ", ""):
        assert error_of(ks, "ZADD", "z", bad, "a") == "ERR value is not a valid float"


def test_zadd_flags_and_counts(ks: Keyspace) -> None:
    assert ks.execute("ZADD", "z", "NX", 1, "NX") == 1  # parsing stops at the score
    assert ks.execute("ZADD", "z", 1, "d", 2, "d") == 1
    assert ks.execute("ZSCORE", "z", "d") == b"2"
    assert ks.execute("ZADD", "z", "CH", 3, "e", 4, "e") == 2
    assert ks.execute("ZADD", "z", "CH", 5, "f", 5, "f") == 1
    assert ks.execute("ZADD", "z", "GT", 1, "new") == 1
    assert ks.execute("ZADD", "z", "GT", "CH", 0, "a", 9, "b") == 1
    assert ks.execute("ZADD", "nokey", "XX", 1, "a") == 0
    assert ks.execute("ZADD", "nokey", "XX", "INCR", 1, "a") is None
    assert ks.execute("EXISTS", "nokey") == 0
    assert ks.execute("ZADD", "z", "NX", "INCR", 1, "a") is None
    assert ks.execute("ZADD", "z", "INCR", 0.5, "a") == b"1.5"
    assert ks.execute("ZADD", "z", "0x10", "hex") == 1
    assert ks.execute("ZSCORE", "z", "hex") == b"16"


def test_zincrby_nan_and_overflow(ks: Keyspace) -> None:
    assert ks.execute("ZINCRBY", "z", "inf", "a") == b"inf"
    assert error_of(ks, "ZINCRBY", "z", "-inf", "a") == "ERR resulting score is not a number (NaN)"
    assert ks.execute("ZSCORE", "z", "a") == b"inf"
    assert ks.execute("ZINCRBY", "z", "1e308", "b") == b"1e+308"  # 2 + 1e308 rounds to 1e308
    assert ks.execute("ZINCRBY", "z", "1e308", "b") == b"inf"
    assert ks.execute("ZADD", "z", "GT", "INCR", 1, "a") is None  # inf + 1 is not greater
    assert error_of(ks, "ZINCRBY", "z", "x", "a") == "ERR value is not a valid float"


def test_zincrby_reads_zadd_options_in_the_increment_slot(ks: Keyspace) -> None:
    # Redis parses ZINCRBY with ZADD's option loop: an option word there is a flag, which
    # leaves one argument, so a syntax error, reported before the key's type is checked.
    ks.execute("SET", "str", "x")
    assert error_of(ks, "ZINCRBY", "fresh", "NX", "m") == "ERR syntax error"
    assert error_of(ks, "ZINCRBY", "str", "ch", "m") == "ERR syntax error"
    assert ks.execute("ZINCRBY", "k", "1", "NX") == b"1"
    assert ks.execute("EXISTS", "fresh") == 0


def test_score_replies_use_17_digits(ks: Keyspace) -> None:
    ks.execute("ZADD", "f", 1.1, "x", "1e-310", "y")
    assert ks.execute("ZSCORE", "f", "x") == b"1.1000000000000001"
    assert ks.execute("ZRANGE", "f", 0, -1, "WITHSCORES") == [
        b"y",
        b"9.9999999999999694e-311",
        b"x",
        b"1.1000000000000001",
    ]
    assert ks.execute("ZMSCORE", "f", "x", "nope") == [b"1.1000000000000001", None]
    assert ks.execute("ZMSCORE", "nokey", "x", "y") == [None, None]


def test_listpack_loses_negative_zero_skiplist_keeps_it(ks: Keyspace) -> None:
    ks.execute("ZADD", "small", "-0", "a")
    assert ks.execute("ZSCORE", "small", "a") == b"0"
    assert ks.execute("ZINCRBY", "small", "-0", "new") == b"-0"  # reply is the computed score
    assert ks.execute("ZSCORE", "small", "new") == b"0"
    ks.execute("ZADD", "big", "-0", LONG, "-0", "a")  # first member too long: skiplist
    assert ks.execute("ZSCORE", "big", "a") == b"-0"
    assert ks.execute("ZADD", "big", 0, "a") == 0  # 0 == -0: no update
    assert ks.execute("ZSCORE", "big", "a") == b"-0"
    assert ks.execute("ZINCRBY", "big", 0, "a") == b"0"
    assert ks.execute("ZSCORE", "big", "a") == b"-0"
    ks.execute("ZADD", "late", "-0", "a", 1, LONG)  # converts on the long insert
    assert ks.execute("ZSCORE", "late", "a") == b"0"
    ks.execute("ZREM", "big", LONG)  # never converts back
    ks.execute("ZADD", "big", "-0", "c")
    assert ks.execute("ZSCORE", "big", "c") == b"-0"


def test_listpack_converts_past_128_members(ks: Keyspace) -> None:
    pairs = [x for i in range(128) for x in ("-0", f"m{i:03d}")]
    ks.execute("ZADD", "n", *pairs)
    ks.execute("ZADD", "n", "-0", "m000")  # update only: still a listpack
    ks.execute("ZADD", "n", "-0", "zz")  # 129th member: converts first
    assert ks.execute("ZSCORE", "n", "m000") == b"0"
    assert ks.execute("ZSCORE", "n", "zz") == b"-0"
    ks.execute("ZADD", "x", "-0", "q")
    ks.execute("ZADD", "x", "XX", 1, LONG)  # XX inserts nothing, so no conversion
    ks.execute("ZADD", "x", "-0", "y")
    assert ks.execute("ZSCORE", "x", "y") == b"0"


def test_store_results_follow_encoding_rules(ks: Keyspace) -> None:
    ks.execute("ZADD", "sk", "-0", LONG, "-0", "a")
    ks.execute("ZREM", "sk", LONG)
    assert ks.execute("ZUNION", 1, "sk", "WITHSCORES") == [b"a", b"-0"]
    assert ks.execute("ZUNIONSTORE", "d", 1, "sk") == 1
    assert ks.execute("ZSCORE", "d", "a") == b"0"  # small result stored as a listpack
    tall = "z" * 65
    ks.execute("ZADD", "sk2", "-0", tall, *[x for i in range(130) for x in ("-0", f"m{i:03d}")])
    ks.execute("ZRANGESTORE", "d", "sk2", 0, 127)  # <= 128 by rank: listpack
    assert ks.execute("ZSCORE", "d", "m000") == b"0"
    ks.execute("ZRANGESTORE", "d", "sk2", 0, 128)  # > 128 by rank: skiplist from the start
    assert ks.execute("ZSCORE", "d", "m000") == b"-0"
    ks.execute("ZRANGESTORE", "d", "sk2", "-inf", "inf", "BYSCORE")  # converts at #129
    assert ks.execute("ZSCORE", "d", "m000") == b"0"
    assert ks.execute("ZSCORE", "d", "m129") == b"-0"
    ks.execute("ZRANGESTORE", "d", "sk2", 0, -1, "REV")
    assert ks.execute("ZSCORE", "d", "m000") == b"-0"


def test_zscan_formats_like_the_encoding(ks: Keyspace) -> None:
    ks.execute("ZADD", "lp", "1e17", "a", 1.5, "b", "inf", "c")
    assert ks.execute("ZSCAN", "lp", 12345) == [
        b"0",
        [b"b", b"1.5", b"a", b"100000000000000000", b"c", b"inf"],
    ]
    ks.execute("ZADD", "sk", "1e17", LONG)
    reply = ks.execute("ZSCAN", "sk", 0)
    assert reply == [b"0", [LONG.encode(), b"1e+17"]]
    assert ks.execute("ZSCAN", "lp", 0, "MATCH", "[ab]") == [
        b"0",
        [b"b", b"1.5", b"a", b"100000000000000000"],
    ]


def test_zscan_errors_and_precedence(ks: Keyspace) -> None:
    assert error_of(ks, "ZSCAN", "nokey", "x") == "ERR invalid cursor"
    assert ks.execute("ZSCAN", "nokey", 0, "COUNT", 0) == [b"0", []]
    assert error_of(ks, "ZSCAN", "str", 0) == WRONGTYPE
    assert error_of(ks, "ZSCAN", "z", 0, "COUNT", 0) == "ERR syntax error"
    assert error_of(ks, "ZSCAN", "z", 0, "TYPE", "zset") == "ERR syntax error"
    assert error_of(ks, "ZSCAN", "z", "18446744073709551616") == "ERR invalid cursor"
    assert listed(ks.execute("ZSCAN", "z", -1))[0] == b"0"


def test_zscan_pages_a_large_set(ks: Keyspace) -> None:
    ks.execute("ZADD", "big", *[x for i in range(1000) for x in (i, f"m{i}")])
    seen: dict[bytes, bytes] = {}
    cursor: bytes = b"0"
    calls = 0
    while True:
        cursor, flat = listed(ks.execute("ZSCAN", "big", cursor))
        assert isinstance(flat, list)
        for index in range(0, len(flat), 2):
            seen[flat[index]] = flat[index + 1]
        calls += 1
        if cursor == b"0":
            break
    assert calls > 50
    assert seen == {f"m{i}".encode(): b"%d" % i for i in range(1000)}


def test_ranges_are_parsed_before_the_key(ks: Keyspace) -> None:
    assert error_of(ks, "ZCOUNT", "nokey", "a", "b") == "ERR min or max is not a float"
    assert error_of(ks, "ZRANGE", "str", "a", "b") == "ERR value is not an integer or out of range"
    assert error_of(ks, "ZLEXCOUNT", "str", "a", "b") == (
        "ERR min or max not valid string range item"
    )
    assert error_of(ks, "ZREMRANGEBYSCORE", "nokey", "x", 1) == "ERR min or max is not a float"
    assert ks.execute("ZCOUNT", "nokey", 1, 2) == 0
    assert error_of(ks, "ZCOUNT", "str", 1, 2) == WRONGTYPE
    assert ks.execute("ZRANGE", "nokey", 0, -1) == []


def test_zrange_option_errors(ks: Keyspace) -> None:
    limit_rank = (
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
    )
    assert error_of(ks, "ZRANGE", "z", 0, 1, "LIMIT", 1, 2) == limit_rank
    assert ks.execute("ZRANGE", "z", 0, 1, "LIMIT", 5, -1) == [b"a", b"b"]  # count -1: allowed
    assert error_of(ks, "ZRANGE", "z", "[a", "[b", "BYLEX", "WITHSCORES") == (
        "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
    )
    for extra in (["REV", "REV"], ["BYSCORE", "BYLEX"], ["foo"], ["BYSCORE", "LIMIT", 1]):
        assert error_of(ks, "ZRANGE", "z", 0, 1, *extra) == "ERR syntax error"
    assert error_of(ks, "ZRANGEBYSCORE", "z", 0, 1, "REV") == "ERR syntax error"
    assert error_of(ks, "ZREVRANGE", "z", 0, 1, "BYSCORE") == "ERR syntax error"
    assert error_of(ks, "ZRANGESTORE", "d", "z", 0, 1, "WITHSCORES") == "ERR syntax error"
    assert error_of(ks, "ZRANGE", "z", "x", 1, "BYSCORE", "LIMIT", "x", 0) == (
        "ERR value is not an integer or out of range"  # LIMIT is parsed before the range
    )
    assert ks.execute("ZRANGE", "z", 0, 1, "WITHSCORES", "WITHSCORES") == [b"a", b"1", b"b", b"2"]


def test_zrange_variants(ks: Keyspace) -> None:
    assert ks.execute("ZRANGE", "z", 0, -1, "REV") == [b"c", b"b", b"a"]
    assert ks.execute("ZRANGE", "z", 3, 1, "BYSCORE", "REV") == [b"c", b"b", b"a"]
    assert ks.execute("ZRANGE", "z", 1, 3, "BYSCORE", "REV") == []
    assert ks.execute("ZRANGEBYSCORE", "z", "(1", "+inf", "WITHSCORES", "LIMIT", 1, 5) == [
        b"c",
        b"3",
    ]
    assert ks.execute("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", -1, 2) == []
    assert ks.execute("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", 1, -1) == [b"b", b"c"]
    assert ks.execute("ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", 0, 2) == [b"c", b"b"]
    assert ks.execute("ZREVRANGE", "z", 0, 0, "WITHSCORES") == [b"c", b"3"]
    assert ks.execute("ZRANGE", "z", 0, 2**63 - 1) == [b"a", b"b", b"c"]
    assert ks.execute("ZCOUNT", "z", "(", "(") == 0
    assert ks.execute("ZCOUNT", "z", "(1", 3) == 2
    assert ks.execute("ZRANK", "z", "c") == 2
    assert ks.execute("ZREVRANK", "z", "c") == 0
    assert ks.execute("ZRANK", "z", "nope") is None
    assert ks.execute("ZRANK", "nokey", "a") is None


def test_lex_ranges(ks: Keyspace) -> None:
    ks.execute("ZADD", "l", 0, "a", 0, "b", 0, "c", 0, "d", 0, "e")
    assert ks.execute("ZRANGEBYLEX", "l", "[b", "(d") == [b"b", b"c"]
    assert ks.execute("ZRANGEBYLEX", "l", "-", "+", "LIMIT", 1, 2) == [b"b", b"c"]
    assert ks.execute("ZREVRANGEBYLEX", "l", "+", "-", "LIMIT", 1, 2) == [b"d", b"c"]
    assert ks.execute("ZRANGE", "l", "[e", "[a", "BYLEX", "REV") == [b"e", b"d", b"c", b"b", b"a"]
    assert ks.execute("ZLEXCOUNT", "l", "+", "-") == 0
    assert ks.execute("ZLEXCOUNT", "l", "-", "-") == 0
    assert ks.execute("ZLEXCOUNT", "l", "(b", "[b") == 0
    assert ks.execute("ZREMRANGEBYLEX", "l", "[a", "[b") == 2
    assert error_of(ks, "ZRANGEBYLEX", "l", "a", "+") == (
        "ERR min or max not valid string range item"
    )


def test_removals_delete_empty_keys_and_keep_ttl(ks: Keyspace) -> None:
    ks.execute("EXPIRE", "z", 100)
    ks.execute("ZADD", "z", 4, "d")
    assert ks.execute("TTL", "z") == 100
    assert ks.execute("ZREMRANGEBYRANK", "z", 0, 0) == 1
    assert ks.execute("ZREMRANGEBYSCORE", "z", 2, "(3") == 1
    assert ks.execute("ZREM", "z", "c", "nope") == 1
    assert ks.execute("ZPOPMIN", "z") == [b"d", b"4"]
    assert ks.execute("EXISTS", "fresh") == 0
    assert ks.execute("ZREM", "nokey", "a") == 0
    assert ks.execute("ZREMRANGEBYRANK", "nokey", 0, -1) == 0


def test_pops(ks: Keyspace) -> None:
    assert ks.execute("ZPOPMAX", "z", 2) == [b"c", b"3", b"b", b"2"]
    assert ks.execute("ZPOPMIN", "z", 0) == []
    assert ks.execute("ZPOPMIN", "nokey", 5) == []
    positive = "ERR value is out of range, must be positive"
    assert error_of(ks, "ZPOPMIN", "z", -1) == positive
    assert error_of(ks, "ZPOPMIN", "z", "x") == positive
    assert error_of(ks, "ZPOPMIN", "z", 1, 2) == "ERR syntax error"
    assert error_of(ks, "ZPOPMIN", "str") == WRONGTYPE
    assert error_of(ks, "ZPOPMIN", "str", 0) == WRONGTYPE


def test_zmpop(ks: Keyspace) -> None:
    ks.execute("ZADD", "y", 5, "p", 6, "q")
    assert ks.execute("ZMPOP", 2, "nokey", "y", "MAX", "COUNT", 5) == [
        b"y",
        [[b"q", b"6"], [b"p", b"5"]],
    ]
    assert ks.execute("EXISTS", "y") == 0
    assert ks.execute("ZMPOP", 1, "nokey", "MIN") is None
    assert ks.execute("ZMPOP", 1, "z", "MIN") == [b"z", [[b"a", b"1"]]]
    assert error_of(ks, "ZMPOP", 0, "z", "MIN") == "ERR numkeys should be greater than 0"
    assert error_of(ks, "ZMPOP", "x", "z", "MIN") == "ERR numkeys should be greater than 0"
    assert error_of(ks, "ZMPOP", 2, "z", "MIN") == "ERR syntax error"
    assert error_of(ks, "ZMPOP", 1, "z", "foo") == "ERR syntax error"
    assert error_of(ks, "ZMPOP", 1, "z", "MIN", "COUNT", 0) == "ERR count should be greater than 0"
    assert error_of(ks, "ZMPOP", 1, "z", "MIN", "COUNT", 1, "COUNT", 1) == "ERR syntax error"
    assert error_of(ks, "ZMPOP", 2, "str", "z", "MIN") == WRONGTYPE
    assert ks.execute("ZMPOP", 2, "z", "str", "MIN") == [b"z", [[b"b", b"2"]]]


def test_zrandmember(ks: Keyspace) -> None:
    assert ks.execute("ZRANDMEMBER", "nokey") is None
    assert ks.execute("ZRANDMEMBER", "nokey", 5) == []
    assert ks.execute("ZRANDMEMBER", "z") in (b"a", b"b", b"c")
    assert sorted(listed(ks.execute("ZRANDMEMBER", "z", 100))) == [b"a", b"b", b"c"]
    draws = ks.execute("ZRANDMEMBER", "z", -10, "WITHSCORES")
    assert isinstance(draws, list)
    assert len(draws) == 20
    assert ks.execute("ZRANDMEMBER", "z", 0) == []
    assert error_of(ks, "ZRANDMEMBER", "str", 0) == WRONGTYPE
    assert error_of(ks, "ZRANDMEMBER", "z", 1, "foo") == "ERR syntax error"
    assert error_of(ks, "ZRANDMEMBER", "z", -(2**63)) == (
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
    )
    assert error_of(ks, "ZRANDMEMBER", "z", 2**62, "WITHSCORES") == "ERR value is out of range"


def test_algebra(ks: Keyspace) -> None:
    ks.execute("ZADD", "b", 10, "b", 20, "c", 30, "w")
    ks.execute("SADD", "s", "a", "w")
    assert ks.execute("ZUNION", 2, "z", "b", "WEIGHTS", 2, 0.5, "WITHSCORES") == [
        b"a", b"2", b"b", b"9", b"w", b"15", b"c", b"16",
    ]  # fmt: skip
    assert ks.execute("ZINTER", 3, "z", "b", "s") == []
    assert ks.execute("ZINTER", 2, "z", "s", "AGGREGATE", "MAX", "WITHSCORES") == [b"a", b"1"]
    assert ks.execute("ZDIFF", 2, "z", "b", "WITHSCORES") == [b"a", b"1"]
    assert ks.execute("ZINTERCARD", 2, "z", "b") == 2
    assert ks.execute("ZINTERCARD", 2, "z", "b", "LIMIT", 1) == 1
    assert error_of(ks, "ZINTERCARD", 2, "z", "b", "LIMIT", -1) == "ERR LIMIT can't be negative"
    assert (
        error_of(ks, "ZUNION", 0, "z") == "ERR at least 1 input key is needed for 'zunion' command"
    )
    assert error_of(ks, "ZDIFFSTORE", "d", 0, "z") == (
        "ERR at least 1 input key is needed for 'zdiffstore' command"
    )
    assert error_of(ks, "ZUNION", 3, "z", "b") == "ERR syntax error"
    assert error_of(ks, "ZUNION", 2, "z", "b", "WEIGHTS", 1) == "ERR syntax error"
    assert error_of(ks, "ZUNION", 2, "z", "b", "WEIGHTS", 1, "nan") == (
        "ERR weight value is not a float"
    )
    assert error_of(ks, "ZUNION", 2, "z", "str", "foo") == WRONGTYPE  # types before options
    assert error_of(ks, "ZDIFF", 1, "z", "AGGREGATE", "SUM") == "ERR syntax error"
    assert error_of(ks, "ZUNIONSTORE", "d", 1, "z", "WITHSCORES") == "ERR syntax error"
    ks.execute("ZADD", "pinf", "inf", "x")
    ks.execute("ZADD", "ninf", "-inf", "x")
    assert ks.execute("ZUNION", 2, "pinf", "ninf", "WITHSCORES") == [b"x", b"0"]
    assert ks.execute("ZUNION", 2, "pinf", "ninf", "WEIGHTS", 0, 1, "WITHSCORES") == [
        b"x",
        b"-inf",
    ]


def test_store_overwrites_clears_ttl_and_deletes_on_empty(ks: Keyspace) -> None:
    ks.execute("SET", "d", "v", "EX", 100)
    assert ks.execute("ZUNIONSTORE", "d", 1, "z") == 3
    assert ks.execute("TTL", "d") == -1
    assert ks.execute("TYPE", "d") == b"zset"
    assert ks.execute("ZINTERSTORE", "d", 2, "z", "nokey") == 0
    assert ks.execute("EXISTS", "d") == 0
    ks.execute("SET", "d", "v")
    assert ks.execute("ZRANGESTORE", "d", "z", 5, 1) == 0
    assert ks.execute("EXISTS", "d") == 0
    assert ks.execute("ZRANGESTORE", "d", "z", "(1", "+inf", "BYSCORE", "LIMIT", 1, 1) == 1
    assert ks.execute("ZRANGE", "d", 0, -1, "WITHSCORES") == [b"c", b"3"]
    assert error_of(ks, "ZRANGESTORE", "d", "str", 0, -1) == WRONGTYPE
    assert ks.execute("EXISTS", "d") == 1
    assert ks.execute("ZUNIONSTORE", "z", 2, "z", "z") == 3  # source may be the destination
    assert ks.execute("ZSCORE", "z", "c") == b"6"
    assert ks.execute("ZDIFFSTORE", "d", 2, "z", "z") == 0
    assert ks.execute("EXISTS", "d") == 0
