"""The OpenAPI 3.1 document, generated from the routes and the msgspec types they declare
(never written by hand)."""

from __future__ import annotations

from typing import Any

import msgspec

from .. import __version__
from .http import Route
from .problems import PROBLEM_TYPES
from .schemas import Problem

__all__ = ["openapi"]

_STATUS_TEXT = {
    400: "Malformed request",
    401: "No key, or an unknown or revoked key",
    403: "The key's scope does not allow this",
    404: "No such board or member",
    409: "Conflicts with the board's fixed settings",
    413: "Body too large",
    429: "Too many requests (see Retry-After and the RateLimit headers)",
    422: "A field does not fit (named in the problem)",
    503: "Journal or backend unavailable, or not ready",
}


def openapi(routes: list[Route]) -> dict[str, Any]:
    """The document of ``routes``."""
    types: list[Any] = [Problem]
    for route in routes:
        types += [t for t in (route.body, route.response, route.query) if t is not None]
        types += [kind for _status, _text, kind in route.answers]
    schemas, components = msgspec.json.schema_components(
        types, ref_template="#/components/schemas/{name}"
    )
    by_type = dict(zip(types, schemas, strict=True))
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(
            route, by_type, components
        )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "ranked",
            "version": __version__,
            "description": "Leaderboards as a service. Errors are application/problem+json;"
            " problem types: "
            + "; ".join(f"{slug}: {text}" for slug, text in PROBLEM_TYPES.items()),
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


def _operation(route: Route, by_type: dict[Any, Any], components: dict[str, Any]) -> dict[str, Any]:
    problem = {"application/problem+json": {"schema": by_type[Problem]}}
    statuses = {400, 422, *route.problems}
    if route.scope is not None:
        statuses |= {401, 403}
    if "{board}" in route.path:
        statuses.add(404)
    if route.body is not None:
        statuses.add(413)
    responses: dict[str, Any] = {
        str(route.status): {
            "description": "OK",
            "content": {route.media_type: {"schema": by_type[route.response]}}
            if route.response is not None
            else {route.media_type: {}},
        }
    }
    if route.method == "PUT" and route.body is not None and route.path.endswith("{board}"):
        responses["201"] = {**responses["200"], "description": "Created"}
    for status, text, kind in route.answers:
        responses[str(status)] = {
            "description": text,
            "content": {route.media_type: {"schema": by_type[kind]}},
        }
    for status in sorted(statuses):
        responses[str(status)] = {"description": _STATUS_TEXT.get(status, ""), "content": problem}
    parameters: list[dict[str, Any]] = [
        {"name": segment[1:-1], "in": "path", "required": True, "schema": _path_schema(segment)}
        for segment in route.segments
        if segment.startswith("{")
    ]
    if route.query is not None:
        ref = by_type[route.query]["$ref"].rsplit("/", 1)[1]
        found = components[ref]
        required = set(found.get("required", ()))
        for name, schema in found.get("properties", {}).items():
            parameters.append(
                {"name": name, "in": "query", "required": name in required, "schema": schema}
            )
    operation: dict[str, Any] = {
        "summary": route.summary,
        "operationId": _operation_id(route),
        "tags": [route.tag],
        "parameters": parameters,
        "responses": responses,
    }
    if route.scope is not None:
        scopes = f"Needs a key of scope {route.scope.value} or above."
        if route.board_reads:
            scopes += " Open to clients without a key on a board with public_reads."
        operation["description"] = scopes
        operation["security"] = [{"bearer": []}, {}] if route.board_reads else [{"bearer": []}]
    if route.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": by_type[route.body]}},
        }
    return operation


def _path_schema(segment: str) -> dict[str, Any]:
    if segment == "{member}":
        return {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "pattern": r"^[^\x00-\x1f\x7f]+$",
        }
    return {"type": "string", "pattern": r"^[A-Za-z0-9_.:-]{1,64}$"}


def _operation_id(route: Route) -> str:
    words = [s.strip("{}") for s in route.segments[1:]]
    return "_".join([route.method.lower(), *words]).replace("-", "_")
