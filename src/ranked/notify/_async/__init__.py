"""The notifications' asyncio API, the source the blocking API (``_sync``) is generated from."""
