"""Header rendering: exact IETF draft-10 and legacy texts for hand-made decisions."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from ranked.errors import OutOfRangeError, RankedError
from ranked.ratelimit.headers import (
    QUOTA_EXCEEDED,
    TEMPORARY_REDUCED_CAPACITY,
    check_policy_names,
    most_restrictive,
    policy_value,
    problem_details,
    problem_json,
    rate_limit_headers,
    ratelimit_value,
    reset_seconds,
    retry_after_seconds,
    sf_string,
    window_seconds,
)
from ranked.ratelimit.policy import Policy, RateLimitConfigError
from ranked.ratelimit.result import Decision

MINUTE = Policy(100, 60, "sliding_log", name="minute")
DAY = Policy(1000, 86400, "fixed_window", name="day")


def allowed(policy: Policy, remaining: int, reset_after: float) -> Decision:
    return Decision(True, policy.limit, remaining, reset_after, None, policy)


def denied(policy: Policy, retry_after: float, reset_after: float = 60.0) -> Decision:
    return Decision(False, policy.limit, 0, reset_after, retry_after, policy)


def test_sf_string_quotes_and_escapes() -> None:
    assert sf_string("default") == '"default"'
    assert sf_string('a"b\\c') == '"a\\"b\\\\c"'
    assert sf_string("per user") == '"per user"'


@pytest.mark.parametrize("name", ["caf\u00e9", "tab\there", "new\nline", "\x7f"])
def test_sf_string_refuses_what_a_header_cannot_carry(name: str) -> None:
    with pytest.raises(RateLimitConfigError) as raised:
        sf_string(name)
    assert isinstance(raised.value, RankedError)
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize(
    ("window", "w"),
    [(60, 60), (60.0, 60), (86400, 86400), (0.5, 1), (0.000001, 1), (1.5, 2), (59.9999999, 60)],
)
def test_window_is_whole_seconds_rounded_up(window: float, w: int) -> None:
    assert window_seconds(Policy(10, window)) == w


def test_t_is_reset_after_when_allowed_and_retry_after_when_denied() -> None:
    assert reset_seconds(allowed(MINUTE, 99, 60.0)) == 60
    assert reset_seconds(allowed(MINUTE, 99, 29.2)) == 30
    assert reset_seconds(allowed(MINUTE, 100, 0.0)) == 0
    assert reset_seconds(allowed(MINUTE, 99, 3.0000000004)) == 3  # float noise is no second
    assert reset_seconds(denied(MINUTE, retry_after=4.2, reset_after=60.0)) == 5
    assert reset_seconds(denied(MINUTE, retry_after=0.001)) == 1  # never 0 when denied


def test_policy_and_ratelimit_are_structured_field_lists() -> None:
    assert policy_value([MINUTE]) == '"minute";q=100;w=60'
    assert policy_value([MINUTE, DAY]) == '"minute";q=100;w=60, "day";q=1000;w=86400'
    decisions = [allowed(MINUTE, 42, 17.5), allowed(DAY, 900, 3600.0)]
    assert ratelimit_value(decisions) == '"minute";r=42;t=18, "day";r=900;t=3600'


def test_allowed_headers_carry_no_retry_after() -> None:
    headers = rate_limit_headers([allowed(MINUTE, 99, 60.0)])
    assert headers == [
        ("RateLimit-Policy", '"minute";q=100;w=60'),
        ("RateLimit", '"minute";r=99;t=60'),
        ("X-RateLimit-Limit", "100"),
        ("X-RateLimit-Remaining", "99"),
        ("X-RateLimit-Reset", "60"),
    ]


def test_denied_headers_add_retry_after_equal_to_t() -> None:
    headers = rate_limit_headers([denied(MINUTE, retry_after=12.3, reset_after=59.5)])
    assert headers == [
        ("RateLimit-Policy", '"minute";q=100;w=60'),
        ("RateLimit", '"minute";r=0;t=13'),
        ("X-RateLimit-Limit", "100"),
        ("X-RateLimit-Remaining", "0"),
        ("X-RateLimit-Reset", "60"),
        ("Retry-After", "13"),
    ]


@pytest.mark.parametrize("style", ["both", "ietf", "legacy", None])
def test_styles(style: str | None) -> None:
    allow = rate_limit_headers([allowed(MINUTE, 5, 1.0)], style=style)  # type: ignore[arg-type]
    deny = rate_limit_headers([denied(MINUTE, 2.0)], style=style)  # type: ignore[arg-type]
    names = [name for name, _ in allow]
    assert ("RateLimit" in names) == (style in ("both", "ietf"))
    assert ("RateLimit-Policy" in names) == (style in ("both", "ietf"))
    assert ("X-RateLimit-Reset" in names) == (style in ("both", "legacy"))
    assert "Retry-After" not in names
    assert [name for name, _ in deny] == [*names, "Retry-After"]
    assert deny[-1] == ("Retry-After", "2")


def test_legacy_reset_as_epoch() -> None:
    headers = dict(
        rate_limit_headers(
            [allowed(MINUTE, 7, 29.5)],
            style="legacy",
            reset="epoch",
            clock=lambda: 1_700_000_000.25,
        )
    )
    assert headers["X-RateLimit-Reset"] == "1700000030"


@pytest.mark.parametrize("reading", [1e13, -1.0, float("inf"), "now"])
def test_an_epoch_clock_out_of_range_is_refused(reading: object) -> None:
    with pytest.raises(OutOfRangeError, match="the reset clock's reading"):
        rate_limit_headers(
            [allowed(MINUTE, 7, 29.5)],
            reset="epoch",
            clock=lambda: reading,  # type: ignore[arg-type,return-value]
        )
    rate_limit_headers([allowed(MINUTE, 7, 29.5)], clock=lambda: reading)  # type: ignore[arg-type,return-value]


def test_several_policies_most_restrictive_drives_legacy_and_retry_after() -> None:
    day_denied = denied(DAY, retry_after=3600.2, reset_after=7200.0)
    minute_denied = denied(MINUTE, retry_after=30.0, reset_after=59.0)
    decisions = [minute_denied, day_denied]
    headers = dict(rate_limit_headers(decisions))
    assert headers["RateLimit"] == '"minute";r=0;t=30, "day";r=0;t=3601'
    assert headers["X-RateLimit-Limit"] == "1000"
    assert headers["X-RateLimit-Reset"] == "7200"
    # never earlier than the t of any violated policy
    assert headers["Retry-After"] == "3601"
    assert retry_after_seconds(decisions) == 3601


def test_retry_after_ignores_allowed_policies() -> None:
    decisions = [allowed(DAY, 10, 80000.0), denied(MINUTE, retry_after=2.5)]
    headers = dict(rate_limit_headers(decisions))
    assert headers["Retry-After"] == "3"
    assert headers["X-RateLimit-Limit"] == "100"
    assert headers["RateLimit"] == '"day";r=10;t=80000, "minute";r=0;t=3'


def test_policies_advertised_even_when_not_decided() -> None:
    headers = dict(rate_limit_headers([denied(MINUTE, 1.0)], policies=[MINUTE, DAY]))
    assert headers["RateLimit-Policy"] == '"minute";q=100;w=60, "day";q=1000;w=86400'
    assert headers["RateLimit"] == '"minute";r=0;t=1'


def test_most_restrictive() -> None:
    low = allowed(MINUTE, 3, 10.0)
    high = allowed(DAY, 500, 100.0)
    assert most_restrictive([high, low]) is low
    tie_later = allowed(DAY, 3, 50.0)
    assert most_restrictive([low, tie_later]) is tie_later
    short, long = denied(MINUTE, 1.0), denied(DAY, 9.0)
    assert most_restrictive([low, short, long]) is long
    with pytest.raises(ValueError):
        most_restrictive([])


def test_no_decision_no_headers() -> None:
    assert rate_limit_headers([]) == []


def test_problem_details_quota_exceeded() -> None:
    decisions = [allowed(DAY, 10, 100.0), denied(MINUTE, retry_after=4.5)]
    assert problem_details(decisions) == {
        "type": QUOTA_EXCEEDED,
        "title": "Request cannot be satisfied as assigned quota has been exceeded",
        "status": 429,
        "detail": "Retry in 5 seconds.",
        "violated-policies": ["minute"],
    }
    assert json.loads(problem_json(decisions)) == problem_details(decisions)


def test_problem_details_reduced_capacity_names_every_policy() -> None:
    body = json.loads(
        problem_json(
            [], problem_type=TEMPORARY_REDUCED_CAPACITY, status=503, policies=[MINUTE, DAY]
        )
    )
    assert body == {
        "type": TEMPORARY_REDUCED_CAPACITY,
        "title": "Request cannot be satisfied due to temporary server capacity constraints",
        "status": 503,
        "violated-policies": ["minute", "day"],
    }


def test_policy_names_must_be_distinct() -> None:
    check_policy_names([MINUTE, DAY])
    with pytest.raises(RateLimitConfigError, match="two policies"):
        check_policy_names([MINUTE, Policy(5, 1, name="minute")])
    with pytest.raises(RateLimitConfigError):
        check_policy_names([Policy(5, 1, name="\u00e9t\u00e9")])


def test_doc_examples() -> None:
    """docs/ratelimit-http.md: every example runs and prints what the page says."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "ratelimit-http.md"
    result = doctest.testfile(str(doc), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 30
    assert result.failed == 0
