"""The live stream: server-sent events of every committed change, for arbiters and the review panel."""

from __future__ import annotations

from typing import Final

from aiohttp import web

from proctor.web.inputs import context_of
from proctor.web.openapi import Route
from proctor.web.sessions import arbiter


async def stream(request: web.Request) -> web.StreamResponse:
    """Server-sent events: every change (games, incidents) as it is committed; arbiters and the review panel only."""
    arbiter(request)
    context = context_of(request)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    await response.write(b": connected\n\n")
    async for frame in context.bus.subscribe():
        await response.write(frame.encode())
    return response


ROUTES: Final = (
    Route("GET", "/api/v1/stream", stream, "Server-sent events of every committed change", {"200": "an event stream"}),
)  # fmt: skip
