"""What the player's camera page talks to: the page, its WebRTC configuration and offer, the player's requests
(leave, call the arbiter) and its event stream (proctor.camera)."""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Final

from aiohttp import web

from proctor import camera as camera_module
from proctor import errors
from proctor.accounts import token_hash
from proctor.context import Context
from proctor.live_views import sender_video
from proctor.microphone import MICROPHONE
from proctor.player_devices import require_device
from proctor.wall_clock import now_ms
from proctor.web.dashboards import media_server_origin, page_policy
from proctor.web.event_streams import relay
from proctor.web.inputs import context_of, json_body, text_field
from proctor.web.openapi import Route

MAX_REASON: Final = 200
"""The longest reason a player may give with a request."""
PLAYER_PAGE = Path(__file__).parent.parent.parent / "dashboard" / "player.html"


def _stream_player(context: Context, token: str) -> str:
    with context.engine.connect() as connection:
        return camera_module.require_player(connection, token, now_ms())


async def play_page(request: web.Request) -> web.Response:
    """The player's page, with a nonce for its one script and the dashboards' Content-Security-Policy (this server
    only; it cannot be framed)."""
    context, token = context_of(request), request.match_info["token"]
    try:
        _stream_player(context, token)
    except errors.ExpiredError as expired:  # a person reads this, not a program: plain text, not JSON
        headers = {"Content-Security-Policy": page_policy(secrets.token_urlsafe(18)), "Cache-Control": "no-store"}
        text = f"摄像头签到：此链接已过期，请向裁判索取新链接。\nCamera check-in: {expired.message}.\n"
        return web.Response(text=text, status=410, headers=headers, charset="utf-8")
    except errors.NotFoundError:
        with context.engine.connect() as connection:
            replaced = camera_module.token_replaced(connection, token)
        if not replaced:
            raise
        headers = {"Content-Security-Policy": page_policy(secrets.token_urlsafe(18)), "Cache-Control": "no-store"}
        text = ("摄像头签到：此链接已被新链接取代，请向裁判索取新链接。\n"
                f"Camera check-in: {camera_module.REPLACED_TEXT}.\n")  # fmt: skip
        return web.Response(text=text, status=404, headers=headers, charset="utf-8")
    nonce = secrets.token_urlsafe(18)
    text = PLAYER_PAGE.read_text(encoding="utf-8").replace("{{NONCE}}", nonce)
    policy = page_policy(nonce, media_server_origin(context.settings))  # the distributed mode: the page publishes there
    headers = {"Content-Security-Policy": policy, "Cache-Control": "no-store"}
    return web.Response(text=text, content_type="text/html", headers=headers)


async def rtc_config(request: web.Request) -> web.Response:
    """What the player page needs: ICE servers (with TURN credentials for this player) and the stream to send."""
    context = context_of(request)
    player = _stream_player(context, request.query.get("token", ""))
    settings = context.settings
    microphone = request.app[MICROPHONE].policy_for(player)
    return web.json_response({
        "iceServers": camera_module.ice_servers(settings, player, time.time()),
        "video": context.camera.video_wanted.get(player, sender_video(settings, watched=False)),
        "viewRate": settings.live_view_rate,
        "analysisRate": settings.analysis_rate,
        # The distributed mode (issue 16): the page publishes to the media server, in the player's room.
        "sfu": bool(settings.janus_url),
        # The section requires the microphone (proctor.microphone): the page sends it with the front camera.
        "microphone": microphone.required,
        # How long a sound clip is kept, for the page's notice before the player agrees.
        "soundRetentionDays": microphone.retention_days,
    })  # fmt: skip


async def rtc_offer(request: web.Request) -> web.Response:
    """A player's WebRTC offer ``{sdp, type, token, device, surface}`` → the answer; a bad token or SDP allocates
    nothing.  ``device``: front (by default), side or screen (video.devices); a screen's ``surface`` is the browser's
    ``displaySurface`` (only ``monitor``, the whole screen, is accepted).  The stream follows the player's section's
    policy (:meth:`proctor.camera.Camera.accept_offer`)."""
    context = context_of(request)
    body = await json_body(request)
    token, sdp, kind = text_field(body, "token", True), text_field(body, "sdp", True), text_field(body, "type", True)
    if kind != "offer":
        raise errors.BadRequestError("'type' must be 'offer'")
    player = _stream_player(context, token)
    device = require_device(body.get("device"))
    try:
        answer = await context.camera.accept_offer(player, sdp, kind, device, body.get("surface"))
    except ValueError as error:
        raise errors.BadRequestError(str(error)) from None
    return web.json_response({"sdp": answer.sdp, "type": answer.type})


