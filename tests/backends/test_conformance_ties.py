"""Conformance: tie-break values kept in step with scores (``Target.ties_key``,
``SubmitRequest.tie``), atomically with the submission, trimming and removal."""

from __future__ import annotations

import math

import pytest

from ranked.errors import InvalidScoreError, ResponseError
from ranked.leaderboard._requests import Target

from .conftest import MISSING, NO_TTL, AsyncRunner, Probe, Steps, request, submit, target

TTL = 60_000


def ties_of(backend: Steps, board: Target, *members: bytes) -> list[bytes | None]:
    assert board.ties_key is not None
    found: list[bytes | None] = backend.hash_get(board.ties_key, list(members))
    return found


def test_a_changed_score_writes_the_tie(backend: Steps) -> None:
    board = target(ties=True)
    first = submit(backend, b"bob", 100, "best", targets=[board], tie=b"10")
    assert first.changed
    assert ties_of(backend, board, b"bob") == [b"10"]
    same = submit(backend, b"bob", 100, "best", targets=[board], tie=b"20")
    worse = submit(backend, b"bob", 90, "best", targets=[board], tie=b"30")
    assert not same.changed and not worse.changed
    assert ties_of(backend, board, b"bob") == [b"10"]  # the earlier achiever keeps its value
    submit(backend, b"bob", 110, "best", targets=[board], tie=b"40")
    assert ties_of(backend, board, b"bob") == [b"40"]
    submit(backend, b"bob", 5, "incr", targets=[board], tie=b"-7")
    assert ties_of(backend, board, b"bob") == [b"-7"]


def test_binary_tie_values_round_trip(backend: Steps) -> None:
    board = target(ties=True)
    value = bytes(range(256))
    submit(backend, b"m\x00", 1, "set", targets=[board], tie=value)
    assert ties_of(backend, board, b"m\x00") == [value]


def test_no_tie_or_no_ties_key_writes_nothing(backend: Steps, probe: Probe) -> None:
    with_ties, plain = target(ties=True), target(board="plain")
    submit(backend, b"a", 1, "set", targets=[with_ties])
    assert ties_of(backend, with_ties, b"a") == [None]
    assert with_ties.ties_key is not None and not probe.exists(with_ties.ties_key)
    submit(backend, b"a", 1, "set", targets=[plain], tie=b"5")
    assert not probe.exists(target(board="plain", ties=True).ties_key or b"")


def test_only_targets_whose_score_changed_get_the_tie(backend: Steps) -> None:
    daily, total = target(window="d:1", ttl_ms=TTL, ties=True), target(ties=True)
    backend.submit(request(b"a", 50, "set", targets=(total,), tie=b"1"))
    outcomes = backend.submit(request(b"a", 40, "best", targets=(daily, total), tie=b"2"))
    assert [o.changed for o in outcomes] == [True, False]
    assert ties_of(backend, daily, b"a") == [b"2"]
    assert ties_of(backend, total, b"a") == [b"1"]


def test_the_ties_hash_gets_the_targets_ttl(backend: Steps, probe: Probe) -> None:
    daily, total = target(window="d:1", ttl_ms=TTL, ties=True), target(ties=True)
    backend.submit(request(b"a", 5, "set", targets=(daily, total), tie=b"1"))
    assert daily.ties_key is not None and total.ties_key is not None
    left = probe.pttl(daily.ties_key)
    assert TTL - 10_000 < left <= TTL
    assert probe.pttl(total.ties_key) == NO_TTL
    backend.expire_at([daily.ties_key], backend.now_ms() + 5_000)
    unchanged = backend.submit(request(b"a", 1, "best", targets=(daily,), tie=b"9"))
    assert not unchanged[0].changed
    assert TTL - 10_000 < probe.pttl(daily.ties_key) <= TTL  # every write sets it again


@pytest.mark.parametrize("high_first", [True, False])
def test_trimmed_members_lose_their_tie(backend: Steps, high_first: bool) -> None:
    board = target(ties=True)
    scores = {b"a": 50, b"b": 40, b"c": 30, b"d": 20}
    for number, (member, score) in enumerate(scores.items()):
        value = score if high_first else -score
        submit(backend, member, value, targets=[board], tie=b"%d" % number, high_first=high_first)
    outcome = submit(
        backend,
        b"e",
        35 if high_first else -35,
        targets=[board],
        tie=b"9",
        keep=3,
        high_first=high_first,
    )
    assert outcome.rank == 3
    assert ties_of(backend, board, b"a", b"b", b"c", b"d", b"e") == [
        b"0",
        b"1",
        None,
        None,
        b"9",
    ]
    # A trim without a tie in the request still clears the trimmed members' values.
    submit(backend, b"f", 45 if high_first else -45, targets=[board], keep=2, high_first=high_first)
    assert ties_of(backend, board, b"a", b"b", b"e", b"f") == [b"0", None, None, None]


