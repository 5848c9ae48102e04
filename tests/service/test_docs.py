"""docs/service.md tells the truth: its settings table is the code's, and it lists every
route and problem type the service has."""

from __future__ import annotations

from pathlib import Path

from ranked.service.config import settings_table
from ranked.service.metrics import Metrics
from ranked.service.problems import PROBLEM_TYPES
from ranked.service.registry import Boards
from ranked.service.routes import api_routes

DOC = (Path(__file__).parents[2] / "docs" / "service.md").read_text(encoding="utf-8")


def test_settings_table_is_the_codes() -> None:
    assert settings_table() in DOC


def test_every_route_and_problem_is_documented() -> None:
    for route in api_routes(Boards("memory://", "sqlite:///unused.db", None), Metrics()):
        assert f"| `{route.method}` | `{route.path}` |" in DOC, route.name
    for slug in PROBLEM_TYPES:
        assert f"| `{slug}` |" in DOC, slug