async def play_request(request: web.Request) -> web.Response:
    """The player asks to leave the area (36.4.1) or calls the arbiter: an incident for the arbiters' queue.  Limited
    per token (``player_requests_burst`` at once, then ``player_requests_per_minute``; 429 with Retry-After)."""
    context = context_of(request)
    token = request.match_info["token"]
    player = _stream_player(context, token)
    wait = context.player_requests.take(token_hash(token), time.monotonic())
    if wait is not None:
        raise errors.TooManyRequestsError(
            f"too many requests from this page: the arbiter has your earlier ones; try again in {wait} s",
            retry_after_s=wait,
        )
    body = await json_body(request)
    kind = body.get("kind")
    if kind not in ("leave", "call"):
        raise errors.BadRequestError("'kind' must be 'leave' or 'call'")
    note = body.get("note", "")
    if not isinstance(note, str) or len(note.strip()) > MAX_REASON:
        raise errors.BadRequestError(f"'note' must be text of at most {MAX_REASON} characters")
    note = " ".join(note.split())
    game = context.camera.current_game(player)
    summary = "asks to leave the competition area" if kind == "leave" else "calls the arbiter"
    if note:
        summary += f": {note}"
    incident = await context.writer.submit(
        lambda connection, batch: context.service.raise_incident(
            connection, batch, game, "leave-request" if kind == "leave" else "arbiter-call", f"{player} {summary}",
            source="player", article="36.4.1" if kind == "leave" else None, player_ref=player, at=now_ms(),
        )
    )  # fmt: skip
    if kind == "leave":
        context.camera.tell_leave_answer(player)  # the page shows the request as waiting for the arbiter
    return web.json_response({"incident": incident}, status=201)


async def play_events(request: web.Request) -> web.StreamResponse:
    """Server-sent events for one player's page: the arbiters' messages, prompts, leave grants and approval, for as
    long as its stream token holds (a new token for the player revokes it; proctor.web.event_streams)."""
    context = context_of(request)
    token = request.match_info["token"]
    player = _stream_player(context, token)

    def authority() -> str | None:
        with context.engine.connect() as connection:
            return camera_module.token_ended(connection, token, player, now_ms())

    return await relay(request, context.camera.listen(player), authority, context.revocations,
                       context.settings.stream_recheck_s)  # fmt: skip


ROUTES: Final = (
    Route("GET", "/play/{token}", play_page, "The player's camera page", {"200": "the page", "404": "unknown token",
          "410": "expired token (a plain-text page saying so)"},
          (("token", "path", "the player's stream token"),)),
    Route(
        "GET", "/api/v1/rtc/config", rtc_config, "ICE servers and stream settings for a player's page",
        {"200": "the configuration", "404": "unknown token", "410": "expired token"},
        (("token", "query", "the player's stream token"),),
    ),
    Route(
        "POST", "/api/v1/rtc/offer", rtc_offer,
        "A player's WebRTC offer {sdp, type, token, device: front (default), side or screen, surface: the shared "
        "screen's displaySurface}; returns the answer",
        {"200": "the answer {sdp, type}",
         "400": "malformed body or unusable SDP, or a screen share of a window or a tab (the whole screen is required)",
         "404": "unknown token or device",
         "409": "the device is live on another connection (a second-connection incident is raised), or the player's "
                "section does not use the device",
         "410": "expired token"},
    ),
    Route(
        "POST", "/api/v1/play/{token}/requests", play_request,
        "A player's request {kind: leave or call, note: the reason, at most 200 characters} to leave the area "
        "(36.4.1) or call to the arbiter",
        {"201": "the incident raised", "400": "unknown kind, or a note too long", "404": "unknown token",
         "410": "expired token", "429": "too many requests from this token (Retry-After)"},
        (("token", "path", "the player's stream token"),),
    ),
    Route(
        "GET", "/api/v1/play/{token}/events", play_events,
        "Server-sent events for the player's page only: the arbiters' messages, prompts, leave grants and approval, "
        "and view-rate (the rate to send while an arbiter watches live, and back) (the first event, state, is what "
        "the page should show now); it ends with an `end` event when the token is "
        "revoked or expires",
        {"200": "an event stream", "404": "unknown token", "410": "expired token"},
        (("token", "path", "the player's stream token"),),
    ),
)  # fmt: skip
