"""The sans-I/O half of the Redis backends: argument checks and reply decoding, no server.

Everything refused here is refused before a byte is sent, so "nothing changes" holds
trivially; the script-side checks are covered against real servers in the other files.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from ranked.backends._redis_ops import ServerClock, translate_error
from ranked.backends._scripts import feature_script
from ranked.core.ranks import RankStyle
from ranked.errors import InvalidScoreError, LayoutError, OutOfRangeError, ResponseError
from ranked.leaderboard._requests import Composite, SubmitOutcome, SubmitRequest, Target
from ranked.leaderboard._steps import STEPS

TARGET = Target(b"rk:{a}:w:all", b"rk:{a}:dense:all", b"rk:{a}:dcount:all", 5000)
ops = SimpleNamespace(
    **{name: step.call for name, step in STEPS.items()},
    ServerClock=ServerClock,
    translate_error=translate_error,
)
"""Each step's Redis form: call arguments -> the call it sends (nothing is sent here)."""
SEED004 = Composite(score_bits=21, time_bits=32, epoch_ms=-(2**31) * 1000, unit_ms=1000)


def request(value: float, composite: Composite | None = None, now_ms: int = 0) -> SubmitRequest:
    return SubmitRequest(
        b"m", value, "set", True, (TARGET,), RankStyle.DENSE, now_ms, composite=composite
    )


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_values_are_refused_before_sending(value: float) -> None:
    with pytest.raises(InvalidScoreError):
        ops.submit(request(value))
    with pytest.raises(InvalidScoreError):
        ops.submit_batch([request(1.0), request(value)])


def test_an_int_past_float_range_is_refused() -> None:
    with pytest.raises(OutOfRangeError, match="beyond the float64 range"):
        ops.submit(request(10**400))
    assert ops.submit(request(2**53)).args[2] == b"9007199254740992"


@pytest.mark.parametrize("value", [2**53 + 1, -(2**53) - 1, 2**64 + 1])
def test_an_int_a_float_would_round_is_refused_before_sending(value: int) -> None:
    with pytest.raises(OutOfRangeError, match="not exact"):
        ops.submit(request(value))
    with pytest.raises(OutOfRangeError, match="not exact"):
        ops.submit_batch([request(1.0), request(value)])
    assert float(ops.submit(request(2**64)).args[2]) == 2**64  # exact: accepted


def test_the_value_is_sent_as_its_canonical_text() -> None:
    # '%.17g': the same digits the scripts' fmt() writes, so they reuse it unformatted.
    assert ops.submit(request(0.1)).args[2] == b"0.10000000000000001"
    assert ops.submit(request(1e20)).args[2] == b"1e+20"
    assert float(ops.submit(request(5e-324)).args[2]) == 5e-324


def test_negative_zero_is_sent_as_zero() -> None:
    call = ops.submit(request(-0.0))
    assert call.args[2] == b"0"


def test_submit_encodes_keys_in_target_order() -> None:
    call = ops.submit(request(7.5))
    assert call.script is not None and call.script.name == "ranked.leaderboard:submit"
    assert list(call.keys) == [TARGET.key, TARGET.dense_key, TARGET.counts_key]
    # One plain target: the short form (ARGV[1] 0), its TTL last.
    assert list(call.args) == [0, b"m", b"7.5", "set", 1, "dense", 5000]
    batch = ops.submit_batch([request(7.5)])
    assert list(batch.keys) == list(call.keys)
    assert list(batch.args[-2:]) == [5000, 0]  # the target's TTL, then "no ties hash"


def test_only_a_plain_single_target_request_takes_the_short_form() -> None:
    second = Target(b"rk:{a}:w:d", b"rk:{a}:dense:d", b"rk:{a}:dcount:d", None)
    plain = request(1.0)
    longer = [
        SubmitRequest(b"m", 1.0, "set", True, (TARGET, second), RankStyle.DENSE, 0),
        SubmitRequest(b"m", 1.0, "set", True, (TARGET,), RankStyle.DENSE, 0, keep=10),
        request(1, SEED004, 0),
    ]
    assert ops.submit(plain).args[0] == 0
    for other in longer:
        assert ops.submit(other).args[0] == 1


def test_submit_and_remove_declare_the_ties_hash() -> None:
    with_ties = Target(TARGET.key, TARGET.dense_key, TARGET.counts_key, None, b"rk:{a}:ties:all")
    call = ops.submit(
        SubmitRequest(b"m", 1.0, "set", True, (with_ties,), RankStyle.UNIQUE, 0, tie=b"42")
    )
    assert list(call.keys)[-1] == b"rk:{a}:ties:all"
    assert list(call.args[-4:]) == [b"42", 1, b"", 1]  # tie, one target, no TTL, ties hash
    removal = ops.remove([with_ties, TARGET], [b"m"])
    assert list(removal.keys)[3] == b"rk:{a}:ties:all" and len(removal.keys) == 7
    assert list(removal.args) == [2, 1, 0, b"m"]


def test_composite_time_outside_the_budget_is_refused() -> None:
    before_epoch = SEED004.epoch_ms - 1
    past_the_end = SEED004.epoch_ms + (2**32) * 1000
    for now_ms in (before_epoch, past_the_end):
        with pytest.raises(OutOfRangeError):
            ops.submit(request(5, SEED004, now_ms))


