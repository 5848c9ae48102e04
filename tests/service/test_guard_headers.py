"""The guarded submit route's rate-limit headers: the policy's header made once, the
pairs the same as ``rate_limit_headers(style="ietf")``'s."""

from __future__ import annotations

import pytest

from ranked.ratelimit import Decision, Policy, rate_limit_headers
from ranked.service.guard_routes import _limit_headers

DECISIONS = [
    Decision(True, 10, 3, 0.5, None, Policy(10, 1, "gcra", name="player")),
    Decision(True, 1_000_000, 999_999, 0.000001, None, Policy(1_000_000, 1, "gcra", name="ip")),
    Decision(False, 10, 0, 2.5, 1.2, Policy(10, 60, name="ip")),
    Decision(False, 5, 0, 59.0, 58.2, Policy(5, 60, "token_bucket", 8, name="player")),
]


@pytest.mark.parametrize("decision", DECISIONS)
def test_limit_headers_match_the_library(decision: Decision) -> None:
    expected = [
        (name.lower().encode(), value.encode())
        for name, value in rate_limit_headers([decision], style="ietf")
    ]
    assert _limit_headers(decision) == expected
    assert _limit_headers(decision) == expected  # the policy's header from the cache


def test_a_repeated_decision_reuses_its_header_and_a_changed_one_does_not() -> None:
    policy = Policy(10, 1, "gcra", name="player")
    sequence = [
        Decision(True, 10, 9, 0.1, None, policy),
        Decision(True, 10, 9, 0.1, None, policy),  # repeated: the kept header
        Decision(True, 10, 8, 0.1, None, policy),  # another remaining
        Decision(True, 10, 8, 1.2, None, policy),  # another reset: t=2
        Decision(False, 10, 0, 1.2, 0.4, policy),  # denied: never the kept header
        Decision(True, 10, 8, 1.2, None, policy),  # the kept header again
    ]
    for decision in sequence:
        expected = [
            (name.lower().encode(), value.encode())
            for name, value in rate_limit_headers([decision], style="ietf")
        ]
        assert _limit_headers(decision) == expected
    first, again = (_limit_headers(sequence[1])[1] for _ in range(2))
    assert first is again  # made once while the decisions repeat it
