"""A route with its OpenAPI description, and the OpenAPI document of a route table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    handler: Any
    summary: str
    responses: dict[str, str]
    parameters: tuple[tuple[str, str, str], ...] = ()
    """(name, in, description)."""


def document(routes: tuple[Route, ...]) -> dict[str, Any]:
    """The OpenAPI document of these routes."""
    paths: dict[str, Any] = {}
    for route in routes:
        operation: dict[str, Any] = {
            "summary": route.summary,
            "responses": {code: {"description": text} for code, text in route.responses.items()},
        }
        if route.parameters:
            operation["parameters"] = [
                {
                    "name": name,
                    "in": where,
                    "required": where == "path",
                    "description": text,
                    "schema": {"type": "string"},
                }
                for name, where, text in route.parameters
            ]
        paths.setdefault(route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "Gomoku proctor", "version": "1"},
        "paths": paths,
    }
