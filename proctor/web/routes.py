"""The route table: every area's routes in one tuple, in the order the OpenAPI document lists them, and their
wiring into the app (:func:`add_routes`, called by proctor.app's factory)."""

from __future__ import annotations

from typing import Final

from aiohttp import web

from proctor.web import (
    appeals,
    brackets,
    camera_controls,
    camera_roster,
    cases,
    check_ins,
    dashboards,
    devices,
    events,
    games,
    health,
    incidents,
    landing,
    live_views,
    media,
    page_modules,
    player_page,
    review,
    sessions,
    sfu_rooms,
    stream,
    talk,
    webhooks,
    workers,
)
from proctor.web.openapi import Route, document

OPENAPI: Final = Route("GET", "/api/openapi.json", None, "This document", {"200": "the OpenAPI document"})

ROUTES: Final[tuple[Route, ...]] = (
    *webhooks.ROUTES,
    *games.ROUTES,
    *events.ROUTES,
    *brackets.ROUTES,
    *incidents.ROUTES,
    *cases.ROUTES,
    *camera_controls.ROUTES,
    *camera_roster.ROUTES,
    *check_ins.ROUTES,
    *live_views.ROUTES,
    *talk.ROUTES,
    *player_page.ROUTES,
    *devices.ROUTES,
    *sfu_rooms.ROUTES,
    *workers.ROUTES,
    *media.ROUTES,
    *sessions.ROUTES,
    *dashboards.ROUTES,
    *page_modules.ROUTES,
    *stream.ROUTES,
    *review.ROUTES,
    *appeals.ROUTES,
    OPENAPI,
    *health.ROUTES,
    *landing.ROUTES,
)


async def get_openapi(request: web.Request) -> web.Response:
    return web.json_response(document(ROUTES))


def add_routes(app: web.Application) -> None:
    for route in ROUTES:
        handler = route.handler or get_openapi
        app.router.add_route(route.method, route.path, handler)
