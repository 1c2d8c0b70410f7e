"""The arbiters' and the review panel's pages, each with a nonce for its one script and a strict
Content-Security-Policy."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Final

from aiohttp import web
from yarl import URL

from engine.penalties import OFFENCES
from proctor.context import WEB_CONTEXT
from proctor.settings import Settings
from proctor.web.openapi import Route

ARBITER_PAGE = Path(__file__).parent.parent.parent / "dashboard" / "arbiter.html"


def page_policy(nonce: str, connect: str = "") -> str:
    """The dashboards' Content-Security-Policy: their one script (by nonce: a module, whose imports of the shared
    modules, proctor.web.page_modules, load by the same nonce), and this server for data, images (the camera
    thumbnails and evidence stills) and clips; nothing else.  ``connect``: one more origin the page may call (the
    media server's, in the distributed mode, when it is not behind this server's address)."""
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; connect-src 'self'{connect}; "
        "img-src 'self' data:; media-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def media_server_origin(settings: Settings) -> str:
    """The media server's origin as a page's ``connect-src`` adds it (`` http://host:port``), if the pages reach it
    at another address than this server's (``JANUS_PUBLIC_URL``, else ``JANUS_URL``)."""
    url = URL(settings.janus_public_url or settings.janus_url)
    if not settings.janus_url or not url.is_absolute():
        return ""
    return f" {url.origin()}"


async def arbiter_page(request: web.Request) -> web.Response:
    """The arbiters' page: login, the live round and the incident queue, all through the API behind the login.  The
    page gets the penalised offences (engine/penalties.py) and a nonce for its one script; its Content-Security-Policy
    lets it reach this server only."""
    offences = [{"article": o.article, "description": o.description} for o in OFFENCES.values()]
    nonce = secrets.token_urlsafe(18)
    text = (
        ARBITER_PAGE.read_text(encoding="utf-8")
        .replace("[/*OFFENCES*/]", json.dumps(offences, ensure_ascii=False).replace("<", "\\u003c"))
        .replace("{{NONCE}}", nonce)
    )
    policy = page_policy(nonce, media_server_origin(request.app[WEB_CONTEXT].settings))  # live views through Janus
    headers = {"Content-Security-Policy": policy, "Cache-Control": "no-store"}
    return web.Response(text=text, content_type="text/html", headers=headers)


REVIEW_PAGE = Path(__file__).parent.parent.parent / "dashboard" / "review.html"


async def review_page(request: web.Request) -> web.Response:
    """The review panel's page: login, the games with their timelines and replay, a player's history, the incident
    search with the exports and the audit check; it only reads.  Same Content-Security-Policy as the arbiters' page."""
    nonce = secrets.token_urlsafe(18)
    text = REVIEW_PAGE.read_text(encoding="utf-8").replace("{{NONCE}}", nonce)
    headers = {"Content-Security-Policy": page_policy(nonce), "Cache-Control": "no-store"}
    return web.Response(text=text, content_type="text/html", headers=headers)


ROUTES: Final = (
    Route("GET", "/arbiter", arbiter_page, "The arbiters' dashboard: login, the live round, the incident queue",
          {"200": "the page"}),
    Route("GET", "/review", review_page,
          "The review panel's page: games with timeline and replay, player history, incident search, exports, audit, "
          "appeals, standings and results entry",
          {"200": "the page"}),
)  # fmt: skip
