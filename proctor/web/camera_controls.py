"""The arbiters' controls over a player's camera (36): the stream token, messages, prompts, leave, approval,
the camera's status and thumbnail (proctor.camera)."""

from __future__ import annotations

from typing import Any, Final

from aiohttp import web
from sqlalchemy import Connection

from proctor import camera as camera_module
from proctor import errors
from proctor.assignments import require_assigned_to_player
from proctor.player_devices import require_device
from proctor.staging import Batch
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of, json_body, optional_id, text_field, whole_number
from proctor.web.openapi import Route
from proctor.web.sessions import arbiter


async def post_stream_token(request: web.Request) -> web.Response:
    """An arbiter issues a player's camera token; the player opens ``/play/{token}``."""
    who = arbiter(request)
    context = context_of(request)
    player = request.match_info["player"]

    def issue(connection: Connection, batch: Batch) -> camera_module.IssuedLink:
        if not context.service.knows_player(connection, player):
            raise errors.NotFoundError(f"no player {player!r}: neither an event's player nor in a game not over")
        game_id = camera_module.current_game(context.service, player)
        require_assigned_to_player(connection, who, player, game_id, f"player {player}'s stream token")
        return camera_module.issue_audited_link(context.service, connection, batch, who, player, now_ms(),
                                                context.settings.stream_token_ttl_s)  # fmt: skip

    issued = await context.writer.submit(issue)
    context.revocations.signal()  # the player's earlier token is revoked: its open page stream ends at once
    # The desks ask a player's camera once, and again only after this (a player without a link is not polled).
    context.bus.publish("camera", {"player": player, "change": "stream-token"})
    return web.json_response({"player": player, "token": issued.token, "url": issued.path,
                              "link": str(request.url.origin()) + issued.path, "expires": issued.expires_ms},
                             status=201)  # fmt: skip


def _incident_param(body: dict[str, Any]) -> int | None:
    return optional_id(body, "incident", "an incident's id")


def _free_text(body: dict[str, Any], name: str, required: bool) -> str:
    value = text_field(body, name, required).strip()
    if len(value) > camera_module.MAX_TEXT:
        raise errors.BadRequestError(f"'{name}' must be at most {camera_module.MAX_TEXT} characters")
    return value


async def post_camera_message(request: web.Request) -> web.Response:
    """A message to the player's page, shown at once with its time."""
    who = arbiter(request)
    body = await json_body(request)
    text, incident = _free_text(body, "text", required=True), _incident_param(body)
    result = await context_of(request).camera.send_message(who, request.match_info["player"], text, incident)
    return web.json_response(result, status=201)


async def post_camera_prompt(request: web.Request) -> web.Response:
    """Ask the player to show something on camera (ear check 36.2, room scan, pan check 36.4), recording the window."""
    who = arbiter(request)
    body = await json_body(request)
    kinds = [prompt.value for prompt in camera_module.Prompt]
    if body.get("kind") not in kinds:
        raise errors.BadRequestError(f"'kind' must be one of {', '.join(kinds)}")
    prompt = camera_module.Prompt(body["kind"])
    seconds = whole_number(body, "seconds", camera_module.PROMPT_SECONDS, default=15)
    incident = _incident_param(body)
    result = await context_of(request).camera.prompt(who, request.match_info["player"], prompt, seconds, incident)
    return web.json_response(result, status=201)


async def post_camera_leave(request: web.Request) -> web.Response:
    """Grant leave of the competition area (36.4.1) for some minutes."""
    who = arbiter(request)
    body = await json_body(request)
    minutes = whole_number(body, "minutes", camera_module.LEAVE_MINUTES)
    reason, incident = _free_text(body, "reason", required=True), _incident_param(body)
    result = await context_of(request).camera.grant_leave(who, request.match_info["player"], minutes, reason, incident)
    return web.json_response(result, status=201)


async def post_camera_approval(request: web.Request) -> web.Response:
    """Approve (or not) the player's setup after the pre-game environment check."""
    who = arbiter(request)
    body = await json_body(request)
    approved = body.get("approved")
    if not isinstance(approved, bool):
        raise errors.BadRequestError("'approved' must be true or false")
    note = _free_text(body, "note", required=not approved)
    incident = _incident_param(body)
    context = context_of(request)
    result = await context.camera.approve(who, request.match_info["player"], approved, note, incident)
    # The desks' check-in lists (24.1.1) ask again: an approval is what checks a player in by the camera setup.
    context.bus.publish("camera", {"player": request.match_info["player"], "change": "approval"})
    return web.json_response(result, status=201)


