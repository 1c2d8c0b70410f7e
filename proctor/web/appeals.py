"""Appeals (22): recorded, voted on and decided by the technical appeals committee (proctor.appeals)."""

from __future__ import annotations

from typing import Final

from aiohttp import web

from proctor import appeals, errors
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of, int_query, json_body, path_id, text_field
from proctor.web.openapi import Route
from proctor.web.reads import read
from proctor.web.sessions import arbiter


async def post_appeal(request: web.Request) -> web.Response:
    """Record a written appeal (22.1): by a team leader or coach, with the deposit; any arbiter role records it."""
    who = arbiter(request)
    context = context_of(request)
    lodged = appeals.AppealRequest.from_body(await json_body(request))
    result = await context.writer.submit(
        lambda connection, batch: appeals.file_appeal(context.service, connection, batch, who, lodged, now_ms())
    )
    return web.json_response(result, status=201)


async def post_appeal_vote(request: web.Request) -> web.Response:
    """A technical appeals committee member's vote (22.2), once each."""
    who = arbiter(request)
    context = context_of(request)
    appeal_id = path_id(request, "appeal")
    body = await json_body(request)
    choice, note = text_field(body, "vote", required=True), text_field(body, "note")
    result = await context.writer.submit(
        lambda connection, batch: appeals.vote(context.service, connection, batch, appeal_id, who, choice, note,
                                               now_ms())
    )  # fmt: skip
    return web.json_response(result, status=201)


async def post_appeal_decision(request: web.Request) -> web.Response:
    """The committee's decision by majority (22.2) and the deposit's outcome (22.1, 22.2)."""
    who = arbiter(request)
    context = context_of(request)
    appeal_id = path_id(request, "appeal")
    body = await json_body(request) if await request.read() else {}
    basis = body.get("reasonable_basis", False)
    if not isinstance(basis, bool):
        raise errors.BadRequestError("'reasonable_basis' must be true or false")
    note = text_field(body, "note")
    result = await context.writer.submit(
        lambda connection, batch: appeals.decide(context.service, connection, batch, appeal_id, who, basis, note,
                                                 now_ms())
    )  # fmt: skip
    return web.json_response(result, status=201)


async def list_appeals(request: web.Request) -> web.Response:
    """Appeals with their votes and decisions, filtered by game and status (open, upheld, rejected)."""
    arbiter(request)
    game, status = int_query(request, "game"), request.query.get("status")
    if status is not None and status not in ("open", "upheld", "rejected"):
        raise errors.BadRequestError("query parameter 'status' must be open, upheld or rejected")
    return web.json_response(await read(context_of(request), lambda c: appeals.list_appeals(c, game, status)))


async def get_appeal(request: web.Request) -> web.Response:
    arbiter(request)
    appeal_id = path_id(request, "appeal")
    return web.json_response(await read(context_of(request), lambda c: appeals.read_appeal(c, appeal_id)))


ROUTES: Final = (
    Route(
        "POST", "/api/v1/appeals", post_appeal,
        "Record a written appeal (22.1) {game or incident, filed_by {name, capacity: team-leader or coach, team}, "
        "grounds, deposit {amount, currency}}",
        {"201": "the appeal", "400": "malformed, or not lodged by a team leader or coach (22.1)",
         "401": "not an arbiter", "403": "the review panel reads only, or the game or incident is outside the "
         "arbiter's assigned sections or boards (16)", "404": "unknown game or incident"},
    ),
    Route(
        "GET", "/api/v1/appeals", list_appeals, "Appeals with their votes, decisions and deposits",
        {"200": "the appeals", "400": "bad filter", "401": "not an arbiter"},
        (("game", "query", "the service's game id"), ("status", "query", "open, upheld or rejected")),
    ),
    Route(
        "GET", "/api/v1/appeals/{appeal}", get_appeal, "One appeal with its votes, decision and deposit",
        {"200": "the appeal", "401": "not an arbiter", "404": "unknown appeal"},
        (("appeal", "path", "the appeal's id"),),
    ),
    Route(
        "POST", "/api/v1/appeals/{appeal}/votes", post_appeal_vote,
        "A technical appeals committee member's vote {vote: uphold or reject, note}, once each (22.2)",
        {"201": "the appeal", "400": "malformed", "401": "not an arbiter",
         "403": "not a committee member (22.2)", "404": "unknown appeal",
         "409": "already voted, or the appeal is decided"},
        (("appeal", "path", "the appeal's id"),),
    ),
    Route(
        "POST", "/api/v1/appeals/{appeal}/decision", post_appeal_decision,
        "The committee's decision by majority (22.2) {reasonable_basis, note}: upheld, the deposit returned; "
        "rejected, forfeited or half returned for a reasonable basis (22.1, 22.2)",
        {"201": "the appeal with its decision", "400": "malformed", "401": "not an arbiter",
         "403": "not a committee member (22.2)", "404": "unknown appeal",
         "409": "no majority yet, a tie, or already decided"},
        (("appeal", "path", "the appeal's id"),),
    ),
)  # fmt: skip
