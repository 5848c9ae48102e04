"""Key layout of a board, name validation, and Redis Cluster's hash slot function."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ranked.core.keys import SLOT_COUNT, BoardKeys, crc16, hash_slot
from ranked.errors import InvalidNameError, RankedError
from servers import RedisCluster

# -- hash slots ---------------------------------------------------------------------


def test_crc16_xmodem_check_value() -> None:
    assert crc16(b"123456789") == 0x31C3
    assert crc16(b"") == 0


def test_known_slots() -> None:
    assert hash_slot(b"foo") == 12182
    assert hash_slot(b"123456789") == 0x31C3 % SLOT_COUNT == 12739
    assert hash_slot(b"{user1000}.following") == hash_slot(b"{user1000}.followers")
    assert hash_slot(b"{user1000}.following") == hash_slot(b"user1000")


def test_tag_rules() -> None:
    # An empty tag "{}" does not count: the whole key is hashed.
    assert hash_slot(b"foo{}{bar}") == crc16(b"foo{}{bar}") % SLOT_COUNT
    # Only the first "{" opens a tag, closed by the first "}" after it.
    assert hash_slot(b"foo{{bar}}zap") == hash_slot(b"{bar")
    assert hash_slot(b"foo{bar}{zap}") == hash_slot(b"bar")
    # No closing brace: the whole key.
    assert hash_slot(b"foo{bar") == crc16(b"foo{bar") % SLOT_COUNT
    assert hash_slot(b"}foo{x}") == hash_slot(b"x")


@given(st.binary(max_size=40))
def test_slot_in_range(key: bytes) -> None:
    assert 0 <= hash_slot(key) < SLOT_COUNT


@pytest.mark.redis
def test_slots_match_a_real_cluster(redis_cluster: RedisCluster) -> None:
    keys = [
        b"foo",
        b"",
        b"123456789",
        b"foo{}{bar}",
        b"foo{{bar}}zap",
        b"foo{bar}{zap}",
        b"{user1000}.following",
        b"\x00\xff{\x80}",
        BoardKeys("arena").window("w2026-W47"),
        BoardKeys("ünïcode board").friends(b"{other}"),
    ] + [bytes(range(n, n + 17)) for n in range(0, 200, 13)]
    client = redis_cluster.node_client(0)
    try:
        for key in keys:
            slot = client.execute_command("CLUSTER", "KEYSLOT", key)  # type: ignore[no-untyped-call]
            assert slot == hash_slot(key), key
    finally:
        client.close()


# -- a board's keys -----------------------------------------------------------------


def test_layout() -> None:
    keys = BoardKeys("arena")
    assert keys.prefix == b"rk:{arena}"
    assert keys.meta == b"rk:{arena}:meta"
    assert keys.data == b"rk:{arena}:data"
    assert keys.window("d2026-11-21") == b"rk:{arena}:w:d2026-11-21"
    assert keys.window("all") == b"rk:{arena}:w:all"
    assert keys.window("s:summer") == b"rk:{arena}:w:s:summer"
    assert keys.dense("m2026-11") == b"rk:{arena}:dense:m2026-11"
    assert keys.dense_counts("m2026-11") == b"rk:{arena}:dcount:m2026-11"
    assert keys.ties("all") == b"rk:{arena}:ties:all"
    assert keys.friends("bob") == b"rk:{arena}:friends:bob"
    assert keys.friends(b"\x00\xff") == b"rk:{arena}:friends:\x00\xff"
    assert keys.friend_view("bob") == b"rk:{arena}:fview:bob"
    assert BoardKeys("arena", namespace="game:7").meta == b"game:7:{arena}:meta"
    assert BoardKeys("çà").meta == "rk:{çà}:meta".encode()


def _all_keys(keys: BoardKeys, window_id: str, member: bytes) -> list[bytes]:
    return [
        keys.meta,
        keys.data,
        keys.window(window_id),
        keys.dense(window_id),
        keys.dense_counts(window_id),
        keys.ties(window_id),
        keys.friends(member),
        keys.friend_view(member),
    ]


@given(
    board=st.text(
        st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="{}"),
        min_size=1,
        max_size=30,
    ),
    window_id=st.sampled_from(["all", "d2020-12-31", "w2020-W53", "m2024-02", "s:x{y}"]),
    member=st.binary(max_size=20),
)
def test_every_key_of_a_board_is_in_one_slot(board: str, window_id: str, member: bytes) -> None:
    keys = BoardKeys(board)
    slots = {hash_slot(key) for key in _all_keys(keys, window_id, member)}
    assert slots == {keys.slot} == {hash_slot(board.encode())}


@pytest.mark.parametrize(
    "name",
    ["", "a{b", "a}b", "{}", "tab\there", "nul\x00", "del\x7f", "c1\x85", "x" * 201, "é" * 101],
)
def test_bad_board_names(name: str) -> None:
    with pytest.raises(InvalidNameError):
        BoardKeys(name)
    with pytest.raises(InvalidNameError):
        BoardKeys("ok", namespace=name)


def test_name_limit_is_in_bytes_and_type_is_checked() -> None:
    assert BoardKeys("x" * 200).board == "x" * 200
    assert BoardKeys("é" * 100).board == "é" * 100
    with pytest.raises(InvalidNameError, match="must be a str"):
        BoardKeys(b"arena")  # type: ignore[arg-type]
    with pytest.raises(InvalidNameError, match="valid Unicode"):
        BoardKeys("bad\ud800")


def test_name_error_is_typed() -> None:
    with pytest.raises(RankedError) as info:
        BoardKeys("a{b")
    assert isinstance(info.value, ValueError)
    assert "board name" in str(info.value)


def test_board_keys_are_frozen() -> None:
    keys = BoardKeys("arena")
    with pytest.raises(AttributeError):
        keys.board = "other"  # type: ignore[misc]
