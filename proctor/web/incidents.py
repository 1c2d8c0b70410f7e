"""Incidents: the queue (filtered), raising one, the arbiters' actions on them, and the printable report."""

from __future__ import annotations

import asyncio
from typing import Final

from aiohttp import web

from proctor import case_views, errors, incident_report, report_rendering, review
from proctor.models import MAX_INTEGER
from proctor.wall_clock import now_ms
from proctor.web.downloads import attachment
from proctor.web.inputs import context_of, json_body, optional_id, path_id, query_number, text_field
from proctor.web.openapi import Route
from proctor.web.reads import read
from proctor.web.sessions import arbiter

INCIDENT_FILTERS: Final = (
    ("game", "query", "the service's game id"), ("kind", "query", "e.g. feed-gap, result-mismatch"),
    ("player", "query", "the player's id on the platform"),
    ("status", "query", "open, or the last action: confirm, dismiss, note, penalty, evidence"),
    ("source", "query", "feed, rules, service, player, arbiter (any) or arbiter:NAME, detector (any) or detector:NAME"),
    ("article", "query", "an article and its sub-articles, e.g. 36.4"),
    ("since", "query", "raised at or after (ms since 1970)"), ("until", "query", "raised at or before (ms since 1970)"),
    ("q", "query", "text in the kind or the summary"), ("event", "query", "an event's slug"),
)  # fmt: skip


REPORT_LANGUAGE: Final = (("lang", "query", "the report's language: zh (the default) or en"),)

PAGING: Final = (
    ("limit", "query", f"incidents per page, 1 to {review.MAX_PAGE} (default {review.MAX_PAGE})"),
    ("before", "query", "the cursor: incidents with a smaller id (the next page's, from the Link header)"),
)  # fmt: skip


async def list_incidents(request: web.Request) -> web.Response:
    """Incidents carry players' evidence: arbiters and the review panel only; each with its case (``case``: id and
    status, proctor.case_views.with_cases).  Newest first, a page at a time: the headers say how many pass the
    filter (``X-Total-Count``) and where the next page is (``Link: <…>; rel="next"``, absent on the last page), so
    that a list is never cut short unseen."""
    arbiter(request)
    context = context_of(request)
    where = review.IncidentFilter.from_query(request.query)
    limit = query_number(request, "limit", (1, review.MAX_PAGE), review.MAX_PAGE)
    before = query_number(request, "before", (1, MAX_INTEGER))
    assert limit is not None
    with context.engine.connect() as connection:
        page = review.incident_page(connection, where, limit, before)
        incidents = case_views.with_cases(connection, page.incidents)
    response = web.json_response(incidents)
    response.headers["X-Total-Count"] = str(page.total)
    if page.next_before is not None:
        following = request.rel_url.update_query(before=str(page.next_before), limit=str(limit))
        response.headers["Link"] = f'<{following}>; rel="next"'
    return response


async def post_incident(request: web.Request) -> web.Response:
    """An incident raised by an arbiter, within their assignment (16; detectors raise theirs inside the service)."""
    who = arbiter(request)
    context = context_of(request)
    body = await json_body(request)
    game = optional_id(body, "game", "the service's game id")
    kind, summary = text_field(body, "kind", required=True), text_field(body, "summary", required=True)
    article = body.get("article")
    if article is not None and not isinstance(article, str):
        raise errors.BadRequestError("'article' must be a string such as '36.2'")
    player = body.get("player")
    if player is not None and not isinstance(player, str):
        raise errors.BadRequestError("'player' must be a player id")
    incident_id = await context.writer.submit(
        lambda connection, batch: context.service.report_incident(
            connection, batch, who, game, kind, summary, article=article, player_ref=player, at=now_ms(),
        )
    )  # fmt: skip
    return web.json_response({"id": incident_id}, status=201)


