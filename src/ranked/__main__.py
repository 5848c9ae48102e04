"""``python -m ranked``: the ``ranked`` command."""

from ranked.cli import main

main()