def test_a_trimmed_submitter_keeps_no_tie(backend: Steps) -> None:
    board = target(ties=True)
    submit(backend, b"a", 50, "set", targets=[board], tie=b"1")
    outcome = submit(backend, b"z", 1, "set", targets=[board], tie=b"2", keep=1)
    assert outcome.rank is None
    assert ties_of(backend, board, b"a", b"z") == [b"1", None]


def test_remove_deletes_the_ties(backend: Steps, probe: Probe) -> None:
    daily, total = target(window="d:1", ties=True), target(ties=True)
    for member in (b"a", b"b"):
        backend.submit(request(member, 3, "set", targets=(daily, total), tie=b"7"))
    assert backend.remove([daily, total], [b"a", b"nobody"]) == 2
    assert ties_of(backend, daily, b"a", b"b") == [None, b"7"]
    assert ties_of(backend, total, b"a", b"b") == [None, b"7"]
    backend.remove([daily, total], [b"b"])
    assert daily.ties_key is not None and not probe.exists(daily.ties_key)
    # A field without a score entry (left by older data) goes too.
    backend.hash_set(daily.ties_key, {b"ghost": b"1"}, None)
    assert backend.remove([daily], [b"ghost"]) == 0
    assert ties_of(backend, daily, b"ghost") == [None]


def test_a_failed_batch_restores_the_ties(backend: Steps, probe: Probe) -> None:
    board = target(ties=True)
    submit(backend, b"a", 5, "set", targets=[board], tie=b"1")
    submit(backend, b"b", 4, "set", targets=[board], tie=b"2")
    submit(backend, b"big", 1.5e308, "set", targets=[board], tie=b"3")
    with pytest.raises(InvalidScoreError):
        backend.submit_batch(
            [
                request(b"a", 9, "set", targets=(board,), tie=b"10"),
                request(b"c", 8, "set", targets=(board,), tie=b"11", keep=3),
                request(b"big", 1.5e308, "incr", targets=(board,), tie=b"12"),
            ]
        )
    assert ties_of(backend, board, b"a", b"b", b"c", b"big") == [b"1", b"2", None, b"3"]
    assert backend.scores(board.key, [b"a", b"b", b"c"]) == [5.0, 4.0, None]
    fresh = target(board="fresh", ties=True)
    with pytest.raises(InvalidScoreError):
        backend.submit_batch(
            [
                request(b"x", 1, "set", targets=(fresh,), tie=b"1"),
                request(b"y", math.nan, "set", targets=(fresh,), tie=b"2"),
            ]
        )
    assert fresh.ties_key is not None and not probe.exists(fresh.ties_key)
    assert backend.count(fresh) == 0


def test_a_ties_key_of_another_type_changes_nothing(backend: Steps) -> None:
    board = target(ties=True)
    assert board.ties_key is not None
    backend.set_add(board.ties_key, [b"oops"])
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        submit(backend, b"a", 1, "set", targets=[board], tie=b"1")
    assert backend.count(board.key) == 0
    plain = target()
    submit(backend, b"a", 1, "set", targets=[plain])
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        backend.remove([board, plain], [b"a"])
    assert backend.scores(plain, [b"a"]) == [1.0]


def test_ties_through_the_async_twin(async_backend: AsyncRunner, probe: Probe) -> None:
    board = target(ties=True)

    async def scenario(aio: Steps) -> None:
        await aio.submit(request(b"a", 2, "set", targets=(board,), tie=b"4"))
        assert board.ties_key is not None
        assert await aio.hash_get(board.ties_key, [b"a"]) == [b"4"]
        assert await aio.remove([board], [b"a"]) == 1
        assert await aio.hash_get(board.ties_key, [b"a"]) == [None]

    async_backend.run(scenario)
    assert board.ties_key is not None and probe.pttl(board.ties_key) == MISSING
