"""A request's input read and checked: the app's context, path ids, the JSON body and its fields, query
parameters; anything malformed is a BadRequestError (a NotFoundError for a path id that cannot exist)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from proctor import errors
from proctor.context import CONTEXT, WEB_CONTEXT, Context, WebContext
from proctor.models import MAX_INTEGER


def context_of(request: web.Request) -> Context:
    return request.app[CONTEXT]


def web_context_of(request: web.Request) -> WebContext:
    """What any web process holds (the database, the bus): for the handlers a web process serves itself."""
    return request.app[WEB_CONTEXT]


def path_id(request: web.Request, name: str) -> int:
    raw = request.match_info[name]
    if not raw.isdigit() or len(raw) > len(str(MAX_INTEGER)) or int(raw) > MAX_INTEGER:
        raise errors.NotFoundError(f"no {name} {raw[:40]!r}")
    return int(raw)


def query_number(request: web.Request, name: str, bounds: tuple[int, int], default: int | None = None) -> int | None:
    """A whole number in the query (``limit``, ``before``), within ``bounds``; ``default`` when absent."""
    raw = request.query.get(name)
    if raw is None:
        return default
    low, high = bounds
    if not raw.isdigit() or len(raw) > len(str(high)) or not low <= int(raw) <= high:
        raise errors.BadRequestError(f"query parameter '{name}' must be a whole number from {low} to {high}")
    return int(raw)


async def json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise errors.BadRequestError("the body must be JSON") from None
    except RecursionError:
        raise errors.BadRequestError("the body's JSON is nested too deeply") from None
    if not isinstance(body, dict):
        raise errors.BadRequestError("the body must be a JSON object")
    return body


def text_field(body: dict[str, Any], name: str, required: bool = False) -> str:
    value = body.get(name, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise errors.BadRequestError(f"'{name}' must be {'a non-empty' if required else 'a'} string")
    return value


def int_query(request: web.Request, name: str, high: int = MAX_INTEGER) -> int | None:
    raw = request.query.get(name)
    if raw is None:
        return None
    if not raw.isdigit() or len(raw) > len(str(high)) or int(raw) > high:
        raise errors.BadRequestError(f"query parameter '{name}' must be a whole number from 0 to {high}")
    return int(raw)


def whole_number(body: dict[str, Any], name: str, bounds: tuple[int, int], default: int | None = None) -> int:
    value = body.get(name, default)
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise errors.BadRequestError(f"'{name}' must be a whole number from {low} to {high}")
    return value


def optional_id(body: dict[str, Any], name: str, what: str) -> int | None:
    """An optional id in a body (``game``, ``incident``): a whole number an integer column holds, or absent."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INTEGER:
        raise errors.BadRequestError(f"'{name}' must be {what} (a whole number from 1 to {MAX_INTEGER})")
    return value
