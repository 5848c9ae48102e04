"""The keys of one board's guard, all in the board's Redis Cluster slot.

``<namespace>:guard:{<board>}:<suffix>``: the same hash tag as the board's own keys
(:class:`~ranked.core.keys.BoardKeys`), so the guard's one script may read the board's
window too, but outside the board's prefix (``<namespace>:{<board>}``): clearing, dumping
or rebuilding the board never touches the guard's state::

    ...:p:<member>              hash    the member's last score, span base, n, mean, M2
    ...:n:<nonce>               string  a nonce seen (TTL: twice the skew window)
    ...:held                    hash    pending id -> "<reason>|<submission JSON>"
    ...:banned                  set     banned members
    ...:restored                hash    set once the state is restored (AsyncGuard.restore)
    ...:rp:<policy>:<member>}…  the per-member limiter's keys (ranked.ratelimit's suffixes)
    ...:ri:<policy>:<ip>}…      the per-IP limiter's keys
"""

from __future__ import annotations

from typing import Final

from ..core.keys import BoardKeys
from ..ratelimit import Policy
from ..ratelimit.keys import SUFFIXES

__all__ = ["GuardKeys", "member_bytes"]

_ESCAPES: Final = str.maketrans({"%": "%25", ":": "%3A", "{": "%7B", "}": "%7D"})


def member_bytes(member: str | bytes) -> bytes:
    return member.encode("utf-8", "surrogateescape") if isinstance(member, str) else member


class GuardKeys:
    """The guard's keys for one board (names checked by :class:`BoardKeys`)."""

    __slots__ = ("banned", "board", "held", "marker", "prefix")

    def __init__(self, board: str, namespace: str = "rk") -> None:
        self.board = BoardKeys(board, namespace)
        self.prefix = f"{namespace}:guard:{{{board}}}".encode()
        self.held = self.prefix + b":held"
        self.banned = self.prefix + b":banned"
        self.marker = self.prefix + b":restored"

    def player(self, member: bytes) -> bytes:
        return self.prefix + b":p:" + member

    def nonce(self, nonce: str) -> bytes:
        return self.prefix + b":n:" + nonce.encode()

    def limiter(self, kind: bytes, policy: Policy, identity: bytes) -> tuple[bytes, ...]:
        """A limiter's keys: ``kind`` ``rp`` (member) or ``ri`` (IP); the suffixes of
        :mod:`ranked.ratelimit.keys` keep two identities' keys apart."""
        head, suffixes = self.limiter_parts(kind, policy)
        return tuple(head + identity + suffix for suffix in suffixes)

    def limiter_parts(self, kind: bytes, policy: Policy) -> tuple[bytes, tuple[bytes, ...]]:
        """What :meth:`limiter` puts around the identity: the head and the suffixes (a
        caller making many identities' keys takes these once)."""
        head = b"%s:%s:%s:" % (self.prefix, kind, policy.name.translate(_ESCAPES).encode())
        return head, tuple(SUFFIXES[policy.algorithm])
