"""Conformance: member-encoded (lexicographic) boards: lex_replace, lex_count, lex_range."""

from __future__ import annotations

import pytest

from ranked.backends.generic import ByteRange
from ranked.core.keys import BoardKeys
from ranked.core.ranks import RankStyle
from ranked.errors import ResponseError
from ranked.leaderboard._requests import LexOutcome, LexWrite

from .conftest import NO_TTL, AsyncRunner, Probe, Steps, target

INDEX = BoardKeys("arena").ties("all")
TTL = 60_000


def replace(
    backend: Steps, member: bytes, encoded: bytes, operator: str = "set", **kw: object
) -> LexOutcome:
    board = kw.pop("board", target())
    high_first = bool(kw.pop("high_first", False))
    write = LexWrite(member, encoded, operator, high_first)  # type: ignore[arg-type]
    outcome: LexOutcome = backend.lex_replace(board, INDEX, write)
    return outcome


def members(backend: Steps) -> list[bytes]:
    return [row[0] for row in backend.page(target(), 0, 99, False, RankStyle.UNIQUE)]


def test_replace_set_moves_the_entry(backend: Steps) -> None:
    first = replace(backend, b"amy", b"5:amy")
    assert first == LexOutcome(None, b"5:amy", None, 1, True)
    replace(backend, b"ben", b"3:ben")
    moved = replace(backend, b"amy", b"1:amy")
    assert moved == LexOutcome(b"5:amy", b"1:amy", 2, 1, True)
    assert members(backend) == [b"1:amy", b"3:ben"]
    assert backend.hash_get(INDEX, [b"amy", b"ben"]) == [b"1:amy", b"3:ben"]
    same = replace(backend, b"amy", b"1:amy")
    assert same == LexOutcome(b"1:amy", b"1:amy", 1, 1, False)


def test_replace_best_keeps_the_smaller_bytes(backend: Steps) -> None:
    replace(backend, b"amy", b"5:amy", "best")
    worse = replace(backend, b"amy", b"7:amy", "best")
    assert worse == LexOutcome(b"5:amy", b"5:amy", 1, 1, False)
    better = replace(backend, b"amy", b"2:amy", "best")
    assert better == LexOutcome(b"5:amy", b"2:amy", 1, 1, True)
    assert members(backend) == [b"2:amy"]


def test_replace_best_high_first_keeps_the_greater_bytes(backend: Steps) -> None:
    replace(backend, b"amy", b"5:amy", "best", high_first=True)
    replace(backend, b"ben", b"6:ben", "best", high_first=True)
    kept = replace(backend, b"amy", b"2:amy", "best", high_first=True)
    assert kept == LexOutcome(b"5:amy", b"5:amy", 2, 2, False)
    moved = replace(backend, b"amy", b"9:amy", "best", high_first=True)
    assert moved == LexOutcome(b"5:amy", b"9:amy", 2, 1, True)


def test_replace_keeps_dense_companions_right(backend: Steps) -> None:
    for member in (b"a", b"b", b"c"):
        replace(backend, member, b"1:" + member)
    replace(backend, b"a", b"0:a")
    assert backend.count(target().key) == 3
    rows = backend.page(target(), 0, 9, False, RankStyle.DENSE)
    assert [row[2] for row in rows] == [1, 1, 1]  # every entry at score 0


def test_replace_sets_the_ttl(backend: Steps, probe: Probe) -> None:
    daily = target(window="d:1", ttl_ms=TTL)
    replace(backend, b"amy", b"1:amy", board=daily)
    replace(backend, b"ben", b"1:ben")  # no TTL on the all-time board
    assert probe.pttl(target().key) == NO_TTL
    for key in (daily.key, INDEX):
        assert TTL - 10_000 < probe.pttl(key) <= TTL


def test_replace_restores_an_entry_whose_index_outlived_it(backend: Steps) -> None:
    replace(backend, b"amy", b"1:amy")
    backend.remove([target()], [b"1:amy"])
    again = replace(backend, b"amy", b"1:amy")
    assert (again.previous, again.previous_rank, again.rank, again.changed) == (
        b"1:amy",
        None,
        1,
        False,
    )
    assert members(backend) == [b"1:amy"]


def test_replace_of_a_wrong_type_changes_nothing(backend: Steps) -> None:
    backend.set_add(INDEX, [b"x"])
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        replace(backend, b"amy", b"1:amy")
    assert backend.count(target().key) == 0
    with pytest.raises(ValueError):
        replace(backend, b"amy", b"1:amy", "incr")


def test_lex_count_and_range(backend: Steps) -> None:
    for raw in (b"a", b"b", b"c", b"d", b"e"):
        replace(backend, raw, raw + b"!")
    board = target()
    assert backend.lex_count(board.key, ByteRange()) == 5
    assert backend.lex_count(board.key, ByteRange(b"b!", b"d!")) == 3
    assert backend.lex_count(board.key, ByteRange(b"b!", b"d!", True, True)) == 1
    assert backend.lex_count(board.key, ByteRange(None, b"c", False, True)) == 2
    assert backend.lex_count(board.key, ByteRange(b"c\xff", None)) == 2
    assert backend.lex_range(board.key, ByteRange(), 0, 10, False) == [
        b"a!",
        b"b!",
        b"c!",
        b"d!",
        b"e!",
    ]
    assert backend.lex_range(board.key, ByteRange(b"b!", b"e!", True, False), 1, 2, False) == [
        b"d!",
        b"e!",
    ]
    assert backend.lex_range(board.key, ByteRange(b"b!", b"e!", False, True), 0, 10, True) == [
        b"d!",
        b"c!",
        b"b!",
    ]
    assert backend.lex_range(board.key, ByteRange(), 3, 0, False) == []
    assert backend.lex_count(target(board="empty").key, ByteRange()) == 0
    assert backend.lex_range(target(board="empty").key, ByteRange(), 0, 5, False) == []
    with pytest.raises(ValueError):
        backend.lex_range(board.key, ByteRange(), -1, 5, False)


def test_lex_ops_through_the_async_twin(async_backend: AsyncRunner) -> None:
    async def scenario(aio: Steps) -> None:
        got = await aio.lex_replace(target(), INDEX, LexWrite(b"amy", b"1:amy", "set"))
        assert got.rank == 1 and got.changed
        assert await aio.lex_count(target().key, ByteRange()) == 1
        assert await aio.lex_range(target().key, ByteRange(), 0, 5, True) == [b"1:amy"]

    async_backend.run(scenario)
