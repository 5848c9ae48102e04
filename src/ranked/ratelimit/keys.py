"""Key layout of the limiters: every key of one (policy, identity) shares one hash tag.

``<prefix>:{<policy name>:<identity>}:<suffix>``, e.g. ``rl:{default:user:42}:log``. The
braces make Redis Cluster hash only ``<policy name>:<identity>``, so a limiter's keys sit in
one slot (its script may touch them all) while identities spread over the cluster.

The identity is arbitrary bytes (hostile input: a user name, an IP), so the layout must
not let one identity reach another's keys:

- the policy name is escaped (``%`` ``:`` ``{`` ``}`` become ``%25`` ``%3A`` ``%7B``
  ``%7D``): the first ``:`` after the brace ends it, so two (name, identity) pairs never
  make the same text, and the tag always starts inside the braces we put;
- each suffix starts with the tag's closing ``}`` and none is the end of another, so the
  keys of two identities never coincide whatever bytes the identities hold;
- an identity holding ``}`` ends the hash tag early: all its keys still share every byte
  before their suffix, hence one slot.
"""

from __future__ import annotations

from typing import Final

from .policy import Algorithm, Policy, RateLimitConfigError

__all__ = ["SUFFIXES", "KeyLayout"]

SUFFIXES: Final[dict[Algorithm, tuple[bytes, ...]]] = {
    "fixed_window": (b"}:fw",),
    "sliding_log": (b"}:log", b"}:units"),
    "sliding_counter": (b"}:swc",),
    "token_bucket": (b"}:tb",),
    "gcra": (b"}:tat",),
}
"""The keys of each algorithm, after the identity (each begins by closing the tag)."""

_ESCAPES: Final = str.maketrans({"%": "%25", ":": "%3A", "{": "%7B", "}": "%7D"})


class KeyLayout:
    """The keys of one policy under one prefix; :meth:`keys` adds the identity."""

    __slots__ = ("head", "suffixes")

    def __init__(self, prefix: str, policy: Policy) -> None:
        if not isinstance(prefix, str) or "{" in prefix or "}" in prefix:
            raise RateLimitConfigError(f"prefix must be a str without braces, not {prefix!r}")
        name = policy.name.translate(_ESCAPES)
        self.head = f"{prefix}:{{{name}:".encode()
        self.suffixes = SUFFIXES[policy.algorithm]

    def keys(self, identity: bytes) -> tuple[bytes, ...]:
        """Every key of ``identity`` (already bytes), in the script's ``KEYS`` order."""
        head = self.head + identity
        return tuple(head + suffix for suffix in self.suffixes)
