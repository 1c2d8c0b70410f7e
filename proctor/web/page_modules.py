"""The pages' shared script modules (dashboard/js/): board drawing, session and CSRF, i18n (and the words the arbiters'
pages share, an incident's summary among them), the event stream, times and elements, served as ES modules under
``/assets/{name}.js``.

Only the files named in :data:`PAGE_MODULES` are served (a strict allow-list by name: no other file of the folder,
no path); each answer carries a content hash as its ``ETag`` and ``Cache-Control: no-cache``, so that a browser asks
again on every load and gets 304 until the file changes (one URL per module: an import inside a module names the
same URL as the page's).  The pages' Content-Security-Policy does not change for them: a module imported by the
page's nonce'd module script is fetched with that script's nonce (HTML's descendant script fetch options)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

from aiohttp import web

from proctor import errors
from proctor.web.openapi import Route

MODULE_FOLDER: Final = Path(__file__).parent.parent.parent / "dashboard" / "js"
PAGE_MODULES: Final = frozenset(
    {"arbiter_words", "board", "check_in", "elements", "event_stream", "i18n", "incident_words", "janus_client",
     "player_devices", "publish", "session", "talk", "times"}
)  # fmt: skip
"""The modules the pages import, by name (dashboard/js/{name}.js)."""


def module_etag(body: bytes) -> str:
    """The module's content hash as an entity tag."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


async def page_module(request: web.Request) -> web.Response:
    """One of the pages' modules as JavaScript; 404 for any name not on the list."""
    name = request.match_info["name"]
    if name not in PAGE_MODULES:
        raise errors.NotFoundError(f"no page module {name[:40]!r}")
    body = (MODULE_FOLDER / f"{name}.js").read_bytes()
    etag = module_etag(body)
    headers = {"ETag": etag, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    if etag in (tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")):
        return web.Response(status=304, headers=headers)
    return web.Response(body=body, content_type="text/javascript", charset="utf-8", headers=headers)


ROUTES: Final = (
    Route("GET", "/assets/{name}.js", page_module,
          "One of the pages' shared script modules (dashboard/js/: arbiter_words, board, check_in, elements, "
          "event_stream, i18n, incident_words, player_devices, session, talk, times), by name only",
          {"200": "the module (text/javascript; ETag, Cache-Control: no-cache)", "304": "unchanged since the ETag",
           "404": "no such module"},
          (("name", "path", "the module's name"),)),
)  # fmt: skip
