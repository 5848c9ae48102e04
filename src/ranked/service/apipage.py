"""The API as one HTML page, made from the OpenAPI document: every operation with its
scope, parameters, body and answers, and every problem type. No script, no network:
it works offline."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from .problems import PROBLEM_TYPES

__all__ = ["api_page"]

_STYLE = """
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}
h2{margin-top:2em;border-bottom:1px solid #ddd}
.op{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:1em 0}
.m{display:inline-block;min-width:4.5em;font-weight:bold}
code,pre{font:13px ui-monospace,monospace;background:#f6f6f6}
pre{padding:.6em;overflow:auto}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left}
"""


def api_page(document: dict[str, Any]) -> str:
    """The page of ``document`` (an OpenAPI 3.1 dict)."""
    schemas = document["components"]["schemas"]
    out = [
        "<!doctype html><html lang=en><meta charset=utf-8>",
        f"<title>ranked API {escape(document['info']['version'])}</title>",
        f"<style>{_STYLE}</style>",
        "<h1>ranked API</h1>",
        "<p>Send <code>Authorization: Bearer &lt;key&gt;</code> (keys: <code>ranked keys create"
        " --scope admin|write|read</code>). Bodies and answers are JSON; a refused request gets"
        " an <code>application/problem+json</code> answer naming the field, and changes nothing."
        " The machine-readable document: <a href=/openapi.json>/openapi.json</a>.</p>",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            by_tag.setdefault(operation["tags"][0], []).append((method.upper(), path, operation))
    for tag, operations in by_tag.items():
        out.append(f"<h2>{escape(tag)}</h2>")
        for method, path, operation in operations:
            out.append(_operation(method, path, operation, schemas))
    out.append("<h2 id=problems>Problems</h2><table><tr><th>type<th>meaning")
    for slug, text in PROBLEM_TYPES.items():
        out.append(f"<tr id=problem-{slug}><td><code>{slug}</code><td>{escape(text)}")
    out.append("</table><h2>Schemas</h2>")
    for name, schema in schemas.items():
        out.append(f"<h3 id=schema-{escape(name)}>{escape(name)}</h3>")
        out.append(f"<pre>{escape(json.dumps(schema, indent=2))}</pre>")
    return "\n".join(out)


def _operation(method: str, path: str, operation: dict[str, Any], schemas: dict[str, Any]) -> str:
    parts = [
        "<div class=op>",
        f"<span class=m>{method}</span><code>{escape(path)}</code>",
        f" — {escape(operation['summary'])}",
    ]
    if "description" in operation:
        parts.append(f"<p>{escape(operation['description'])}</p>")
    params = operation.get("parameters", [])
    if params:
        parts.append("<table><tr><th>parameter<th>in<th>required<th>schema")
        for p in params:
            parts.append(
                f"<tr><td><code>{escape(p['name'])}</code><td>{p['in']}"
                f"<td>{'yes' if p['required'] else 'no'}"
                f"<td><code>{escape(_short(p['schema']))}</code>"
            )
        parts.append("</table>")
    body = operation.get("requestBody")
    if body:
        ref = body["content"]["application/json"]["schema"].get("$ref", "")
        name = ref.rsplit("/", 1)[-1]
        parts.append(f"<p>Body: <a href=#schema-{escape(name)}>{escape(name)}</a></p>")
    answers = ", ".join(
        f"{status} {escape(r['description'])}" for status, r in operation["responses"].items()
    )
    parts.append(f"<p>Answers: {answers}</p></div>")
    return "".join(parts)


def _short(schema: dict[str, Any]) -> str:
    return json.dumps(schema, separators=(",", ":"))
