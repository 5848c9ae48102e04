# Generated from ranked/notify/_async/__init__.py by scripts/generate_sync.py: do not edit.
"""The notifications' asyncio API, the source the blocking API (``_sync``) is generated from."""
