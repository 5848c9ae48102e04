"""Type stub of the C engine ``ranked.engine._zset``.

The C ``SortedSet`` has exactly the API of its pure-Python twin,
``ranked.engine.skiplist.SortedSet``: the same methods and signatures, the same results,
the same errors with the same texts (the shared suite in ``tests/engine`` runs on both).
So for type checkers it is that class: this stub re-exports it, and the API text (the
signatures, every method's docstring with its complexity and Redis equivalent, and the
behavioural contract in the class docstring) is written once, in ``skiplist.py``.

At run time the two stay distinct classes (``isinstance`` tells them apart, and the
twin's private helpers do not exist on the C class). ``help()`` and ``__doc__`` of the C
class come from the one-line docstrings compiled into ``_zset.c``.

Only what is C-specific is declared here: ``_C_API``, the capsule that publishes the
engine's C API (``zset_capi.h``) to other extension modules, and ``keys_with_prefix``,
the keyspace's scan for the keys under one prefix.
"""

from typing import Any

from .skiplist import SortedSet as SortedSet

_C_API: object

def keys_with_prefix(mapping: dict[bytes, Any], prefix: bytes, /) -> list[bytes]: ...
