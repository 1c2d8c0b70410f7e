"""Check-in (24.1.1, proctor.check_ins): a round's players, checked in (by the camera setup or by hand) or not yet and
what is missing; a check-in by hand and its undoing."""

from __future__ import annotations

from typing import Final

from aiohttp import web

from proctor import check_ins
from proctor.models import MAX_INTEGER
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of, int_query, json_body, text_field, whole_number
from proctor.web.openapi import Route
from proctor.web.reads import read
from proctor.web.sessions import arbiter


async def get_check_in(request: web.Request) -> web.Response:
    """Every player of the round's pairings with their check-in (arbiters, the committees and the review panel; an
    assigned arbiter only their sections, or their boards' players: 16)."""
    who = arbiter(request)
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]
    round_no = int_query(request, "round")
    streams = context.camera.stream_snapshots()
    body = await read(context, lambda c: check_ins.read_check_ins(c, who, slug, section, round_no, streams, now_ms()))
    return web.json_response(body)


async def post_check_in(request: web.Request) -> web.Response:
    """Check a player in by hand, or undo a check-in, with a reason."""
    who = arbiter(request)
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]
    body = await json_body(request)
    action = check_ins.action_of(body.get("action"))
    round_no = whole_number(body, "round", (1, MAX_INTEGER))
    start_no = whole_number(body, "start_no", (1, MAX_INTEGER))
    reason = text_field(body, "reason", required=True)
    streams = context.camera.stream_snapshots()
    recorded = await context.writer.submit(
        lambda connection, batch: check_ins.record_check_in(
            context.service, connection, batch, who, slug, section, round_no, start_no, action, reason, streams,
            now_ms(),
        )
    )  # fmt: skip
    return web.json_response(recorded, status=201)


PLACE: Final = (("slug", "path", "the event's slug"), ("section", "path", "the section's slug"))

ROUTES: Final = (
    Route(
        "GET", "/api/v1/events/{slug}/sections/{section}/check-in", get_check_in,
        "A round's check-in (24.1.1): every player of its pairings (not a bye, not withdrawn) by board, checked in "
        "(how: camera, the setup approved while streaming after the room scan and, where the section checks "
        "earphones, the ear check; or manual; when, by whom) or not yet, with what is missing (no-platform-id, "
        "camera-not-connected, room-scan-not-done, ear-check-not-done, setup-not-approved, setup-refused, "
        "approved-without-camera, approved-before-checks); the round's start when known",
        {"200": "the round's check-in and its counts", "400": "bad round", "401": "not an arbiter",
         "403": "outside the arbiter's assigned sections or boards (16)",
         "404": "unknown event or section, or the round is not paired yet"},
        (*PLACE, ("round", "query", "the round (by default the first paired round that has not started)")),
    ),
    Route(
        "POST", "/api/v1/events/{slug}/sections/{section}/check-in", post_check_in,
        "Check a player in by hand, or undo a check-in (24.1.1) {action: check-in (default) or undo, round, "
        "start_no, reason}: a check-in by an arbiter, a deputy chief, the chief arbiter or the organising committee; "
        "an undo by the chief arbiter or a deputy chief; append-only, sealed and audited",
        {"201": "the row as stored and the player's check-in after it", "400": "malformed",
         "401": "not an arbiter", "403": "another role, or beyond the arbiter's assignment (16)",
         "404": "unknown event, section, round or player of the round",
         "409": "already checked in, not checked in (undo), or withdrawn (24.4)"},
        PLACE,
    ),
)  # fmt: skip
