"""The public surface: everything exported exists, and every public name is exported."""

from __future__ import annotations

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
