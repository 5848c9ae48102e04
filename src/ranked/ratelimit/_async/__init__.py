"""The limiter, written once for asyncio (``_async``) and generated for blocking callers
(``_sync``) by ``scripts/generate_sync.py``."""
