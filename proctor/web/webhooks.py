"""The platforms' signed webhooks (Standard Webhooks): verified, then stored and applied on the writer
(proctor.deliveries); 2xx only once stored."""

from __future__ import annotations

import time
from typing import Final

from aiohttp import web
from sqlalchemy import Connection

from proctor import errors, feed, signatures
from proctor.context import Context
from proctor.deliveries import DeliveryResult
from proctor.staging import Batch
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of
from proctor.web.openapi import Route


def _refresh_platforms(context: Context) -> bool:
    now = time.monotonic()
    if now - context.platforms_refreshed < 1.0:
        return False
    context.platforms_refreshed = now
    with context.engine.connect() as connection:
        context.service.reload_platforms(connection)
    return True


async def post_webhook(request: web.Request) -> web.Response:
    """A signed delivery from a platform; 2xx only once it is stored."""
    context = context_of(request)
    name = request.match_info["platform"]
    body = await request.read()
    tolerance = context.settings.webhook_tolerance_s
    try:
        platform_id, secrets = context.service.platform(name)
        webhook_id, secret = signatures.verify_secret(request.headers, body, secrets, time.time(), tolerance)
    except (errors.NotFoundError, errors.UnauthorizedError):
        # A platform added or a secret rotated by `proctor platform` while the server runs: read them again (at
        # most once a second) and try once more.
        if not _refresh_platforms(context):
            raise
        platform_id, secrets = context.service.platform(name)
        webhook_id, secret = signatures.verify_secret(request.headers, body, secrets, time.time(), tolerance)
    message = feed.parse_message(body)
    received = now_ms()

    def deliver(connection: Connection, batch: Batch) -> DeliveryResult:
        context.service.deliveries.check_secret(connection, platform_id, secret)
        return context.service.deliver(connection, batch, platform_id, webhook_id, message, received)

    result: DeliveryResult = await context.writer.submit(deliver)
    return web.json_response(result.to_json(), status=202 if result.status == "held" else 200)


ROUTES: Final = (
    Route(
        "POST", "/api/v1/webhooks/{platform}", post_webhook,
        "Deliver a signed platform event (Standard Webhooks); 2xx only once it is stored",
        {
            "200": "stored and applied (or a duplicate, or refused by the rules with an incident)",
            "202": "stored and held until an earlier seq arrives",
            "400": "malformed body or stale timestamp",
            "401": "missing or wrong signature",
            "404": "unknown platform or game",
            "409": "seq reused with another body",
            "429": "too many events held",
        },
        (("platform", "path", "the platform's registered name"),),
    ),
)  # fmt: skip
