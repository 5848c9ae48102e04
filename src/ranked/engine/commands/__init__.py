"""The command table of :class:`ranked.engine.keyspace.Keyspace`: one module per family."""

from __future__ import annotations

from . import (
    generic,
    hashes,
    sets,
    strings,
    zset_algebra,
    zset_pop,
    zset_range,
    zset_read,
    zset_write,
)
from .common import Command, CommandTable

__all__ = ["COMMAND_TABLE", "Command", "CommandTable"]

COMMAND_TABLE: CommandTable = {
    **generic.COMMANDS,
    **strings.COMMANDS,
    **hashes.COMMANDS,
    **sets.COMMANDS,
    **zset_read.COMMANDS,
    **zset_range.COMMANDS,
    **zset_write.COMMANDS,
    **zset_algebra.COMMANDS,
    **zset_pop.COMMANDS,
}
