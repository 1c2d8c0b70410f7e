"""The liveness and database check."""

from __future__ import annotations

from typing import Final

from aiohttp import web
from sqlalchemy import select

from proctor.web.inputs import context_of
from proctor.web.openapi import Route


async def healthz(request: web.Request) -> web.Response:
    context = context_of(request)
    with context.engine.connect() as connection:
        connection.execute(select(1))
    return web.json_response(
        {"status": "ok", "games": len(context.service.games), "writer_batches": context.writer.batches}
    )


ROUTES: Final = (
    Route("GET", "/healthz", healthz, "Liveness and database check", {"200": "ok"}),
)  # fmt: skip
