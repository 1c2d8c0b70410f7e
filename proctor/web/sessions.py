"""Who is behind a request (:func:`arbiter`: a bearer token or a dashboard session), and the dashboard's login,
session and logout (proctor.accounts)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any, Final

from aiohttp import web
from sqlalchemy import Connection

from engine.penalties import Role
from proctor import accounts, errors
from proctor.accounts import Identity, find_arbiter
from proctor.context import Context
from proctor.staging import Batch
from proctor.time_zones import event_zone
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of, json_body, text_field, web_context_of
from proctor.web.openapi import Route

SESSION_COOKIE: Final = "proctor_session"
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})


def has_credentials(request: web.Request) -> bool:
    """Whether the request carries an arbiter's credentials (a bearer token or a session cookie), good or not."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return (scheme.lower() == "bearer" and bool(token.strip())) or bool(request.cookies.get(SESSION_COOKIE))


def arbiter(request: web.Request) -> Identity:
    """The arbiter behind a request: a bearer token (API clients), or a dashboard session cookie, which must come
    with its CSRF token (``X-CSRF-Token``) on anything but a read.  The review panel (role ``reviewer``) only reads.
    401 without either; 403 for a missing CSRF token or a reviewer's change."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    context = web_context_of(request)
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
    if (
        who.role is Role.APPEALS_COMMITTEE
        and request.method not in SAFE_METHODS
        and not APPEAL_WRITES.match(request.path)
    ):
        raise errors.ForbiddenError("the appeals committee records, votes on and decides appeals, and reads (22.2)",
                                    article="22.2")  # fmt: skip
    return who


APPEAL_WRITES = re.compile(r"^/api/v1/appeals(/\d+/(votes|decision))?$")
"""The writes the appeals committee makes: an appeal recorded, a vote, the decision."""


def still_authorised(request: web.Request) -> Callable[[], str | None]:
    """What authorised a long request (the live stream), checked again: None while the bearer token still names an
    arbiter or the session is still open and unexpired, else why it ended."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    context = web_context_of(request)
    if scheme.lower() == "bearer" and token.strip():
        bearer = token.strip()

        def by_token() -> str | None:
            with context.engine.connect() as connection:
                return None if find_arbiter(connection, bearer) is not None else "the arbiter's token was removed"

        return by_token
    cookie = request.cookies.get(SESSION_COOKIE, "")

    def by_session() -> str | None:
        with context.engine.connect() as connection:
            open_now = accounts.find_session(connection, cookie, now_ms()) is not None
        return None if open_now else "the session has ended (logged out, expired or ended): log in again"

    return by_session


async def post_session(request: web.Request) -> web.Response:
    """Log in to the dashboard: a session cookie (HttpOnly, SameSite=Strict) and the page's CSRF token.  The try is
    counted against its name and address before the password is checked (proctor.accounts.reserve_login), and the
    check runs in the bounded pool (429 beyond it); a failure says how many tries are left."""
    context = context_of(request)
    body = await json_body(request)
    name, password = text_field(body, "name", True), text_field(body, "password", True)
    address, limit = request.remote or "", context.login_limit  # the client's, behind a trusted proxy

    def reserve(connection: Connection, _batch: Batch) -> int:
        return accounts.reserve_login(connection, limit, name, address, now_ms())

    def check() -> int | None:  # argon2 in the bounded pool; a read, which never waits for a writer
        with context.engine.connect() as connection:
            return accounts.check_password(connection, name, password)

    def opened_session(connection: Connection, arbiter_id: int) -> tuple[str, accounts.SessionView]:
        accounts.clear_logins(connection, name, address)
        return accounts.open_session(connection, arbiter_id, now_ms(), context.settings.session_ttl_s)

    with context.passwords.slot():
        async with context.login_turns:
            tries_left = await context.writer.submit(reserve)
        arbiter_id = await asyncio.wrap_future(context.passwords.run(check))
    if arbiter_id is None:
        detail: dict[str, Any] = {"tries_left": tries_left}
        if tries_left == 0:
            detail["next_try_after_s"] = limit.delay_s(limit.attempts)
        raise errors.UnauthorizedError("wrong name or password", **detail)
    found = arbiter_id
    token, view = await context.writer.submit(lambda connection, _batch: opened_session(connection, found))
    response = web.json_response(_session_body(view, _time_zone(context)), status=201)
    response.set_cookie(SESSION_COOKIE, token, max_age=context.settings.session_ttl_s, httponly=True,
                        samesite="Strict", secure=request.secure, path="/")  # fmt: skip
    return response


def _time_zone(context: Context) -> str:
    with context.engine.connect() as connection:
        return event_zone(connection)


def _session_body(view: accounts.SessionView, time_zone: str) -> dict[str, Any]:
    """Who, and the zone the pages show times in (the latest loaded event's; UTC without one: proctor.time_zones)."""
    return {"name": view.identity.name, "role": view.identity.role.value, "csrf": view.csrf,
            "expires": view.expires_ms, "sections": list(view.sections), "time_zone": time_zone}  # fmt: skip


async def get_session(request: web.Request) -> web.Response:
    """Who is logged in (and the CSRF token a reloaded page needs)."""
    cookie = request.cookies.get(SESSION_COOKIE, "")
    with context_of(request).engine.connect() as connection:
        view = accounts.find_session(connection, cookie, now_ms()) if cookie else None
        zone = event_zone(connection)
    if view is None:
        raise errors.UnauthorizedError("not logged in")
    return web.json_response(_session_body(view, zone))


async def delete_session(request: web.Request) -> web.Response:
    """Log out: the session ends at once.  Every role may (the review panel too: ending its own session changes
    nothing it may not), with the session's CSRF token."""
    cookie = request.cookies.get(SESSION_COOKIE, "")
    with context_of(request).engine.connect() as connection:
        view = accounts.find_session(connection, cookie, now_ms()) if cookie else None
    if view is None:
        raise errors.UnauthorizedError("not logged in")
    if not accounts.csrf_matches(view, request.headers.get("X-CSRF-Token", "")):
        raise errors.ForbiddenError("missing or wrong CSRF token (X-CSRF-Token)")
    await context_of(request).writer.submit(
        lambda connection, _batch: accounts.end_session(connection, cookie, now_ms())
    )
    context_of(request).revocations.signal()  # the session's open streams end at once
    response = web.Response(status=204)
    response.del_cookie(SESSION_COOKIE, path="/")
    return response


ROUTES: Final = (
    Route(
        "POST", "/api/v1/session", post_session,
        "Log in to the dashboard {name, password}: a session cookie (HttpOnly, SameSite=Strict) and the CSRF token",
        {"201": "who, role, csrf, expires, sections, time_zone", "400": "malformed",
         "401": "wrong name or password (tries_left; next_try_after_s when none are left)",
         "429": "too many failed logins for this name from this address, or too many logins at once (Retry-After)",
         "503": "the database is busy (Retry-After)"},
    ),
    Route("GET", "/api/v1/session", get_session, "Who is logged in, and the session's CSRF token",
          {"200": "who, role, csrf, expires, sections, time_zone", "401": "not logged in"}),
    Route("DELETE", "/api/v1/session", delete_session, "Log out (X-CSRF-Token)",
          {"204": "logged out", "401": "not logged in", "403": "missing or wrong CSRF token"}),
)  # fmt: skip
