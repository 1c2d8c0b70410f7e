"""The arbiters' live camera views (proctor.live_views): how many this process relays, and one opened (the browser's
offer answered with the player's relayed track) or ended."""

from __future__ import annotations

import time
from typing import Any, Final

from aiohttp import web

from proctor import camera as camera_module
from proctor import errors
from proctor.live_views import LiveViews, ViewSize
from proctor.player_devices import require_device
from proctor.web.inputs import context_of, json_body, text_field
from proctor.web.openapi import Route
from proctor.web.sessions import arbiter


def _views(request: web.Request) -> LiveViews:
    views = context_of(request).camera.live_views
    if views is None:
        raise errors.ConflictError("the camera service is not running")
    return views  # type: ignore[no-any-return]


async def get_live_views(request: web.Request) -> web.Response:
    """The cap, the views in use, the rate a watched player sends, this arbiter's views and the ICE servers their
    browser needs."""
    who = arbiter(request)
    views = _views(request)
    settings = context_of(request).settings
    mine = [view.describe() for view in views.views.values() if view.who.name == who.name]
    ice = camera_module.ice_servers(settings, f"arbiter-{who.name}", time.time())
    return web.json_response({**views.describe(), "mine": mine, "iceServers": ice})


def desk_offer(body: dict[str, Any], media: str) -> tuple[str, str]:
    """The desk's WebRTC offer in a request body, ``{sdp, type: "offer"}``, with a ``media`` m-line (``video`` for a
    live view, ``audio`` for a talk); 400 naming what is wrong."""
    sdp, kind = text_field(body, "sdp", True), text_field(body, "type", True)
    if kind != "offer":
        raise errors.BadRequestError("'type' must be 'offer'")
    try:
        camera_module.check_offer(sdp, media)
    except ValueError as error:
        raise errors.BadRequestError(str(error)) from None
    return sdp, kind


async def post_live_view(request: web.Request) -> web.Response:
    """An arbiter's offer ``{sdp, type, size}`` (a video to receive) answered with the player's live camera; in the
    distributed mode ``{size, device}`` answered with where the browser takes it from Janus."""
    who = arbiter(request)
    body = await json_body(request)
    sizes = [size.value for size in ViewSize]
    size = body.get("size", ViewSize.LARGE.value)
    if size not in sizes:
        raise errors.BadRequestError(f"'size' must be one of {', '.join(sizes)}")
    device = require_device(body.get("device"))
    views = _views(request)
    if views.rooms is not None:
        view, grant = await views.open_through_sfu(who, request.match_info["player"], ViewSize(size), device)
        return web.json_response({**view.describe(), **views.describe(), "janus": grant}, status=201)
    sdp, kind = desk_offer(body, "video")
    try:
        view, answer = await views.open(who, request.match_info["player"], sdp, kind, ViewSize(size), device)
    except ValueError as error:
        raise errors.BadRequestError(str(error)) from None
    result: dict[str, Any] = {**view.describe(), **views.describe(), "sdp": answer.sdp, "type": answer.type}
    return web.json_response(result, status=201)


async def renew_live_view(request: web.Request) -> web.Response:
    """The desk still shows this view through Janus (the distributed mode): renewed every 20 s, or it ends."""
    who = arbiter(request)
    view = _views(request).renew(request.match_info["view"], who)
    if view.player_ref != request.match_info["player"]:
        raise errors.NotFoundError(f"no live view {request.match_info['view']!r} of this player")
    return web.json_response(view.describe())


async def delete_live_view(request: web.Request) -> web.Response:
    """The arbiter closes their view: audited with how long it lasted."""
    who = arbiter(request)
    views = _views(request)
    view = views.views.get(request.match_info["view"])
    if view is None or view.player_ref != request.match_info["player"]:
        raise errors.NotFoundError(f"no live view {request.match_info['view']!r} of this player")
    return web.json_response(await views.end(view.id, who, "closed by the arbiter"))


PLAYER: Final = (("player", "path", "the player's id on the platform"),)

ROUTES: Final = (
    Route(
        "GET", "/api/v1/live-views", get_live_views,
        "The live camera views of this process: LIVE_VIEWS_MAX, how many are in use (a large view counts 2), the rate "
        "a watched player sends (LIVE_VIEW_RATE), the arbiter's own views and the ICE servers their browser uses",
        {"200": "the views", "401": "not an arbiter"},
    ),
    Route(
        "POST", "/api/v1/players/{player}/live-view", post_live_view,
        "Watch a player's camera live {sdp, type: offer, size: large (default) or small, device: front (default), "
        "side or screen}: the browser's offer "
        "(a video to receive) answered with the player's camera relayed (VP8); the player's page is asked to send "
        "at LIVE_VIEW_RATE while anyone watches (session and X-CSRF-Token, or bearer token; audited camera.view). "
        "In the distributed mode (JANUS_URL) the body is {size, device} and the answer says where the browser "
        "subscribes: janus {url, token, room, pin, feed}",
        {"201": "the view's id, size and start, the views in use, and the answer {sdp, type} (or janus)",
         "400": "malformed body or unusable offer", "401": "no or unknown arbiter token",
         "403": "a reviewer (reads only), or outside the arbiter's assigned sections or boards (16)",
         "409": "the player has no live camera stream",
         "429": "LIVE_VIEWS_MAX views in use: close one (message and message_zh; Retry-After)"},
        PLAYER,
    ),
    Route(
        "PUT", "/api/v1/players/{player}/live-view/{view}", renew_live_view,
        "The desk still shows this view through Janus (the distributed mode): renewed at least once a minute, or "
        "the view ends (audited camera.view-end, not renewed)",
        {"200": "the view", "401": "no or unknown arbiter token", "403": "missing or wrong CSRF token",
         "404": "no such view of this arbiter's"},
        (*PLAYER, ("view", "path", "the view's id, as its opening gave it")),
    ),
    Route(
        "DELETE", "/api/v1/players/{player}/live-view/{view}", delete_live_view,
        "End one's live view of a player (its connection closing ends it too; audited camera.view-end with its "
        "length); the player's page goes back to the analysis rate when nobody watches",
        {"200": "the view and how many seconds it lasted", "401": "no or unknown arbiter token",
         "403": "missing or wrong CSRF token", "404": "no such view of this arbiter's"},
        (*PLAYER, ("view", "path", "the view's id, as its opening gave it")),
    ),
)  # fmt: skip
