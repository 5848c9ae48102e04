# Generated from ranked/leaderboard/_async/__init__.py by scripts/generate_sync.py: do not edit.
"""The board's asyncio API, the source the blocking API (``_sync``) is generated from."""
