from collections.abc import Sequence

class Verifier:
    """The HMAC-SHA256 check of signed submissions (see ``ranked.guard.signing``)."""

    def __init__(self, keys: Sequence[tuple[bytes, float | None]]) -> None: ...
    def __call__(
        self,
        now: float,
        board: str,
        member: str | bytes,
        score: float,
        client_time: int,
        nonce: str,
        signature: str,
        /,
    ) -> bool: ...

def rounds(name: str | None = None, /) -> str:
    """The SHA-256 compression in use (schedule and rounds), ``"x86"`` (the processor's SHA
    extensions) or ``"c"``; given a name, switches to it first (for tests). ValueError for
    one not here."""