async def get_camera(request: web.Request) -> web.Response:
    """The player's camera as the arbiters see it."""
    arbiter(request)
    return web.json_response(context_of(request).camera.status(request.match_info["player"]))


async def get_camera_thumbnail(request: web.Request) -> web.Response:
    """The last analysed frame of the player's live stream, small (320x240 JPEG), for the dashboard's boards; of the
    device in ``?device=`` (front by default: side, screen)."""
    arbiter(request)
    player = request.match_info["player"]
    jpeg = context_of(request).camera.thumbnail(player, require_device(request.query.get("device")))
    if jpeg is None:
        raise errors.NotFoundError(f"no live camera stream for {player!r}")
    return web.Response(body=jpeg, content_type="image/jpeg", headers={"Cache-Control": "no-store"})


BEYOND_ASSIGNMENT: Final = "outside the arbiter's assigned sections or boards (16), or the review panel (reads only)"

ROUTES: Final = (
    Route(
        "POST", "/api/v1/players/{player}/stream-token", post_stream_token,
        "Issue a player's camera token (bearer token of an arbiter); the player opens /play/{token}",
        {"201": "the token, the page's address and when it expires (the end of the player's event, else "
                "STREAM_TOKEN_TTL_S)", "401": "no or unknown arbiter token",
         "403": BEYOND_ASSIGNMENT,
         "404": "not an event's player, nor in a game not over"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "POST", "/api/v1/players/{player}/camera/messages", post_camera_message,
        "Send the player's page a message {text, incident} (bearer token of an arbiter; audited)",
        {"201": "the message's id and time", "400": "empty or longer than 500 characters, or a bad incident",
         "401": "no or unknown arbiter token", "403": BEYOND_ASSIGNMENT,
         "404": "unknown player or incident"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "POST", "/api/v1/players/{player}/camera/prompts", post_camera_prompt,
        "Ask the player to show something on camera {kind: ear-check (36.2), room-scan or pan-check (36.4), seconds "
        "5-60 (15), incident}: the page shows it with a countdown, and the window's clip (and for the ear check two "
        "stills) become evidence on the incident given or on a new one",
        {"201": "the prompt's id, its incident and when it ends", "400": "bad kind, seconds or incident",
         "401": "no or unknown arbiter token", "403": BEYOND_ASSIGNMENT,
         "404": "unknown player or incident", "409": "the player has no live camera stream"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "POST", "/api/v1/players/{player}/camera/leave", post_camera_leave,
        "Grant leave of the competition area (36.4.1) {minutes 1-60, reason, incident}: the left-area check stays "
        "quiet until then, across reconnections",
        {"201": "the grant and its end", "400": "minutes out of range, no reason, or a bad incident",
         "401": "no or unknown arbiter token", "403": BEYOND_ASSIGNMENT,
         "404": "unknown player or incident"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "POST", "/api/v1/players/{player}/camera/approval", post_camera_approval,
        "Approve (or not) the player's setup after the pre-game environment check {approved, note, incident}; "
        "stored with whether the camera was streaming (streaming): given while it streams, after the room scan and "
        "the ear check, it checks the player in for their next round (24.1.1)",
        {"201": "the approval as stored, with streaming", "400": "malformed (a refusal needs a note)",
         "401": "no or unknown arbiter token", "403": BEYOND_ASSIGNMENT,
         "404": "unknown player or incident"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "GET", "/api/v1/players/{player}/camera", get_camera,
        "The player's camera for arbiters: connected since, frames, active findings, the section policy in force "
        "(checks, thresholds, retention, the devices required), leave, approval, last prompts "
        "and messages, which checks run, and each device's state (devices: front, side, screen)",
        {"200": "the status", "401": "no or unknown arbiter token", "404": "unknown player"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "GET", "/api/v1/players/{player}/camera/thumbnail.jpg", get_camera_thumbnail,
        "The last analysed frame of the player's live stream as a 320x240 JPEG (arbiters and the review panel; "
        "Cache-Control: no-store); ?device=side or screen for the player's other devices",
        {"200": "the JPEG", "401": "not an arbiter", "404": "no live stream of the device, or no such device"},
        (("player", "path", "the player's id on the platform"), ("device", "query", "front (default), side, screen")),
    ),
)  # fmt: skip
