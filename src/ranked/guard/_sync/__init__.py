# Generated from ranked/guard/_async/__init__.py by scripts/generate_sync.py: do not edit.
