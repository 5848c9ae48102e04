"""Pure leaderboard logic with no I/O: keys, score encodings, rank styles, windows, cursors.

The backends (embedded, Redis, Redis Cluster) import these so that all of them name
keys, encode scores, count ranks, cut windows and page the same way.
"""

from __future__ import annotations

from .cursors import Cursor, Direction
from .keys import SLOT_COUNT, BoardKeys, crc16, hash_slot
from .lex import LexLayout, LexMember
from .models import Around, Entry, Member, MemberRank, Page, SubmitResult
from .ranks import RankStyle, rank_from_counts, ranks
from .scores import EXACT_BITS, ScoreAt, TimeTiebreak, seed003_layout, seed004_layout
from .ties import IndexWindow, overfetch, resort_page, tie_hash
from .windows import Season, Window, WindowKind, WindowPlan

__all__ = [
    "EXACT_BITS",
    "SLOT_COUNT",
    "Around",
    "BoardKeys",
    "Cursor",
    "Direction",
    "Entry",
    "IndexWindow",
    "LexLayout",
    "LexMember",
    "Member",
    "MemberRank",
    "Page",
    "RankStyle",
    "ScoreAt",
    "Season",
    "SubmitResult",
    "TimeTiebreak",
    "Window",
    "WindowKind",
    "WindowPlan",
    "crc16",
    "hash_slot",
    "overfetch",
    "rank_from_counts",
    "ranks",
    "resort_page",
    "seed003_layout",
    "seed004_layout",
    "tie_hash",
]
