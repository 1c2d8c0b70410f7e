"""The liveness and database check."""

from __future__ import annotations

from typing import Final

from aiohttp import web
from sqlalchemy import select

from proctor.web.inputs import context_of
from proctor.web.openapi import Route
from proctor.web.reads import read


async def healthz(request: web.Request) -> web.Response:
    """200 while the database answers and the writer stores; 503 with the writer's last failure while it cannot
    store (the disk full, the database locked by another process), until a batch commits again."""
    context = context_of(request)
    await read(context, lambda connection: connection.execute(select(1)))
    body = {"status": "ok", "games": len(context.service.games), "writer_batches": context.writer.batches}
    failure = context.writer.last_failure
    if failure is not None:
        return web.json_response({**body, "status": "failing", "writer_failure": failure}, status=503)
    return web.json_response(body)


ROUTES: Final = (
    Route("GET", "/healthz", healthz, "Liveness and database check",
          {"200": "ok", "503": "the writer cannot store: its last failure"}),
)  # fmt: skip
