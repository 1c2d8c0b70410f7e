"""The camera roster of a section (proctor.camera_roster): who has a link, who is connected, frozen, lost or
analysis-degraded, whose setup is approved; and the links of a whole section issued at once (JSON, or CSV)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final

from aiohttp import web
from sqlalchemy import Connection

from proctor import camera_roster, errors
from proctor.camera import issue_audited_link
from proctor.camera_roster import StreamSnapshot
from proctor.staging import Batch
from proctor.wall_clock import now_ms
from proctor.web.downloads import attachment
from proctor.web.inputs import context_of, json_body
from proctor.web.openapi import Route
from proctor.web.reads import read
from proctor.web.sessions import arbiter
from video.devices import Device

FORMATS: Final = ("json", "csv")


async def get_roster(request: web.Request) -> web.Response:
    """The section's players and their cameras (arbiters and the review panel; an assigned arbiter only their
    sections, or their boards' players: 16)."""
    who = arbiter(request)
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]

    streams = context.camera.stream_snapshots()
    others: dict[str, Mapping[str, StreamSnapshot | dict[str, Any]]] = {
        device.value: context.camera.stream_snapshots(device) for device in (Device.SIDE, Device.SCREEN)
    }
    others["microphone"] = context.camera.microphone_states()
    roster = await read(context, lambda c: camera_roster.read_roster(c, who, slug, section, streams, now_ms(), others))
    return web.json_response(roster)


async def post_stream_links(request: web.Request) -> web.Response:
    """Issue the links of the section's players at once (``which``: ``all``, each earlier link revoked, or
    ``missing``, only those without a working link), each audited; the answer is the only place the links are
    shown (JSON with each link's QR code, or ``?format=csv``)."""
    who = arbiter(request)
    context = context_of(request)
    slug, section_slug = request.match_info["slug"], request.match_info["section"]
    output = request.query.get("format", "json")
    if output not in FORMATS:
        raise errors.BadRequestError(f"query parameter 'format' must be one of {', '.join(FORMATS)}")
    body = await json_body(request) if request.can_read_body else {}
    which = camera_roster.which_of(body.get("which"))
    ttl_s = context.settings.stream_token_ttl_s

    def issue(connection: Connection, batch: Batch) -> tuple[camera_roster.SectionRef, list[Any], list[Any]]:
        section = camera_roster.find_section(connection, slug, section_slug)
        camera_roster.require_whole_section(who, section)
        entrants = camera_roster.read_entrants(connection, section)
        links = camera_roster.read_links(connection, [e.ref for e in entrants if e.ref])
        now = now_ms()
        chosen, skipped = camera_roster.to_issue(entrants, links, which, now)
        where = f"{section.event}/{section.section}"
        issued = [(e, issue_audited_link(context.service, connection, batch, who, e.ref, now, ttl_s, where))
                  for e in chosen]  # fmt: skip
        return section, issued, skipped

    section, issued, skipped = await context.writer.submit(issue)
    context.revocations.signal()  # the replaced links' open page streams end at once
    for entrant, _link in issued:
        context.bus.publish("camera", {"player": entrant.ref, "change": "stream-token"})
    origin = str(request.url.origin())
    rows = [
        {"player": e.ref, "name": e.name, "start_no": e.start_no, "team": e.team, "round": e.round, "board": e.board,
         "path": link.path, "link": origin + link.path, "expires": link.expires_ms}
        for e, link in issued
    ]  # fmt: skip
    if output == "csv":
        text = camera_roster.links_csv(rows, section.time_zone)
        response = attachment(text, "text/csv", f"{section.event}-{section.section}-stream-links.csv")
        response.set_status(201)
        return response
    qr = await asyncio.to_thread(lambda: [camera_roster.qr_image(row["link"]) for row in rows])  # ~5 ms each
    rows = [row | {"qr": image} for row, image in zip(rows, qr, strict=True)]
    return web.json_response({**section.describe(), "which": which.value, "issued": rows, "skipped": skipped,
                              "article": camera_roster.ARTICLE}, status=201)  # fmt: skip


PLACE: Final = (("slug", "path", "the event's slug"), ("section", "path", "the section's slug"))

ROUTES: Final = (
    Route(
        "GET", "/api/v1/events/{slug}/sections/{section}/camera-roster", get_roster,
        "The section's camera roster (36): each player by name with their board, link (working, expired, replaced, "
        "none), camera state (no-link, not-connected, connected, frozen, lost, analysis-degraded) and setup (room "
        "scan, ear check, approval)",
        {"200": "the roster and the count of each state", "401": "not an arbiter",
         "403": "outside the arbiter's assigned sections or boards (16)", "404": "unknown event or section"},
        PLACE,
    ),
    Route(
        "POST", "/api/v1/events/{slug}/sections/{section}/stream-links", post_stream_links,
        "Issue the stream links of the section's players at once {which: all (each earlier link revoked) or missing "
        "(only those without a working link)}, each audited (stream-link.issued); ?format=csv for a CSV of names "
        "and links",
        {"201": "the links issued (name, start number, board, link, expiry, QR code) and those skipped, or the CSV",
         "400": "malformed: which, format", "401": "not an arbiter",
         "403": "the review panel, or an assignment that does not cover the section (16)",
         "404": "unknown event or section", "503": "the database is busy (Retry-After)"},
        (*PLACE, ("format", "query", "json (the default) or csv")),
    ),
)  # fmt: skip
