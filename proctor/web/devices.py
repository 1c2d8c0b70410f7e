"""A player's devices over HTTP (issue 15; proctor.player_devices): the player's page asks which devices its section
requires and how each stands (with the side camera's link and QR code, for a phone), and reports a screen share it
stopped or refused; an arbiter approves the side camera's view with a reference still."""

from __future__ import annotations

import asyncio
import re
from typing import Final

from aiohttp import web

from proctor import camera as camera_module
from proctor import errors
from proctor.camera_roster import qr_image
from proctor.context import Context
from proctor.player_devices import require_device
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of, json_body, text_field
from proctor.web.openapi import Route
from proctor.web.sessions import arbiter

ORIGIN: Final = re.compile(r"https?://[A-Za-z0-9.\-\[\]:]{1,200}")
"""The page's own origin, from which the side camera's link is made (the link a phone opens)."""
REPORTS: Final = ("ended", "refused")


def _player(context: Context, token: str) -> str:
    with context.engine.connect() as connection:
        return camera_module.require_player(connection, token, now_ms())


async def get_play_devices(request: web.Request) -> web.Response:
    """The devices the player's section requires and each one's state; with ``origin`` (the page's own), the side
    camera's link and its QR code for the player's phone."""
    context, token = context_of(request), request.match_info["token"]
    player = _player(context, token)
    camera = context.camera
    policy = camera.policy_for(player)
    body: dict[str, object] = {"player": player, "required": camera.devices.required(policy),
                               "devices": camera.devices.states(player, policy)}  # fmt: skip
    origin = request.query.get("origin", "")
    if "side" in body["required"] and ORIGIN.fullmatch(origin):  # type: ignore[operator]
        link = f"{origin}/play/{token}?device=side"
        body["side"] = {"link": link, "qr": await asyncio.to_thread(qr_image, link)}
    return web.json_response(body)


async def post_play_device(request: web.Request) -> web.Response:
    """The player's page reports a device: ``ended`` (the player stopped sharing the screen: a case at once while the
    game is in play, 36.4.4) or ``refused`` (a window or a tab was chosen, and the page refused it)."""
    context, token = context_of(request), request.match_info["token"]
    player = _player(context, token)
    body = await json_body(request)
    device = require_device(body.get("device"))
    state = text_field(body, "state", True)
    if state not in REPORTS:
        raise errors.BadRequestError(f"'state' must be one of {', '.join(REPORTS)}")
    return web.json_response(context.camera.devices.report(player, device, state, body.get("surface")))


async def post_device_reference(request: web.Request) -> web.Response:
    """An arbiter approves the camera's setup as it shows now: its last frame becomes the reference still."""
    who = arbiter(request)
    body = await json_body(request)
    note = text_field(body, "note", False).strip()
    if len(note) > camera_module.MAX_TEXT:
        raise errors.BadRequestError(f"'note' must be at most {camera_module.MAX_TEXT} characters")
    device = require_device(request.match_info["device"])
    context = context_of(request)
    result = await context.camera.devices.approve_view(who, request.match_info["player"], device, note)
    context.bus.publish("camera", {"player": request.match_info["player"], "change": "reference"})
    return web.json_response(result, status=201)


TOKEN: Final = (("token", "path", "the player's stream token"),)

ROUTES: Final = (
    Route(
        "GET", "/api/v1/play/{token}/devices", get_play_devices,
        "The devices the player's section requires (front, side, screen) and each one's state; with origin (the "
        "page's own), the side camera's link and its QR code",
        {"200": "required, devices (state and since), side {link, qr}", "404": "unknown token",
         "410": "expired token"},
        (*TOKEN, ("origin", "query", "the page's origin, for the side camera's link")),
    ),
    Route(
        "POST", "/api/v1/play/{token}/devices", post_play_device,
        "The player's page reports a device {device, state: ended or refused, surface}: a screen share stopped "
        "(a screen-share-stopped case at once while the game is in play, 36.4.4) or a window or tab refused",
        {"200": "the devices' states", "400": "unknown state", "404": "unknown token or device",
         "410": "expired token"},
        TOKEN,
    ),
    Route(
        "POST", "/api/v1/players/{player}/devices/{device}/reference", post_device_reference,
        "Approve a camera's setup {note} as it shows now (36.4): its last frame becomes the reference still the "
        "service compares the camera with (camera-moved); audited camera.reference",
        {"201": "the reference still's name and hash", "401": "no or unknown arbiter token",
         "403": "outside the arbiter's assigned sections or boards (16)",
         "404": "no player with a camera, or no such device",
         "409": "no live stream of the device, or its picture has too little detail"},
        (("player", "path", "the player's id on the platform"), ("device", "path", "side (or front)")),
    ),
)  # fmt: skip