def test_composite_needs_an_integer_score_and_a_53_bit_layout() -> None:
    with pytest.raises(OutOfRangeError):
        ops.submit(request(1.5, SEED004, 0))
    with pytest.raises(LayoutError):
        ops.submit(request(1, Composite(30, 30, 0, 1000), 0))
    with pytest.raises(LayoutError):
        ops.submit(request(1, Composite(21, 32, 0, 0), 0))


def test_composite_packing_fields_match_the_core_arithmetic() -> None:
    # seed 004: 0x7FFFFFFF - unix_seconds in the low 32 bits.
    now_ms = 1_700_000_000_123
    call = ops.submit(request(9, SEED004, now_ms))
    scale, score_min, score_max, field = call.args[8:12]
    assert (scale, score_min, score_max) == (2**32, 0, 2**21 - 1)
    assert field == 0x7FFFFFFF - now_ms // 1000


def test_empty_inputs_need_no_round_trip() -> None:
    for call in (
        ops.submit_batch([]),
        ops.ranks(TARGET, [], True, RankStyle.UNIQUE),
        ops.page(TARGET, 5, 4, True, RankStyle.UNIQUE),
        ops.by_score(TARGET, 0.0, 1.0, 0, 0, True, RankStyle.UNIQUE),
        ops.page_after(TARGET, 1.0, b"m", 0, True, RankStyle.UNIQUE),
        ops.by_score(TARGET, 2.0, 1.0, 0, 10, True, RankStyle.UNIQUE),
        ops.remove([TARGET], []),
        ops.delete([]),
        ops.hash_get(b"h", []),
        ops.set_add(b"s", []),
        ops.scores(TARGET.key, []),
    ):
        assert not call.needs_io


def test_negative_positions_ttls_and_unknown_styles_are_refused() -> None:
    with pytest.raises(ValueError, match="start"):
        ops.page(TARGET, -1, 3, True, RankStyle.UNIQUE)
    with pytest.raises(ValueError, match="ttl_ms"):
        ops.hash_set(b"h", {b"f": b"v"}, 0)
    with pytest.raises(ValueError, match="style"):
        ops.ranks(TARGET, [b"m"], True, "sparse")
    with pytest.raises(ValueError, match="keep"):
        ops.submit(SubmitRequest(b"m", 1.0, "set", True, (TARGET,), RankStyle.DENSE, 0, keep=-1))


def test_range_bounds_are_exact_and_infinite_bounds_use_redis_words() -> None:
    call = ops.count(TARGET.key, -math.inf, 0.1)
    assert call.args == ["ZCOUNT", TARGET.key, b"-inf", 0.1]
    assert ops.count(TARGET.key).args == ("ZCARD", TARGET.key)
    with pytest.raises(InvalidScoreError):
        ops.count(TARGET.key, math.nan, 1.0)


def test_submit_replies_decode_to_outcomes() -> None:
    call = ops.submit(request(1.0))
    reply = [b"0.10000000000000001", None, 3, None, 1]
    assert call.decode(reply) == (SubmitOutcome(0.1, None, 3, None, True),)


def test_batch_replies_regroup_by_each_requests_targets() -> None:
    two = SubmitRequest(b"m", 1.0, "set", True, (TARGET, TARGET), RankStyle.DENSE, 0)
    call = ops.submit_batch([request(1.0), two])
    reply = [b"1", None, 1, None, 1, b"2", b"1", 1, 1, 1, b"2", None, None, None, 0]
    assert call.decode(reply) == [
        (SubmitOutcome(1.0, None, 1, None, True),),
        (SubmitOutcome(2.0, 1.0, 1, 1, True), SubmitOutcome(2.0, None, None, None, False)),
    ]


def test_script_error_prefixes_map_to_typed_errors() -> None:
    assert isinstance(ops.translate_error("RANKED_OUT_OF_RANGE score 9"), OutOfRangeError)
    assert isinstance(ops.translate_error("RANKED_INVALID_SCORE incr gives inf"), InvalidScoreError)
    other = ops.translate_error("WRONGTYPE Operation against a key holding the wrong kind")
    assert isinstance(other, ResponseError)
    assert str(other).startswith("WRONGTYPE")


def test_scripts_carry_the_shared_library_and_a_stable_sha() -> None:
    submit = feature_script("ranked.leaderboard", "submit")
    assert b"local function set_score" in submit.source  # the board's own library
    assert len(submit.sha) == 40
    assert feature_script("ranked.leaderboard", "submit") is submit
    limiter = feature_script("ranked.ratelimit", "fixed_window")
    assert b"local function instant_us" in limiter.source  # the backends' library
    assert b"set_score" not in limiter.source


def test_server_clock_uses_the_midpoint_of_the_round_trip() -> None:
    clock = ops.ServerClock(local=lambda: 1000.0)
    assert clock.due
    clock.update((1000, 250_999), sent_ms=999_990, received_ms=1_000_010)
    assert clock.offset_ms == 1_000_250 - 1_000_000
    assert clock.now_ms() == 1_000_250
    assert not clock.due
    clock.invalidate()
    assert clock.due
