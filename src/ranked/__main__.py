"""``python -m ranked``: the ``ranked`` command."""

from ranked.cli import main

if __name__ == "__main__":
    main()
