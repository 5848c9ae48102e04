"""Backends: where a feature's steps run (``memory://``, ``redis://``,
``redis+cluster://``), behind one contract (:mod:`.base`) and one seam (:mod:`.procedure`)."""

from .base import AsyncBackend, Backend

__all__ = ["AsyncBackend", "Backend"]
