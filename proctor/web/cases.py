"""Cases: the queue (filtered, sorted by urgency, paged), one case with its occurrences and actions, and the
arbiters' actions on cases (dismiss, confirm, a pending verdict confirmed or overruled, the ladder's penalty, a leave
request granted or refused; several dismissed at once)."""

from __future__ import annotations

from typing import Any, Final

from aiohttp import web

from proctor import camera as camera_module
from proctor import case_views, errors
from proctor.casebook import MAX_BULK
from proctor.models import MAX_INTEGER
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of, json_body, path_id, text_field, whole_number
from proctor.web.openapi import Route
from proctor.web.reads import read
from proctor.web.sessions import arbiter

CASE_FILTERS: Final = (
    ("kind", "query", "e.g. extra-person, clock-mismatch, verdict-pending"),
    ("section", "query", "event/section or event/section/board, several comma-separated"),
    ("board", "query", "the board number"), ("player", "query", "the player's id on the platform"),
    ("game", "query", "the service's game id"),
    ("status", "query", "open, dismissed, confirmed, overruled, decided, or closed (any but open)"),
    ("limit", "query", f"cases per page, 1 to {case_views.MAX_LIMIT} ({case_views.DEFAULT_LIMIT} by default)"),
    ("cursor", "query", "the previous page's 'next'"),
)  # fmt: skip


async def list_cases(request: web.Request) -> web.Response:
    """Cases carry players' evidence: arbiters and the review panel only."""
    arbiter(request)
    where = case_views.CaseFilter.from_query(request.query)
    page = await read(context_of(request), lambda connection: case_views.read_cases(connection, where))
    return web.json_response(page)


async def get_case(request: web.Request) -> web.Response:
    arbiter(request)
    case_id = path_id(request, "case")
    body = await read(context_of(request), lambda connection: case_views.read_case(connection, case_id))
    return web.json_response(body)


def _params(body: dict[str, Any]) -> dict[str, Any]:
    return {"add_ms": body["add_ms"]} if "add_ms" in body else {}


async def _act(request: web.Request, case_ids: list[int], body: dict[str, Any]) -> list[dict[str, Any]]:
    who = arbiter(request)
    context = context_of(request)
    action, reason = text_field(body, "action", required=True), text_field(body, "reason")
    params = _params(body)
    answers: list[dict[str, Any]] = await context.writer.submit(
        lambda connection, batch: context.service.act_on_cases(
            connection, batch, case_ids, who, action, reason, params, now_ms()
        )
    )
    context.camera.tell_leave_answers(cases=case_ids)  # a dismissed leave request's case: refused, with the reason
    return answers


async def post_case_action(request: web.Request) -> web.Response:
    """Dismiss (with a reason) or confirm a case; confirm or overrule (``add_ms``) a pending verdict's case; give the
    penalty the ladder gives for it (``offence``, ``player``, ``expect``, ``confirm_loss``: proctor.penalty_preview);
    grant leave (``minutes``) or refuse a leave request's case (with a reason)."""
    case_id = path_id(request, "case")
    body = await json_body(request)
    action = text_field(body, "action", required=True)
    if action == "penalty":
        who = arbiter(request)
        context = context_of(request)
        reason = text_field(body, "reason")
        answer = await context.writer.submit(
            lambda connection, batch: context.service.penalise_case(
                connection, batch, case_id, who, body, reason, now_ms()
            )
        )
        return web.json_response(answer, status=201)
    if action == "grant-leave":
        who = arbiter(request)
        minutes = whole_number(body, "minutes", camera_module.LEAVE_MINUTES)
        reason = text_field(body, "reason", required=True)
        answer = await context_of(request).camera.grant_leave_on_case(who, case_id, minutes, reason)
        return web.json_response(answer, status=201)
    (answer,) = await _act(request, [case_id], body)
    return web.json_response(answer, status=201)


async def post_bulk_action(request: web.Request) -> web.Response:
    """Several cases at once (``cases``: their ids), all or none: e.g. dismissed with one reason."""
    body = await json_body(request)
    ids = body.get("cases")
    if (
        not isinstance(ids, list)
        or not 1 <= len(ids) <= MAX_BULK
        or not all(isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= MAX_INTEGER for i in ids)
    ):
        raise errors.BadRequestError(f"'cases' must be a list of 1 to {MAX_BULK} case ids")
    answers = await _act(request, ids, body)
    return web.json_response({"cases": answers}, status=201)


ROUTES: Final = (
    Route(
        "GET", "/api/v1/cases", list_cases,
        "Cases, most urgent then newest first, paged (arbiters and the review panel); each summary also in both "
        "languages (summary_words: {zh, en}), a pending verdict's facts too (verdict.text_words)",
        {"200": "a page: cases, total, remaining, next", "400": "bad filter", "401": "not an arbiter"},
        CASE_FILTERS,
    ),
    Route(
        "POST", "/api/v1/cases/actions", post_bulk_action,
        "Act on several cases at once, all or none (e.g. dismiss with a reason)",
        {"201": "each case's action and status", "400": "malformed", "401": "not an arbiter",
         "403": "beyond the arbiter's authority or assignment (16)", "404": "unknown case",
         "409": "a case already closed"},
    ),
    Route(
        "GET", "/api/v1/cases/{case}", get_case,
        "One case with its occurrences (each summary also in both languages: summary_words {zh, en}) and the "
        "actions taken",
        {"200": "the case", "401": "not an arbiter", "404": "unknown case"}, (("case", "path", "the case's id"),),
    ),
    Route(
        "POST", "/api/v1/cases/{case}/actions", post_case_action,
        "Dismiss or confirm a case; confirm or overrule a pending verdict (16, 37.7, 14.3); the ladder's penalty for "
        "it {action: penalty, offence, player, reason, expect: {penalty, loses_game} as previewed, confirm_loss} "
        "(17, 18, 15.3); a leave request granted {action: grant-leave, minutes 1-60, reason} or refused "
        "{action: refuse, reason} (36.4.1)",
        {"201": "the action and the case's status (a penalty: its verdict; a pending verdict's: what changed in both "
         "languages, said: {zh, en})", "400": "malformed",
         "401": "not an arbiter", "403": "beyond the arbiter's authority or assignment (16)",
         "404": "unknown case", "409": "the case is closed, the rules refuse it, the ladder moved since the preview, "
         "or a loss of the game not confirmed (confirm_loss)"},
        (("case", "path", "the case's id"),),
    ),
)  # fmt: skip
