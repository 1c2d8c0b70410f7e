"""The access log: one line per request with its method, its route (``/play/{token}``, never the token itself or a
query string), status, size and duration; never the client's address (aiohttp's default format starts with it)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger


def route_of(request: web.BaseRequest) -> str:
    """The route the request matched, as declared (``/api/v1/play/{token}/events``); ``(no route)`` otherwise."""
    match = getattr(request, "_match_info", None)
    resource = match.route.resource if match is not None else None
    return resource.canonical if resource is not None else "(no route)"


class AccessLog(AbstractAccessLogger):
    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info('"%s %s" %s %s %.3fs', request.method, route_of(request), response.status,
                         response.body_length, time)  # fmt: skip