async def post_incident_action(request: web.Request) -> web.Response:
    """Confirm, dismiss or annotate an incident, or give the penalty its offence calls for (16–18)."""
    who = arbiter(request)
    context = context_of(request)
    incident_id = path_id(request, "incident")
    body = await json_body(request)
    action, note = text_field(body, "action", required=True), text_field(body, "note")
    offence = body.get("offence")
    player = body.get("player")
    if action == "penalty" and (not isinstance(offence, str) or not offence):
        raise errors.BadRequestError("a penalty needs 'offence': the article of the offence, e.g. '36.2'")
    result = await context.writer.submit(
        lambda connection, batch: context.service.act_on_incident(
            connection, batch, incident_id, who, action, note, offence if isinstance(offence, str) else None,
            player if isinstance(player, str) else None, now_ms(),
        )
    )  # fmt: skip
    context.camera.tell_leave_answers(incidents=[incident_id])  # a dismissed leave request: refused, with the note
    return web.json_response(result, status=201)


async def _incident_report(request: web.Request) -> incident_report.IncidentReport:
    arbiter(request)
    where = review.IncidentFilter.from_query(request.query)
    try:
        lang = incident_report.language_of(request.query)
    except ValueError as error:
        raise errors.BadRequestError(str(error)) from None
    media = context_of(request).settings.media_dir
    report: incident_report.IncidentReport = await read(
        context_of(request), lambda c: incident_report.read_report(c, where, now_ms(), lang, media)
    )
    return report


async def get_report_html(request: web.Request) -> web.Response:
    """The printable incident report (proctor.incident_report), filtered like the incident list, in Chinese or
    English (``lang``); every text escaped, the stills inlined."""
    report = await _incident_report(request)
    response = web.Response(text=report_rendering.report_html(report), content_type="text/html", charset="utf-8")
    response.headers["Content-Security-Policy"] = report_rendering.CONTENT_SECURITY_POLICY
    return response


async def get_report_pdf(request: web.Request) -> web.Response:
    """The same report as a PDF, in the ``PDF_FONT`` font (Chinese needs its CJK glyphs)."""
    report = await _incident_report(request)
    data = await asyncio.to_thread(report_rendering.report_pdf, report, context_of(request).settings.pdf_font)
    return attachment(data, "application/pdf", "incidents.pdf", "inline")


ROUTES: Final = (
    Route(
        "GET", "/api/v1/incidents", list_incidents,
        "Incidents with their arbiter actions and status (arbiters and the review panel), filtered; newest first, a "
        "page at a time (X-Total-Count: how many pass the filter; Link rel=next: the next page, absent on the last); "
        "each summary also in both languages (summary_words: {zh, en})",
        {"200": "the incidents", "400": "bad filter or paging", "401": "not an arbiter", "404": "unknown event"},
        INCIDENT_FILTERS + PAGING,
    ),
    Route(
        "POST", "/api/v1/incidents", post_incident, "Raise an incident (bearer token)",
        {"201": "the incident's id", "400": "malformed", "401": "no or unknown token",
         "403": "the game or player is outside the arbiter's assigned sections or boards (16)", "404": "unknown game"},
    ),
    Route(
        "POST", "/api/v1/incidents/{incident}/actions", post_incident_action,
        "Confirm, dismiss or note an incident, or give the penalty its offence calls for (bearer token)",
        {"201": "the action and any verdict", "400": "malformed", "401": "no or unknown token",
         "403": "beyond the arbiter's authority (16)", "404": "unknown incident", "409": "the rules refuse it"},
        (("incident", "path", "the incident's id"),),
    ),
    Route(
        "GET", "/api/v1/reports/incidents.html", get_report_html,
        "A printable incident report (filtered like the incident list): a summary per player and kind, then each "
        "case with its occurrences, evidence stills and SHA-256, actions and verdict, and the chief arbiter's "
        "signature block",
        {"200": "the page", "400": "bad filter or language", "401": "not an arbiter", "404": "unknown event"},
        INCIDENT_FILTERS + REPORT_LANGUAGE,
    ),
    Route(
        "GET", "/api/v1/reports/incidents.pdf", get_report_pdf, "The same incident report as a PDF",
        {"200": "the PDF", "400": "bad filter or language", "401": "not an arbiter", "404": "unknown event",
         "500": "the PDF_FONT font is missing"},
        INCIDENT_FILTERS + REPORT_LANGUAGE,
    ),
)  # fmt: skip
