"""Limiter decisions rendered as HTTP response headers and a problem body (pure functions).

Formats (``docs/ratelimit-http.md`` shows examples):

- IETF draft-ietf-httpapi-ratelimit-headers-10: ``RateLimit-Policy: "<name>";q=<limit>;w=<s>``
  and ``RateLimit: "<name>";r=<remaining>;t=<s>``, each a Structured Field List (RFC 8941)
  with one Item per policy.
- Legacy: ``X-RateLimit-Limit`` / ``-Remaining`` / ``-Reset`` (Reset in delta seconds, or a
  Unix epoch on request) for clients written before the draft.
- ``Retry-After`` (delta seconds) only when a decision is denied, that is on a 429.

Every value here is an integer number of seconds rounded *up*: a client that waits what the
header says is never early.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Final, Literal

from ..core.limits import check_instant
from .policy import Policy, RateLimitConfigError
from .result import Decision

__all__ = [
    "QUOTA_EXCEEDED",
    "TEMPORARY_REDUCED_CAPACITY",
    "HeaderStyle",
    "ResetStyle",
    "check_policy_names",
    "epoch_now",
    "most_restrictive",
    "policy_value",
    "problem_details",
    "problem_json",
    "rate_limit_headers",
    "ratelimit_value",
    "reset_seconds",
    "retry_after_seconds",
    "sf_string",
    "window_seconds",
]

HeaderStyle = Literal["both", "ietf", "legacy"]
"""Which rate-limit headers to send: IETF, legacy ``X-RateLimit-*``, or both."""

ResetStyle = Literal["delta", "epoch"]
"""``X-RateLimit-Reset`` as seconds from now (default) or as a Unix timestamp."""

QUOTA_EXCEEDED: Final = "https://iana.org/assignments/http-problem-types#quota-exceeded"
TEMPORARY_REDUCED_CAPACITY: Final = (
    "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
)
_TITLES: Final = {
    QUOTA_EXCEEDED: "Request cannot be satisfied as assigned quota has been exceeded",
    TEMPORARY_REDUCED_CAPACITY: (
        "Request cannot be satisfied due to temporary server capacity constraints"
    ),
}


def sf_string(text: str) -> str:
    """``text`` as an RFC 8941 sf-string: in double quotes, ``"`` and ``\\`` escaped.

    Raises :class:`RateLimitConfigError` for characters an sf-string cannot carry
    (anything outside printable ASCII), rather than sending a header clients must drop.
    """
    if not all(" " <= char <= "~" for char in text):
        raise RateLimitConfigError(f"{text!r} is not printable ASCII: not an HTTP sf-string")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def check_policy_names(policies: Iterable[Policy]) -> None:
    """Raise :class:`RateLimitConfigError` unless every name is distinct and sf-string safe.

    Run when a middleware or decorator is built, so a bad name fails at startup, not on the
    first request. Two policies of one name could not be told apart in the headers.
    """
    seen: set[str] = set()
    for policy in policies:
        sf_string(policy.name)
        if policy.name in seen:
            raise RateLimitConfigError(f"two policies are named {policy.name!r}: rename one")
        seen.add(policy.name)


def _ceil_seconds(seconds: float) -> int:
    # round() first so float noise (2.0000000001 from a µs conversion) does not add a second.
    return max(0, math.ceil(round(seconds, 6)))


def window_seconds(policy: Policy) -> int:
    """The IETF ``w``: the window in whole seconds, rounded up, at least 1.

    The draft allows positive integers only, so a 0.5 s window is advertised as ``w=1`` and
    a 1.5 s window as ``w=2``; ``q`` stays the policy's limit: the advertised rate
    (``q / w``) is then never above the enforced one.
    """
    return max(1, -(-policy.window_us // 1_000_000))


def reset_seconds(decision: Decision) -> int:
    """The IETF ``t``: ``ceil(retry_after)`` when denied, else ``ceil(reset_after)``.

    Denied: the draft defines ``t`` as the time until *additional* quota is available,
    and ``retry_after`` is exactly when a hit of the same cost would pass, so ``t`` and
    ``Retry-After`` agree. Allowed: the decision knows when the quota is whole again
    (``reset_after``), an upper bound on when more quota appears; a client pacing
    ``r`` requests over ``t`` seconds therefore never exceeds the policy's rate.
    """
    if not decision.allowed and decision.retry_after is not None:
        return max(1, _ceil_seconds(decision.retry_after))
    return _ceil_seconds(decision.reset_after)


def policy_value(policies: Iterable[Policy]) -> str:
    """The ``RateLimit-Policy`` field value: one Item per policy, in order."""
    return ", ".join(
        f"{sf_string(policy.name)};q={policy.limit};w={window_seconds(policy)}"
        for policy in policies
    )


def ratelimit_value(decisions: Iterable[Decision]) -> str:
    """The ``RateLimit`` field value: one Item per decision, in order."""
    return ", ".join(
        f"{sf_string(decision.policy.name)};r={decision.remaining};t={reset_seconds(decision)}"
        for decision in decisions
    )


def most_restrictive(decisions: Sequence[Decision]) -> Decision:
    """The decision that binds: the denied one with the longest wait if any is denied,
    else the one with the fewest remaining units (ties: the later full reset). It drives
    the legacy headers, which have room for one policy only."""
    if not decisions:
        raise ValueError("no decision to choose from")
    denied = [d for d in decisions if not d.allowed]
    if denied:
        return max(denied, key=lambda d: d.retry_after or 0.0)
    return min(decisions, key=lambda d: (d.remaining, -d.reset_after))


def retry_after_seconds(decisions: Iterable[Decision]) -> int | None:
    """``Retry-After`` in whole seconds, or None when every decision allowed.

    The largest ``t`` among the denied decisions: the request cannot pass before every
    violated policy admits it, and ``Retry-After`` is then never earlier than the ``t`` of
    any violated policy (draft-10 section 6).
    """
    waits = [reset_seconds(d) for d in decisions if not d.allowed]
    return max(waits) if waits else None


def epoch_now(clock: Callable[[], float]) -> float:
    """A reading of the clock behind ``X-RateLimit-Reset`` as an epoch, checked: an
    instant of :mod:`ranked.core.limits`, else ``OutOfRangeError``."""
    return check_instant(clock(), "the reset clock's reading")


def rate_limit_headers(
    decisions: Sequence[Decision],
    *,
    style: HeaderStyle | None = "both",
    reset: ResetStyle = "delta",
    policies: Sequence[Policy] | None = None,
    clock: Callable[[], float] = time.time,
) -> list[tuple[str, str]]:
    """The response headers for ``decisions`` (one per policy the request was checked
    against), as ``(name, value)`` pairs in a stable order.

    - ``style``: ``"ietf"``, ``"legacy"``, ``"both"``, or None for neither.
    - ``reset``: ``X-RateLimit-Reset`` as delta seconds (default) or Unix epoch seconds
      (``clock() + reset_after``, rounded up; a reading of ``clock`` outside
      :mod:`ranked.core.limits`' instants raises ``OutOfRangeError``).
    - ``policies``: every policy in force, for ``RateLimit-Policy`` (default: the
      decisions' own), so a policy left unchecked is still advertised.

    ``Retry-After`` is added whatever the style when a decision is denied, and never
    otherwise: send these headers with a 429 exactly when one is denied.
    """
    headers: list[tuple[str, str]] = []
    if decisions and style in ("both", "ietf"):
        advertised = [d.policy for d in decisions] if policies is None else policies
        headers.append(("RateLimit-Policy", policy_value(advertised)))
        headers.append(("RateLimit", ratelimit_value(decisions)))
    if decisions and style in ("both", "legacy"):
        binding = most_restrictive(decisions)
        if reset == "delta":
            reset_value = _ceil_seconds(binding.reset_after)
        else:
            reset_value = math.ceil(round(epoch_now(clock) + binding.reset_after, 6))
        headers.append(("X-RateLimit-Limit", str(binding.limit)))
        headers.append(("X-RateLimit-Remaining", str(binding.remaining)))
        headers.append(("X-RateLimit-Reset", str(reset_value)))
    retry_after = retry_after_seconds(decisions)
    if retry_after is not None:
        headers.append(("Retry-After", str(retry_after)))
    return headers


def problem_details(
    decisions: Sequence[Decision],
    *,
    problem_type: str = QUOTA_EXCEEDED,
    status: int = 429,
    policies: Sequence[Policy] | None = None,
) -> dict[str, object]:
    """An RFC 9457 problem object for a refused request.

    ``violated-policies`` (the draft's extension member) names the denied decisions'
    policies, or, when there are none (a limiter that could not decide), ``policies``.
    """
    violated = [d.policy.name for d in decisions if not d.allowed]
    if not violated and policies is not None:
        violated = [policy.name for policy in policies]
    body: dict[str, object] = {
        "type": problem_type,
        "title": _TITLES.get(problem_type, "Request refused"),
        "status": status,
    }
    retry_after = retry_after_seconds(decisions)
    if retry_after is not None:
        body["detail"] = f"Retry in {retry_after} seconds."
    body["violated-policies"] = violated
    return body


def problem_json(
    decisions: Sequence[Decision],
    *,
    problem_type: str = QUOTA_EXCEEDED,
    status: int = 429,
    policies: Sequence[Policy] | None = None,
) -> bytes:
    """:func:`problem_details` as compact UTF-8 JSON, for ``application/problem+json``."""
    body = problem_details(decisions, problem_type=problem_type, status=status, policies=policies)
    return json.dumps(body, separators=(",", ":")).encode()
