"""Typed errors of the leaderboard layer (each also a ``ValueError``: a bad argument)."""

from __future__ import annotations

from ..errors import RankedError

__all__ = ["BoardConfigError", "MemberDataError", "PageSizeError"]


class PageSizeError(RankedError, ValueError):
    """A page size, count or offset is not a positive int, or exceeds the board's
    ``max_page_size`` (reads are always bounded)."""


class BoardConfigError(RankedError, ValueError):
    """A board is configured with values that cannot work together, for example a time
    tie-break whose direction disagrees with the board's, or a negative ``keep``."""


class MemberDataError(RankedError, ValueError):
    """Member data or board metadata is not a JSON object (a dict with str keys and
    JSON-serialisable values), or a display name is not a str."""
