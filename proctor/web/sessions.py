"""Who is behind a request (:func:`arbiter`: a bearer token or a dashboard session), and the dashboard's login,
session and logout (proctor.accounts)."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any, Final

from aiohttp import web

from engine.penalties import Role
from proctor import accounts, errors
from proctor.accounts import Identity, find_arbiter
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of, json_body, text_field
from proctor.web.openapi import Route

SESSION_COOKIE: Final = "proctor_session"
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})


def arbiter(request: web.Request) -> Identity:
    """The arbiter behind a request: a bearer token (API clients), or a dashboard session cookie, which must come
    with its CSRF token (``X-CSRF-Token``) on anything but a read.  The review panel (role ``reviewer``) only reads.
    401 without either; 403 for a missing CSRF token or a reviewer's change."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    context = context_of(request)
    if scheme.lower() == "bearer" and token.strip():
        with context.engine.connect() as connection:
            who = find_arbiter(connection, token.strip())
        if who is None:
            raise errors.UnauthorizedError("unknown token")
    elif cookie := request.cookies.get(SESSION_COOKIE):
        with context.engine.connect() as connection:
            view = accounts.find_session(connection, cookie, now_ms())
        if view is None:
            raise errors.UnauthorizedError("the session has ended: log in again")
        if request.method not in SAFE_METHODS and not accounts.csrf_matches(
            view, request.headers.get("X-CSRF-Token", "")
        ):
            raise errors.ForbiddenError("missing or wrong CSRF token (X-CSRF-Token)")
        who = view.identity
    else:
        raise errors.UnauthorizedError("an arbiter's token is needed: 'Authorization: Bearer TOKEN', or log in")
    if who.role is Role.REVIEWER and request.method not in SAFE_METHODS:
        raise errors.ForbiddenError("the review panel reads only")
    return who


async def post_session(request: web.Request) -> web.Response:
    """Log in to the dashboard: a session cookie (HttpOnly, SameSite=Strict) and the page's CSRF token."""
    context = context_of(request)
    body = await json_body(request)
    name, password = text_field(body, "name", True), text_field(body, "password", True)
    keys = (f"name:{name.casefold()}", f"address:{request.remote or ''}")
    now = time.time()
    wait = context.logins.retry_after(keys, now)
    if wait > 0:
        raise errors.OverloadedError("too many failed logins: try again later", retry_after_s=math.ceil(wait))

    def check() -> int | None:  # argon2 off the event loop; a read, which never waits for a writer
        with context.engine.connect() as connection:
            return accounts.check_password(connection, name, password)

    arbiter_id = await asyncio.to_thread(check)
    if arbiter_id is None:
        context.logins.failed(keys, now)
        raise errors.UnauthorizedError("wrong name or password")
    context.logins.succeeded(keys[0])
    ttl = context.settings.session_ttl_s
    token, view = await context.writer.submit(
        lambda connection, _batch: accounts.open_session(connection, arbiter_id, now_ms(), ttl)
    )
    response = web.json_response(_session_body(view), status=201)
    response.set_cookie(SESSION_COOKIE, token, max_age=context.settings.session_ttl_s, httponly=True,
                        samesite="Strict", secure=request.secure, path="/")  # fmt: skip
    return response


def _session_body(view: accounts.SessionView) -> dict[str, Any]:
    return {"name": view.identity.name, "role": view.identity.role.value, "csrf": view.csrf,
            "expires": view.expires_ms, "sections": list(view.sections)}  # fmt: skip


async def get_session(request: web.Request) -> web.Response:
    """Who is logged in (and the CSRF token a reloaded page needs)."""
    cookie = request.cookies.get(SESSION_COOKIE, "")
    with context_of(request).engine.connect() as connection:
        view = accounts.find_session(connection, cookie, now_ms()) if cookie else None
    if view is None:
        raise errors.UnauthorizedError("not logged in")
    return web.json_response(_session_body(view))


async def delete_session(request: web.Request) -> web.Response:
    """Log out: the session ends at once."""
    arbiter(request)
    cookie = request.cookies.get(SESSION_COOKIE, "")
    await context_of(request).writer.submit(
        lambda connection, _batch: accounts.end_session(connection, cookie, now_ms())
    )
    response = web.Response(status=204)
    response.del_cookie(SESSION_COOKIE, path="/")
    return response


ROUTES: Final = (
    Route(
        "POST", "/api/v1/session", post_session,
        "Log in to the dashboard {name, password}: a session cookie (HttpOnly, SameSite=Strict) and the CSRF token",
        {"201": "who, role, csrf, expires, sections", "400": "malformed", "401": "wrong name or password",
         "429": "too many failed logins for this name or address (Retry-After)",
         "503": "the database is busy (Retry-After)"},
    ),
    Route("GET", "/api/v1/session", get_session, "Who is logged in, and the session's CSRF token",
          {"200": "who, role, csrf, expires, sections", "401": "not logged in"}),
    Route("DELETE", "/api/v1/session", delete_session, "Log out (X-CSRF-Token)",
          {"204": "logged out", "401": "not logged in", "403": "missing or wrong CSRF token"}),
)  # fmt: skip
