"""The live stream: server-sent events of every committed change, for arbiters and the review panel."""

from __future__ import annotations

from typing import Final

from aiohttp import web

from proctor.web.event_streams import relay
from proctor.web.inputs import web_context_of
from proctor.web.openapi import Route
from proctor.web.sessions import arbiter, still_authorised


async def stream(request: web.Request) -> web.StreamResponse:
    """Server-sent events: every change (games, incidents) as it is committed; arbiters and the review panel only,
    for as long as the session (or the bearer token) that opened the stream holds (proctor.web.event_streams)."""
    arbiter(request)
    context = web_context_of(request)
    return await relay(request, context.bus.subscribe(), still_authorised(request), context.revocations,
                       context.settings.stream_recheck_s, first=": connected\n\n")  # fmt: skip


ROUTES: Final = (
    Route("GET", "/api/v1/stream", stream, "Server-sent events of every committed change",
          {"200": "an event stream; it ends (an `end` event) when the session or token that opened it ends",
           "401": "no session or token, or an ended one"}),
)  # fmt: skip
