"""A board's configuration: direction, operator, tie-break, windows, rank style, trimming.

:class:`BoardConfig` is immutable and validated once; every request a board builds is
derived from it. The free-form *metadata* of a board is not part of it: that lives in the
backend (the board's ``meta`` hash) so it can change later and be shared by processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final, Literal, get_args

from ..core._time import UNIX_EPOCH, micros
from ..core.keys import BoardKeys
from ..core.lex import LexLayout
from ..core.ranks import RankStyle
from ..core.scores import TimeTiebreak
from ..core.windows import WindowKind, WindowPlan
from ..errors import BoardConfigError
from ._requests import Composite, Operator

__all__ = [
    "DEFAULT_MAX_PAGE_SIZE",
    "BoardConfig",
    "TieBreak",
    "default_time_tiebreak",
    "window_plan",
]

TieBreak = Literal["member", "time", "secondary"]
"""``member``: ties in Redis order (member bytes; on a higher-is-better board the greater
member first). ``time``: ties go to the earlier achiever (a packed composite score).
``secondary``: the plain score in the sorted set, a tie-break value per member in the
window's ties hash (lower wins; default: the submission instant in Unix ms), written by
the same atomic backend step as the score (see :mod:`ranked.leaderboard._plan_ties`).
A :class:`~ranked.core.lex.LexLayout` instead makes a member-encoded lexicographic board
(see :mod:`ranked.leaderboard._plan_lex`)."""

SECONDARY: Final = "secondary"

DEFAULT_MAX_PAGE_SIZE: Final = 1000
_OPERATORS: Final = frozenset(get_args(Operator))
_TIME_EPOCH: Final = datetime(2024, 1, 1, tzinfo=UTC)


def default_time_tiebreak(higher_is_better: bool) -> TimeTiebreak:
    """The layout ``tie_break="time"`` uses: whole seconds since 2024-01-01 UTC in 31 bits
    (until 2092), scores in 22 bits (0 .. 4,194,303). Pass your own
    :class:`~ranked.core.scores.TimeTiebreak` for another budget."""
    return TimeTiebreak(
        score_bits=22,
        time_bits=31,
        epoch=_TIME_EPOCH,
        unit=timedelta(seconds=1),
        lower_is_better=not higher_is_better,
    )


def window_plan(windows: WindowPlan | Sequence[str | WindowKind] | str) -> WindowPlan:
    """A :class:`WindowPlan` from a plan, or from kind names such as ``("daily", "all")``."""
    if isinstance(windows, WindowPlan):
        return windows
    if isinstance(windows, str | WindowKind):
        windows = (windows,)
    return WindowPlan(kinds=tuple(WindowKind.parse(kind) for kind in windows))


def _whole_ms(delta: timedelta, what: str) -> int:
    us = micros(delta)
    if us % 1000:
        raise BoardConfigError(f"the time tie-break's {what} must be a whole number of ms")
    return us // 1000


def _composite(layout: TimeTiebreak) -> Composite:
    return Composite(
        score_bits=layout.score_bits,
        time_bits=layout.time_bits,
        epoch_ms=_whole_ms(layout.epoch - UNIX_EPOCH, "epoch"),
        unit_ms=_whole_ms(layout.unit, "unit"),
        signed=layout.signed,
        lower_is_better=layout.lower_is_better,
    )


@dataclass(frozen=True, slots=True)
class BoardConfig:
    """Everything that decides how a board stores and answers; validated on creation.

    ``keep``/``keep_buffer``: when ``keep`` is set each window keeps only its best
    ``keep + keep_buffer`` members (seed 004: show the top ``keep``, keep a buffer below
    so members near the cut can climb back without a history lookup). A ``keep_buffer``
    without ``keep`` is refused: it would trim nothing.
    """

    name: str
    higher_is_better: bool = True
    operator: Operator = "best"
    tie_break: TieBreak | TimeTiebreak | LexLayout = "member"
    windows: WindowPlan = field(default_factory=WindowPlan)
    rank_style: RankStyle = RankStyle.COMPETITION
    keep: int | None = None
    keep_buffer: int = 0
    max_page_size: int = DEFAULT_MAX_PAGE_SIZE
    namespace: str = "rk"
    friends_cache_ms: int = 2000
    """Ignored (still validated, so configurations that set it keep working): friend
    boards read current scores on every call; they were cached this long once."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "rank_style", RankStyle.parse(self.rank_style))
        object.__setattr__(self, "windows", window_plan(self.windows))
        if self.operator not in _OPERATORS:
            raise BoardConfigError(
                f"unknown operator {self.operator!r}; expected one of {sorted(_OPERATORS)}"
            )
        if not isinstance(self.higher_is_better, bool):
            raise BoardConfigError("higher_is_better must be a bool")
        for name, low in (("max_page_size", 1), ("keep_buffer", 0), ("friends_cache_ms", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise BoardConfigError(f"{name} must be an int >= {low}, not {value!r}")
        if self.keep is not None and (
            isinstance(self.keep, bool) or not isinstance(self.keep, int) or self.keep < 1
        ):
            raise BoardConfigError(f"keep must be None or an int >= 1, not {self.keep!r}")
        if self.keep is None and self.keep_buffer:
            raise BoardConfigError(
                f"keep_buffer={self.keep_buffer} needs keep: the buffer is kept below the "
                "top keep members, and a board without keep trims nothing"
            )
        if self.tie_break == "time":
            object.__setattr__(self, "tie_break", default_time_tiebreak(self.higher_is_better))
        elif isinstance(self.tie_break, TimeTiebreak):
            if self.tie_break.lower_is_better == self.higher_is_better:
                raise BoardConfigError(
                    "the TimeTiebreak's lower_is_better must be the opposite of the board's "
                    "higher_is_better (otherwise later achievers would win ties)"
                )
        elif isinstance(self.tie_break, LexLayout):
            self._check_lex()
        elif self.tie_break == SECONDARY:
            self._check_secondary()
        elif self.tie_break != "member":
            raise BoardConfigError(
                "tie_break must be 'member', 'time', 'secondary', a TimeTiebreak "
                f"or a LexLayout, not {self.tie_break!r}"
            )
        if self.layout is not None:
            _composite(self.layout)  # whole-millisecond epoch and unit, checked now
        if not self.windows.kinds and not self.windows.seasons:
            raise BoardConfigError("a board needs at least one window kind or season")
        BoardKeys(self.name, self.namespace)  # validates both names

    def _check_secondary(self) -> None:
        # keep is fine: the backend's trim removes the trimmed members' tie values too.
        # (Which members a trim drops follows the sorted set's order: among members tied
        # at the cut, member bytes decide, not the tie-break value.)
        if self.rank_style is RankStyle.UNIQUE:
            raise BoardConfigError(
                "a secondary tie-break board's default rank style must be competition or "
                "dense (a submission's unique rank would ignore the tie-break); read unique "
                "ranks with style='unique'"
            )

    def _check_lex(self) -> None:
        if self.operator not in ("set", "best"):
            raise BoardConfigError(
                f"a lexicographic board takes operator 'set' or 'best', not {self.operator!r}"
            )
        if self.keep is not None:
            raise BoardConfigError("keep cannot trim a lexicographic board")
        # Every entry has score 0: only the unique rank (position in byte order) is defined.
        object.__setattr__(self, "rank_style", RankStyle.UNIQUE)

    @property
    def secondary(self) -> bool:
        """Whether ties break by a per-member value in the ties hash."""
        return self.tie_break == SECONDARY

    @property
    def lex(self) -> LexLayout | None:
        """The member layout of a lexicographic board, else None."""
        return self.tie_break if isinstance(self.tie_break, LexLayout) else None

    @property
    def keys(self) -> BoardKeys:
        """The board's key names."""
        return BoardKeys(self.name, self.namespace)

    @property
    def layout(self) -> TimeTiebreak | None:
        """The composite layout when ties break by time, else None."""
        return self.tie_break if isinstance(self.tie_break, TimeTiebreak) else None

    @property
    def composite(self) -> Composite | None:
        """The backend's form of :attr:`layout` (whole milliseconds)."""
        layout = self.layout
        return None if layout is None else _composite(layout)

    @property
    def trim_to(self) -> int | None:
        """How many members each window keeps after a write (``keep + keep_buffer``)."""
        return None if self.keep is None else self.keep + self.keep_buffer
