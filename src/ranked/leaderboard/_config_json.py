"""A board's configuration as JSON: what its ``config`` journal events hold, so that the
journal knows how each board was configured and a rebuild of every board can open them.

``to_json`` writes every option of :class:`~ranked.leaderboard.config.BoardConfig`;
``options`` reads it back as the keyword arguments of ``Leaderboard`` (None for a board
whose tie-break is a layout object or whose windows use a time zone other than UTC: those
are written for the record, and their boards are opened with their configuration given).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..core.windows import Season, WindowPlan
from .config import BoardConfig

__all__ = ["options", "to_json"]


def to_json(config: BoardConfig) -> dict[str, Any]:
    """Every option of ``config`` as JSON values."""
    windows = config.windows
    tie = config.tie_break
    return {
        "higher_is_better": config.higher_is_better,
        "operator": config.operator,
        "tie_break": tie if isinstance(tie, str) else repr(tie),
        "windows": {
            "kinds": [str(kind) for kind in windows.kinds],
            "seasons": [[s.name, s.start.isoformat(), s.end.isoformat()] for s in windows.seasons],
            "timezone": str(windows.timezone),
            "retention_s": windows.retention.total_seconds(),
        },
        "rank_style": str(config.rank_style),
        "keep": config.keep,
        "keep_buffer": config.keep_buffer,
        "max_page_size": config.max_page_size,
        "namespace": config.namespace,
    }


def options(found: dict[str, Any]) -> dict[str, Any] | None:
    """The ``Leaderboard`` keyword arguments of a :func:`to_json` value, or None when the
    board must be opened with its configuration given (see the module docstring)."""
    from datetime import timedelta

    windows = found["windows"]
    if found["tie_break"] not in ("member", "time", "secondary") or windows["timezone"] != "UTC":
        return None
    plan = WindowPlan(
        kinds=tuple(windows["kinds"]),
        seasons=tuple(
            Season(name, datetime.fromisoformat(start), datetime.fromisoformat(end))
            for name, start, end in windows["seasons"]
        ),
        timezone=UTC,
        retention=timedelta(seconds=windows["retention_s"]),
    )
    return {
        "higher_is_better": found["higher_is_better"],
        "operator": found["operator"],
        "tie_break": found["tie_break"],
        "windows": plan,
        "rank_style": found["rank_style"],
        "keep": found["keep"],
        "keep_buffer": found["keep_buffer"],
        "max_page_size": found["max_page_size"],
        "namespace": found["namespace"],
    }
