from typing import Any

from ._signature import Verifier

class Front:
    """The guard's in-process stage for a client's common submission (``_front.c``)."""

    def __init__(
        self,
        verifier: Verifier | Any | None,
        trusted_only: bool,
        min_score: float | None,
        max_score: float | None,
        skew: float,
        board: str,
        player_head: bytes,
        nonce_head: bytes,
        held: bytes,
        banned: bytes,
        rp: tuple[bytes, tuple[bytes, ...]] | None,
        ri: tuple[bytes, tuple[bytes, ...]] | None,
        client: tuple[Any, ...],
        limits: tuple[Any, ...],
        operator: bytes,
        ttl: int,
        /,
    ) -> None: ...
    def __call__(
        self,
        member: Any,
        score: Any,
        client_time: Any,
        nonce: Any,
        signature: Any,
        ip: Any,
        key_scope: Any,
        now: float,
        window_key: bytes,
        /,
    ) -> tuple[bytes, float, list[bytes], list[Any]] | None: ...
