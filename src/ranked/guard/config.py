"""A write guard's configuration: which layers run, with what limits (docs/guard.md).

:class:`GuardConfig` is immutable and checked once, when it is made: a guard never meets a
bad limit while it judges a submission. Every layer is off until configured; an empty
configuration accepts everything (and still journals its verdicts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final

from ..core.limits import check_duration
from ..errors import GuardConfigError
from ..ratelimit import Policy

__all__ = ["GuardConfig", "Secret"]

MAX_SKEW_S: Final = 24 * 3600.0
"""The widest clock skew window: nonces are kept twice as long."""


@dataclass(frozen=True, slots=True)
class Secret:
    """One HMAC-SHA256 key. ``until``: Unix seconds after which it is no longer accepted
    (None: no end). Rotation: put the new secret first with no end, keep the previous one
    with ``until`` at the end of the grace period."""

    key: bytes
    until: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.key, bytes) or len(self.key) < 16:
            raise GuardConfigError("a secret's key must be at least 16 bytes")
        if self.until is not None and (
            isinstance(self.until, bool)
            or not isinstance(self.until, int | float)
            or not math.isfinite(self.until)
        ):
            raise GuardConfigError(f"until must be Unix seconds or None, not {self.until!r}")

    def valid_at(self, now: float) -> bool:
        return self.until is None or now < self.until


def _number(value: object, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise GuardConfigError(f"{name} must be a finite number or None, not {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardConfig:
    """The layers of one board's guard, cheapest first (each off when None / empty):

    - ``trusted_only``: only trusted writers (a ``write``- or ``admin``-scope key, a
      server identity) may submit; the ban list is always on;
    - ``min_score`` / ``max_score``: sanity bounds (inclusive);
    - ``secrets``: HMAC-SHA256 keys (:class:`Secret`; the first signs, all valid ones
      verify); when given, an untrusted submission must carry ``client_time`` (Unix ms),
      ``nonce`` and ``signature`` (:func:`ranked.guard.sign`);
    - ``skew``: seconds a signed submission's client time may differ from the server's;
      each nonce is kept ``2 * skew`` and accepted once;
    - ``player_limit`` / ``ip_limit``: rate-limit :class:`~ranked.ratelimit.Policy` per
      member and per client IP;
    - ``max_step``: the largest change from the member's last accepted score in one
      submission; ``max_change`` within ``change_span`` seconds;
    - ``z_threshold`` with ``z_min_history``: a score whose z-score against the member's
      own accepted scores exceeds the threshold (in absolute value) is held as pending;
    - ``pending_rank``: a score that would rank at or above this rank (1 = the top) in the
      board's primary window is held as pending;
    - ``webhook``: an http(s) URL that receives every held submission (JSON) and answers
      whether to promote it (docs/guard.md), retried with backoff when it fails;
      ``webhook_secret`` signs each POST (``X-Ranked-Signature``, as notification
      webhooks are signed: :mod:`ranked.core.webhook_signature`);
    - ``audit_accepted``: journal accepted verdicts too (rejections, holds and moderation
      are always journaled on a board with a journal).

    Trusted writers skip the signature, rate, velocity, z-score and pending layers (the
    ban list and the bounds still apply).
    """

    trusted_only: bool = False
    min_score: float | None = None
    max_score: float | None = None
    secrets: tuple[Secret, ...] = ()
    skew: float = 30.0
    player_limit: Policy | None = None
    ip_limit: Policy | None = None
    max_step: float | None = None
    max_change: float | None = None
    change_span: float | None = None
    z_threshold: float | None = None
    z_min_history: int = 10
    pending_rank: int | None = None
    webhook: str | None = None
    webhook_secret: str | None = None
    audit_accepted: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.trusted_only, bool) or not isinstance(self.audit_accepted, bool):
            raise GuardConfigError("trusted_only and audit_accepted must be bools")
        low = _number(self.min_score, "min_score")
        high = _number(self.max_score, "max_score")
        if low is not None and high is not None and low > high:
            raise GuardConfigError(f"min_score {low} is above max_score {high}")
        secrets = self.secrets
        if isinstance(secrets, Secret) or not isinstance(secrets, Sequence):
            raise GuardConfigError("secrets must be a sequence of Secret")
        if not all(isinstance(s, Secret) for s in secrets):
            raise GuardConfigError("secrets must be a sequence of Secret")
        object.__setattr__(self, "secrets", tuple(secrets))
        skew = _number(self.skew, "skew")
        if skew is None or skew <= 0 or skew > MAX_SKEW_S:
            raise GuardConfigError(f"skew must be in (0, {MAX_SKEW_S:g}] seconds, not {skew!r}")
        for name in ("player_limit", "ip_limit"):
            policy = getattr(self, name)
            if policy is not None and not isinstance(policy, Policy):
                raise GuardConfigError(f"{name} must be a ranked.ratelimit.Policy or None")
        for name in ("max_step", "max_change", "z_threshold"):
            value = _number(getattr(self, name), name)
            if value is not None and value <= 0:
                raise GuardConfigError(f"{name} must be positive, not {value!r}")
        if (self.max_change is None) != (self.change_span is None):
            raise GuardConfigError("max_change and change_span go together")
        span = _number(self.change_span, "change_span")
        if span is not None:
            if span <= 0:
                raise GuardConfigError(f"change_span must be positive, not {span!r}")
            check_duration(span, "change_span")
        for name, least in (("z_min_history", 2), ("pending_rank", 1)):
            value = getattr(self, name)
            if value is None and name == "pending_rank":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise GuardConfigError(f"{name} must be an int >= {least}, not {value!r}")
        hook = self.webhook
        if hook is not None and (
            not isinstance(hook, str) or not hook.startswith(("http://", "https://"))
        ):
            raise GuardConfigError(f"webhook must be an http(s) URL, not {hook!r}")
        secret = self.webhook_secret
        if secret is not None:
            if not isinstance(secret, str) or not 16 <= len(secret) <= 256:
                raise GuardConfigError("webhook_secret must be a str of 16 to 256 characters")
            if hook is None:
                raise GuardConfigError("webhook_secret signs the webhook's POSTs: set webhook")

    @property
    def nonce_ttl_ms(self) -> int:
        """How long a nonce is kept: twice the skew window (a client time may be off by
        ``skew`` either way), in whole ms."""
        return math.ceil(2 * self.skew * 1000)

    @property
    def signed(self) -> bool:
        return bool(self.secrets)

    # -- JSON (the service keeps a board's guard in its metadata) ------------------------

    def to_json(self) -> dict[str, Any]:
        """The configuration as JSON values (secrets as hex; policies as objects)."""
        found: dict[str, Any] = {}
        for each in fields(self):
            if each.name.startswith("_"):
                continue
            value = getattr(self, each.name)
            if each.name == "secrets":
                value = [{"key": s.key.hex(), "until": s.until} for s in value]
            elif isinstance(value, Policy):
                value = {
                    "limit": value.limit,
                    "window": value.window,
                    "algorithm": value.algorithm,
                    "burst": value.burst,
                    "name": value.name,
                }
            found[each.name] = value
        return found

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GuardConfig:
        """The inverse of :meth:`to_json`; :class:`GuardConfigError` for what does not fit."""
        if not isinstance(data, Mapping):
            raise GuardConfigError("a guard configuration is a JSON object")
        known = {each.name for each in fields(cls) if not each.name.startswith("_")}
        unknown = set(data) - known
        if unknown:
            raise GuardConfigError(f"unknown guard settings: {', '.join(sorted(unknown))}")
        given = dict(data)
        try:
            if "secrets" in given:
                given["secrets"] = tuple(
                    Secret(bytes.fromhex(s["key"]), s.get("until")) for s in given["secrets"]
                )
            for name in ("player_limit", "ip_limit"):
                if given.get(name) is not None:
                    given[name] = Policy(**given[name])
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            raise GuardConfigError(f"bad guard setting: {error}") from None
        return cls(**given)
