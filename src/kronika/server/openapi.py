"""The OpenAPI document as the server really answers.

FastAPI writes each route's success answer and a 422 in its own shape. kronika's
errors all have one shape (``{"error": <class>, "message": …}``, a 422 adds ``detail``
naming each bad field, see :mod:`kronika.server.app`), and every route can answer
the errors of the key check, the agent lookup and the body limit. :func:`install`
makes ``/openapi.json`` say so, from these rules:

* every operation but ``/healthz`` may answer 400, 401, 403, 422, 429 and 503;
* one with a path parameter, or naming an agent, may answer 404;
* one that writes (any method but GET) may answer 409 (a name taken, a proposal
  decided already, an import across tenants);
* one with a body may answer 413;
* an agent name, in the path or the query, follows the rule of
  :data:`kronika.stores.markdown.layout.AGENT_NAME_PATTERN`; other text in the path
  or query holds no NUL character;
* a route that reads its body only after deciding access (``openapi_extra``
  ``x-body-required``) still documents the body as required.

A test runs schemathesis with every check against this document
(``tests/server/test_contract.py``).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from kronika.server.schemas import NO_NUL
from kronika.stores.markdown.layout import AGENT_NAME_PATTERN

BODY_REQUIRED = "x-body-required"
"""``openapi_extra`` marker: the body is required though the route reads it late."""

_ERROR = {
    "title": "Error",
    "type": "object",
    "required": ["error", "message"],
    "properties": {
        "error": {"type": "string", "description": "the error's class, e.g. NotFound"},
        "message": {"type": "string", "description": "what went wrong, for a person"},
    },
}
_PROBLEM = {
    "title": "InvalidRequest",
    "type": "object",
    "required": ["error", "message"],
    "properties": {
        **_ERROR["properties"],  # type: ignore[dict-item]
        "detail": {
            "type": "array",
            "description": "each field the schema refused",
            "items": {
                "type": "object",
                "required": ["loc", "msg"],
                "properties": {
                    "loc": {"type": "array", "items": {"type": "string"}},
                    "msg": {"type": "string"},
                },
            },
        },
    },
}
_WHY = {
    "400": "The request cannot be carried out as asked",
    "401": "No valid API key",
    "403": "The key may not do this",
    "404": "No such agent or item for this key",
    "409": "In conflict with what is stored",
    "413": "The body is larger than the server takes",
    "422": "A field is invalid",
    "429": "Too many requests for this key",
    "503": "A part the answer needs (workspace, model, index) is unavailable",
}
_NAMES = {"agent"}
"""Parameters that name an agent."""


def install(app: FastAPI) -> None:
    """Make ``app.openapi()`` the document described above (built once, then kept)."""

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            made = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = describe(made)
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]


def describe(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with kronika's error answers and name rules (changed in place)."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas["Error"] = _ERROR
    schemas["InvalidRequest"] = _PROBLEM
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            if path == "/healthz":
                continue
            _agent_names(operation)
            _body(operation)
            _errors(path, method, operation)
    return document


def _agent_names(operation: dict[str, Any]) -> None:
    for parameter in operation.get("parameters", []):
        schema = parameter.get("schema", {})
        for option in schema.get("anyOf", [schema]):
            if option.get("type") != "string":
                continue
            if parameter.get("name") in _NAMES:
                option["pattern"] = AGENT_NAME_PATTERN
                option["maxLength"] = 64
            else:
                option.setdefault("pattern", NO_NUL)


def _body(operation: dict[str, Any]) -> None:
    if not operation.pop(BODY_REQUIRED, False):
        return
    body = operation["requestBody"]
    body["required"] = True
    for media in body.get("content", {}).values():
        options = media.get("schema", {}).get("anyOf")
        if options:
            kept = [o for o in options if o.get("type") != "null"]
            media["schema"] = kept[0] if len(kept) == 1 else {"anyOf": kept}


def _errors(path: str, method: str, operation: dict[str, Any]) -> None:
    codes = ["400", "401", "403", "422", "429", "503"]
    names_agent = any(p.get("name") in _NAMES for p in operation.get("parameters", []))
    if "{" in path or names_agent:
        codes.append("404")
    if method != "get":
        codes.append("409")
    if "requestBody" in operation:
        codes.append("413")
    responses = operation.setdefault("responses", {})
    for code in sorted(codes):
        schema = "InvalidRequest" if code == "422" else "Error"
        responses[code] = {
            "description": _WHY[code],
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
        }
