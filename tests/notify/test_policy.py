"""The pure part of notifications: which changes a policy tells (seed 003's
``should_notify`` and its thresholds), the schedule of diffs (``is_notification_period``
and the interval grid), the stable ids, the presets and the refused settings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ranked import NotifyConfigError
from ranked.notify import (
    FINAL_DAY,
    MEANINGFUL,
    PRESETS,
    ChangeKind,
    NotifyPolicy,
    changes,
    notification_id,
    sign,
    verify,
)
from ranked.notify.schedule import active, epoch_us, first_slot_from, slot_of

MINUTE = 60_000_000
HOUR = 60 * MINUTE


def _kind(policy: NotifyPolicy, old: int | None, new: int | None) -> tuple[str, int | None] | None:
    found = changes(policy, {"m": old} if old is not None else {}, {"m": (new, 1.0)})
    return None if not found else (found[0].kind.value, found[0].threshold)


@pytest.mark.parametrize(
    ("old", "new", "told"),
    [
        (11, 10, ("entered_top", 10)),
        (None, 7, ("entered_top", 10)),
        (5, 3, ("entered_top", 3)),
        (40, 2, ("entered_top", 3)),  # the smallest top entered
        (2, 1, ("first_taken", None)),
        (30, 1, ("first_taken", None)),
        (1, 2, ("first_lost", None)),
        (1, None, ("first_lost", None)),
        (9, 4, None),  # already in the top 10, not into the top 3
        (12, 11, None),
        (3, 2, None),
        (1, 1, None),
        (4, 12, None),  # falling out is not told by the meaningful kinds
    ],
)
def test_meaningful_changes_follow_seed_003(
    old: int | None, new: int | None, told: tuple[str, int | None] | None
) -> None:
    assert _kind(NotifyPolicy(), old, new) == told


def test_thresholds_are_configurable() -> None:
    policy = NotifyPolicy(thresholds=(5, 50))
    assert _kind(policy, 51, 50) == ("entered_top", 50)
    assert _kind(policy, 6, 5) == ("entered_top", 5)
    assert _kind(policy, 11, 10) is None
    assert policy.read_top == 50


def test_every_change_tells_ups_and_downs_of_members_known_before() -> None:
    policy = PRESETS["every-change"]
    assert _kind(policy, 40, 30) == ("rank_up", None)
    assert _kind(policy, 30, 40) == ("rank_down", None)
    assert _kind(policy, None, 40) is None  # new to the board: no rank before to compare
    assert _kind(policy, 30, 30) is None
    assert _kind(policy, 12, 9) == ("entered_top", 10)


def test_kinds_can_be_narrowed() -> None:
    only_first = NotifyPolicy(kinds=frozenset({ChangeKind.FIRST_TAKEN}))
    assert _kind(only_first, 2, 1) == ("first_taken", None)
    assert _kind(only_first, 1, 2) is None
    assert _kind(only_first, 11, 2) is None
    assert only_first.read_top == 1


def test_seed_003_is_the_combined_plan() -> None:
    assert FINAL_DAY is PRESETS["final-day"]
    assert FINAL_DAY.interval == timedelta(minutes=30)
    assert FINAL_DAY.within == timedelta(hours=24)
    assert FINAL_DAY.kinds == MEANINGFUL
    assert FINAL_DAY.thresholds == (10,)
    assert _kind(FINAL_DAY, 5, 3) is None  # top 3 is not in seed 003's plan
    assert _kind(FINAL_DAY, 11, 3) == ("entered_top", 10)
    changed = NotifyPolicy.preset("final-day", within=timedelta(hours=6))
    assert changed.within == timedelta(hours=6) and changed.interval == FINAL_DAY.interval


@pytest.mark.parametrize(
    "settings",
    [
        {"interval": timedelta(0)},
        {"interval": timedelta(seconds=-5)},
        {"interval": 30},
        {"kinds": frozenset()},
        {"kinds": frozenset({"entered_top_10"})},
        {"thresholds": (0,)},
        {"thresholds": (10_001,)},
        {"thresholds": (2.5,)},
        {"thresholds": ()},
        {"within": timedelta(0)},
        {"top": 0},
        {"ends_at": datetime(2026, 1, 1)},  # naive
    ],
)
def test_bad_settings_are_refused(settings: dict[str, object]) -> None:
    with pytest.raises(NotifyConfigError):
        NotifyPolicy(**settings)  # type: ignore[arg-type]


def test_an_unknown_preset_is_refused() -> None:
    with pytest.raises(NotifyConfigError, match="no notification preset"):
        NotifyPolicy.preset("loud")


def test_the_period_is_the_last_hours_before_the_end() -> None:
    end = epoch_us(datetime(2026, 3, 8, tzinfo=UTC))
    assert not active(FINAL_DAY, end - 24 * HOUR - 1, end)
    assert active(FINAL_DAY, end - 24 * HOUR, end)
    assert active(FINAL_DAY, end, end)
    assert not active(FINAL_DAY, end + 1, end)
    assert not active(FINAL_DAY, end, None)  # a window that never ends has no last hours
    assert active(NotifyPolicy(), 0, None)


def test_diffs_run_on_the_interval_grid_within_the_period() -> None:
    end = epoch_us(datetime(2026, 3, 8, tzinfo=UTC))
    first = first_slot_from(FINAL_DAY, None, end)
    assert first == end - 24 * HOUR
    assert first_slot_from(FINAL_DAY, first, end) == first + 30 * MINUTE
    assert first_slot_from(FINAL_DAY, end - 1, end) == end
    assert first_slot_from(FINAL_DAY, end, end) is None
    assert slot_of(end - 29 * MINUTE, 30 * MINUTE) == end - 30 * MINUTE
    assert first_slot_from(NotifyPolicy(), 7 * MINUTE, None) == 10 * MINUTE


def test_ids_are_stable_and_distinct() -> None:
    one = notification_id("b", "s:cup", 123, "ann", "entered_top", 10)
    assert one == notification_id("b", "s:cup", 123, "ann", "entered_top", 10)
    assert len(one) == 32 and int(one, 16) >= 0
    others = {
        notification_id("c", "s:cup", 123, "ann", "entered_top", 10),
        notification_id("b", "all", 123, "ann", "entered_top", 10),
        notification_id("b", "s:cup", 124, "ann", "entered_top", 10),
        notification_id("b", "s:cup", 123, "bob", "entered_top", 10),
        notification_id("b", "s:cup", 123, "ann", "entered_top", 3),
        notification_id("b", "s:cup", 123, "ann", "first_taken", None),
    }
    assert one not in others and len(others) == 6


def test_signatures_verify_with_the_secret_only() -> None:
    body = b'{"id":"x"}'
    signature = sign("s3cret", 1_700_000_000, body)
    assert signature.startswith("sha256=") and len(signature) == 7 + 64
    assert verify("s3cret", "1700000000", body, signature, now=1_700_000_010)
    assert not verify("other", "1700000000", body, signature, now=1_700_000_010)
    assert not verify("s3cret", "1700000001", body, signature, now=1_700_000_010)
    assert not verify("s3cret", "1700000000", body + b" ", signature, now=1_700_000_010)
    assert not verify("s3cret", "1700000000", body, signature, now=1_700_001_000)  # replay
    assert not verify("s3cret", "-1", body, signature, now=1_700_000_010)
