"""The player's page in the distributed mode (issue 16; proctor.sfu): where it publishes its cameras and screen on
Janus, and the feeds it published there, for the analysis workers to take."""

from __future__ import annotations

from typing import Final

from aiohttp import web

from proctor import camera as camera_module
from proctor import errors
from proctor.player_devices import require_device
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of, json_body, text_field
from proctor.web.openapi import Route


def _player(request: web.Request, token: str) -> str:
    with context_of(request).engine.connect() as connection:
        return camera_module.require_player(connection, token, now_ms())


async def sfu_room(request: web.Request) -> web.Response:
    """``{token}`` → the player's room on Janus ``{url, token, room, pin, iceServers}``."""
    body = await json_body(request)
    player = _player(request, text_field(body, "token", True))
    return web.json_response(await context_of(request).camera.sfu_room(player))


async def sfu_published(request: web.Request) -> web.Response:
    """``{token, device, feed, surface}``: the page publishes this device as ``feed`` in the player's room."""
    body = await json_body(request)
    player = _player(request, text_field(body, "token", True))
    device = require_device(body.get("device"))
    feed = body.get("feed")
    if isinstance(feed, bool) or not isinstance(feed, int) or feed <= 0:
        raise errors.BadRequestError("'feed' must be the feed's id Janus gave")
    published = await context_of(request).camera.sfu_published(player, device, feed, body.get("surface"))
    return web.json_response(published, status=201)


ROUTES: Final = (
    Route("POST", "/api/v1/sfu/room", sfu_room,
          "A player's room on the media server (the distributed mode) {token} → {url, token, room, pin, iceServers}",
          {"200": "the room", "400": "malformed body", "404": "unknown token",
           "409": "the service takes the cameras itself (/api/v1/rtc/offer)", "410": "expired token",
           "503": "the media server is not answering (Retry-After)"}),
    Route("POST", "/api/v1/sfu/published", sfu_published,
          "A player's page publishes a device {token, device, feed, surface} in the player's room",
          {"201": "given to the analysis workers", "400": "malformed body, or a screen share of a window or a tab",
           "404": "unknown token or device",
           "409": "the feed is not publishing that device in the player's room, the section does not use the "
                  "device, or the service takes the cameras itself",
           "410": "expired token", "503": "the media server is not answering (Retry-After)"}),
)  # fmt: skip
