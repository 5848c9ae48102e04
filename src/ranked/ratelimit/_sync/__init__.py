# Generated from ranked/ratelimit/_async/__init__.py by scripts/generate_sync.py: do not edit.
"""The limiter, written once for asyncio (``_async``) and generated for blocking callers
(``_sync``) by ``scripts/generate_sync.py``."""
