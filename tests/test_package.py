"""The public surface: everything exported exists, and every public name is exported."""

from __future__ import annotations

import subprocess
import sys

import ranked
from ranked import errors


def test_all_names_exist() -> None:
    for name in ranked.__all__:
        assert hasattr(ranked, name), name


def test_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(ranked).items()
        if not name.startswith("_")
        and not isinstance(value, type(ranked))
        and name != "annotations"
    }
    assert public == set(ranked.__all__)


def test_errors_module_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type)
        and issubclass(value, Exception)
        and value.__module__ == errors.__name__
    }
    assert public == set(errors.__all__)


def test_every_error_is_a_ranked_error() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.RankedError)


def test_value_errors_are_value_errors() -> None:
    assert issubclass(errors.InvalidScoreError, ValueError)
    assert issubclass(errors.SnapshotError, ValueError)


def test_every_error_is_exported_from_ranked() -> None:
    for name in errors.__all__:
        assert getattr(ranked, name) is getattr(errors, name), name
    assert issubclass(ranked.RateLimited, ranked.RankedError)


def test_every_error_class_in_the_package_lives_in_ranked_errors() -> None:
    """One hierarchy: no module other than ``ranked.errors`` defines an exception class
    (``RateLimited`` carries its decisions and headers, so it lives with the decorator;
    ``HTTPProblem`` is an HTTP answer, status and headers, so it lives with the service's
    HTTP layer; the CLI's ``Failure`` is a command's answer, a line and an exit status, so
    it lives with the CLI)."""
    import importlib
    import pkgutil

    defined_elsewhere = set()
    for info in pkgutil.walk_packages(ranked.__path__, "ranked."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
                and info.name != "ranked.errors"
            ):
                defined_elsewhere.add(f"{info.name}.{value.__name__}")
    assert defined_elsewhere == {
        "ranked.ratelimit.decorator.RateLimited",
        "ranked.service.http.HTTPProblem",
        "ranked.cli._client.Failure",
    }


def test_bad_values_and_wrong_types_derive_from_the_builtins() -> None:
    for name in errors.__all__:
        error = getattr(errors, name)
        if name.startswith("Invalid") or name.endswith(("ConfigError", "RangeError")):
            assert issubclass(error, ValueError | TypeError), name
    assert issubclass(errors.InvalidItemError, TypeError)
    assert issubclass(errors.RateLimitTypeError, TypeError)


def test_memory_needs_no_redis_client() -> None:
    """``memory://`` is the default with nothing to install: no import of redis-py."""
    script = (
        "import sys\n"
        "sys.modules['redis'] = None\n"
        "import ranked\n"
        "board = ranked.Leaderboard('memory://', 'b')\n"
        "assert board.submit('a', 1).primary.rank == 1\n"
        "from ranked.queue import Queue\n"
        "from ranked.ratelimit import Policy, RateLimiter\n"
        "queue = Queue(ranked.open_backend('memory://'), 'q', text=True)\n"
        "queue.push('x')\n"
        "assert queue.pop() == 'x'\n"
        "limiter = RateLimiter(ranked.open_backend('memory://'), Policy(1, 60))\n"
        "assert limiter.hit('u').allowed\n"
        "assert 'redis' not in [name.split('.')[0] for name, m in sys.modules.items() if m]\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
