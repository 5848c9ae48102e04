"""Backends: where boards live (in process, Redis, Redis Cluster), behind one contract."""

from __future__ import annotations

from .base import AsyncBackend, Backend, Composite, Row, SubmitOutcome, SubmitRequest, Target

__all__ = [
    "AsyncBackend",
    "Backend",
    "Composite",
    "Row",
    "SubmitOutcome",
    "SubmitRequest",
    "Target",
]
