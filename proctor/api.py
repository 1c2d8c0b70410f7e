"""HTTP routes.  Status codes for errors are chosen in proctor.web.status only; domain code raises ServiceErrors."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import secrets
import time
from pathlib import Path
from typing import Any, Final

from aiohttp import web
from sqlalchemy import func, select
from sqlmodel import col

from engine.openings import Player
from engine.penalties import OFFENCES, Role
from proctor import accounts, appeals, errors, feed, results, review, signatures
from proctor import camera as camera_module
from proctor.accounts import Identity, find_arbiter
from proctor.audit import verify_audit
from proctor.context import Context
from proctor.deliveries import DeliveryResult
from proctor.game_actions import game_action_event
from proctor.game_views import game_view
from proctor.models import Game, Pairing, Platform, Section, Tournament
from proctor.wall_clock import now_ms
from proctor.web.downloads import attachment
from proctor.web.inputs import context_of, int_query, json_body, path_id, text_field, whole_number
from proctor.web.openapi import Route, document
from proctor.web.reads import read

# --- Webhooks ------------------------------------------------------------------------------------------------------


def _refresh_platforms(context: Context) -> bool:
    now = time.monotonic()
    if now - context.platforms_refreshed < 1.0:
        return False
    context.platforms_refreshed = now
    with context.engine.connect() as connection:
        context.service.reload_platforms(connection)
    return True


async def post_webhook(request: web.Request) -> web.Response:
    """A signed delivery from a platform; 2xx only once it is stored."""
    context = context_of(request)
    name = request.match_info["platform"]
    body = await request.read()
    tolerance = context.settings.webhook_tolerance_s
    try:
        platform_id, secrets = context.service.platform(name)
        webhook_id = signatures.verify(request.headers, body, secrets, time.time(), tolerance)
    except (errors.NotFoundError, errors.UnauthorizedError):
        # A platform added or a secret rotated by `proctor platform` while the server runs: read them again (at
        # most once a second) and try once more.
        if not _refresh_platforms(context):
            raise
        platform_id, secrets = context.service.platform(name)
        webhook_id = signatures.verify(request.headers, body, secrets, time.time(), tolerance)
    message = feed.parse_message(body)
    received = now_ms()
    result: DeliveryResult = await context.writer.submit(
        lambda connection, batch: context.service.deliver(connection, batch, platform_id, webhook_id, message, received)
    )
    return web.json_response(result.to_json(), status=202 if result.status == "held" else 200)


# --- Arbiters ------------------------------------------------------------------------------------------------------


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

    def log_in() -> tuple[str, accounts.SessionView] | None:
        with context.engine.begin() as connection:
            arbiter_id = accounts.check_password(connection, name, password)
            if arbiter_id is None:
                return None
            return accounts.open_session(connection, arbiter_id, now_ms(), context.settings.session_ttl_s)

    opened = await asyncio.to_thread(log_in)
    if opened is None:
        context.logins.failed(keys, now)
        raise errors.UnauthorizedError("wrong name or password")
    context.logins.succeeded(keys[0])
    token, view = opened
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
    with context_of(request).engine.begin() as connection:
        accounts.end_session(connection, cookie, now_ms())
    response = web.Response(status=204)
    response.del_cookie(SESSION_COOKIE, path="/")
    return response


async def post_game_action(request: web.Request) -> web.Response:
    """An arbiter's action on a game (pause, adjust time, suspend, penalty…), recorded with who and why."""
    who = arbiter(request)
    context = context_of(request)
    game_id = path_id(request, "game")
    body = await json_body(request)
    action, reason = text_field(body, "action", required=True), text_field(body, "reason")
    game = context.service.games.get(game_id)
    if game is None:
        raise errors.NotFoundError(f"no game {game_id}")
    make = game_action_event(action, body, who, reason, game.refs)
    updated = await context.writer.submit(
        lambda connection, batch: context.service.arbiter_event(connection, batch, game_id, make, now_ms())
    )
    return web.json_response(game_view(updated, _refs(updated.refs), now_ms()))


async def post_incident(request: web.Request) -> web.Response:
    """An incident raised by an arbiter (detectors raise theirs inside the service)."""
    who = arbiter(request)
    context = context_of(request)
    body = await json_body(request)
    game = body.get("game")
    if game is not None and (isinstance(game, bool) or not isinstance(game, int)):
        raise errors.BadRequestError("'game' must be the service's game id")
    kind, summary = text_field(body, "kind", required=True), text_field(body, "summary", required=True)
    article = body.get("article")
    if article is not None and not isinstance(article, str):
        raise errors.BadRequestError("'article' must be a string such as '36.2'")
    player = body.get("player")
    if player is not None and not isinstance(player, str):
        raise errors.BadRequestError("'player' must be a player id")
    incident_id = await context.writer.submit(
        lambda connection, batch: context.service.raise_incident(
            connection, batch, game, kind, summary, source=f"arbiter:{who.name}", article=article, player_ref=player,
            evidence={"reported_by": who.label}, at=now_ms(),
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
    return web.json_response(result, status=201)


# --- The arbiters' dashboard ----------------------------------------------------------------------------------------

ARBITER_PAGE = Path(__file__).parent.parent / "dashboard" / "arbiter.html"


def _page_policy(nonce: str) -> str:
    """The dashboards' Content-Security-Policy: their one script (by nonce), and this server for data, images (the
    camera thumbnails and evidence stills) and clips; nothing else."""
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; connect-src 'self'; "
        "img-src 'self' data:; media-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


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
    headers = {"Content-Security-Policy": _page_policy(nonce), "Cache-Control": "no-store"}
    return web.Response(text=text, content_type="text/html", headers=headers)


REVIEW_PAGE = Path(__file__).parent.parent / "dashboard" / "review.html"


async def review_page(request: web.Request) -> web.Response:
    """The review panel's page: login, the games with their timelines and replay, a player's history, the incident
    search with the exports and the audit check; it only reads.  Same Content-Security-Policy as the arbiters' page."""
    nonce = secrets.token_urlsafe(18)
    text = REVIEW_PAGE.read_text(encoding="utf-8").replace("{{NONCE}}", nonce)
    headers = {"Content-Security-Policy": _page_policy(nonce), "Cache-Control": "no-store"}
    return web.Response(text=text, content_type="text/html", headers=headers)


# --- Players' cameras ---------------------------------------------------------------------------------------------

PLAYER_PAGE = Path(__file__).parent.parent / "dashboard" / "player.html"


def _stream_player(context: Context, token: str) -> str:
    with context.engine.connect() as connection:
        return camera_module.require_player(connection, token)


async def post_stream_token(request: web.Request) -> web.Response:
    """An arbiter issues a player's camera token; the player opens ``/play/{token}``."""
    arbiter(request)
    context = context_of(request)
    player = request.match_info["player"]
    with context.engine.begin() as connection:
        token = camera_module.issue_stream_token(connection, player, now_ms())
    return web.json_response({"player": player, "token": token, "url": f"/play/{token}"}, status=201)


async def play_page(request: web.Request) -> web.Response:
    _stream_player(context_of(request), request.match_info["token"])
    return web.Response(text=PLAYER_PAGE.read_text(encoding="utf-8"), content_type="text/html")


async def rtc_config(request: web.Request) -> web.Response:
    """What the player page needs: ICE servers (with TURN credentials for this player) and the stream to send."""
    context = context_of(request)
    player = _stream_player(context, request.query.get("token", ""))
    settings = context.settings
    return web.json_response({
        "iceServers": camera_module.ice_servers(settings, player, time.time()),
        "video": {"width": 640, "height": 480, "frameRate": 5, "maxBitrate": 300_000},
        "analysisRate": settings.analysis_rate,
    })  # fmt: skip


async def rtc_offer(request: web.Request) -> web.Response:
    """A player's WebRTC offer ``{sdp, type, token}`` → the answer; a bad token or SDP allocates nothing.  The stream
    follows the player's section's policy (:meth:`proctor.camera.Camera.accept_offer`)."""
    context = context_of(request)
    body = await json_body(request)
    token, sdp, kind = text_field(body, "token", True), text_field(body, "sdp", True), text_field(body, "type", True)
    if kind != "offer":
        raise errors.BadRequestError("'type' must be 'offer'")
    player = _stream_player(context, token)
    try:
        answer = await context.camera.accept_offer(player, sdp, kind)
    except ValueError as error:
        raise errors.BadRequestError(str(error)) from None
    return web.json_response({"sdp": answer.sdp, "type": answer.type})


async def play_request(request: web.Request) -> web.Response:
    """The player asks to leave the area (36.4.1) or calls the arbiter: an incident for the arbiters' queue."""
    context = context_of(request)
    player = _stream_player(context, request.match_info["token"])
    body = await json_body(request)
    kind = body.get("kind")
    if kind not in ("leave", "call"):
        raise errors.BadRequestError("'kind' must be 'leave' or 'call'")
    game = context.camera.current_game(player)
    summary = "asks to leave the competition area" if kind == "leave" else "calls the arbiter"
    incident = await context.writer.submit(
        lambda connection, batch: context.service.raise_incident(
            connection, batch, game, "leave-request" if kind == "leave" else "arbiter-call", f"{player} {summary}",
            source="player", article="36.4.1" if kind == "leave" else None, player_ref=player, at=now_ms(),
        )
    )  # fmt: skip
    return web.json_response({"incident": incident}, status=201)


async def play_events(request: web.Request) -> web.StreamResponse:
    """Server-sent events for one player's page: the arbiters' messages, prompts, leave grants and approval."""
    context = context_of(request)
    player = _stream_player(context, request.match_info["token"])
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    with contextlib.suppress(ConnectionResetError):
        async with contextlib.aclosing(context.camera.listen(player)) as frames:
            async for frame in frames:
                await response.write(frame.encode())
    return response


# --- The arbiters' controls over a player's camera (36) --------------------------------------------------------------


def _incident_param(body: dict[str, Any]) -> int | None:
    incident = body.get("incident")
    if incident is not None and (isinstance(incident, bool) or not isinstance(incident, int)):
        raise errors.BadRequestError("'incident' must be an incident's id")
    return incident


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
    result = await context_of(request).camera.approve(who, request.match_info["player"], approved, note, incident)
    return web.json_response(result, status=201)


async def get_camera(request: web.Request) -> web.Response:
    """The player's camera as the arbiters see it."""
    arbiter(request)
    return web.json_response(context_of(request).camera.status(request.match_info["player"]))


async def get_camera_thumbnail(request: web.Request) -> web.Response:
    """The last analysed frame of the player's live stream, small (320x240 JPEG), for the dashboard's boards."""
    arbiter(request)
    player = request.match_info["player"]
    jpeg = context_of(request).camera.thumbnail(player)
    if jpeg is None:
        raise errors.NotFoundError(f"no live camera stream for {player!r}")
    return web.Response(body=jpeg, content_type="image/jpeg", headers={"Cache-Control": "no-store"})


MEDIA_TYPES: Final = {".jpg": "image/jpeg", ".webm": "video/webm"}


async def get_media(request: web.Request) -> web.StreamResponse:
    """An evidence file (a snapshot, clip, still or ear crop) by the name its incident gives; arbiters and the review
    panel only.  Only files inside ``MEDIA_DIR`` with a known type are served; anything else is 404."""
    arbiter(request)
    folder = Path(context_of(request).settings.media_dir).resolve()
    name = request.query.get("name", "")
    path = (folder / name).resolve()
    if not path.is_relative_to(folder) or path.suffix not in MEDIA_TYPES or not path.is_file():
        raise errors.NotFoundError(f"no evidence file {name!r} (deleted after its retention, or never kept)")
    headers = {"Content-Type": MEDIA_TYPES[path.suffix], "Cache-Control": "private, max-age=3600",
               "X-Content-Type-Options": "nosniff"}  # fmt: skip
    return web.FileResponse(path, headers=headers)


# --- Read side -----------------------------------------------------------------------------------------------------


def _refs(game_row_refs: dict[str, Player]) -> dict[Player, str]:
    return {player: ref for ref, player in game_row_refs.items()}


async def get_game(request: web.Request) -> web.Response:
    context = context_of(request)
    platform_id, _ = context.service.platform(request.match_info["platform"])
    game_id = context.service.by_external.get((platform_id, request.match_info["game_id"]))
    if game_id is None:
        raise errors.NotFoundError(f"unknown game {request.match_info['game_id']!r}")
    game = context.service.games[game_id]
    view = game_view(game, _refs(game.refs), now_ms())
    view.update(_game_link(context, game_id))
    view["incidents"] = _incidents(context, game_id=game_id)
    return web.json_response(view)


def _game_link(context: Context, game_id: int) -> dict[str, Any]:
    """The event, section, round and board of a game linked to its pairing (all None when it has none)."""
    query = (
        select(col(Tournament.slug), col(Section.slug), col(Pairing.round_no), col(Pairing.board))
        .select_from(Game)
        .join(Pairing, col(Pairing.id) == col(Game.pairing_id))
        .join(Section, col(Section.id) == col(Pairing.section_id))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(Game.id) == game_id)
    )
    with context.engine.connect() as connection:
        row = connection.execute(query).first()
    event, section, round_no, board = row if row is not None else (None, None, None, None)
    return {"event": event, "section": section, "round": round_no, "board": board}


def _incidents(
    context: Context, game_id: int | None = None, kind: str | None = None, limit: int = 500
) -> list[dict[str, Any]]:
    with context.engine.connect() as connection:
        return review.read_incidents(connection, review.IncidentFilter(game=game_id, kind=kind), limit)


async def list_incidents(request: web.Request) -> web.Response:
    """Incidents carry players' evidence: arbiters and the review panel only."""
    arbiter(request)
    context = context_of(request)
    where = review.IncidentFilter.from_query(request.query)
    with context.engine.connect() as connection:
        rows = review.read_incidents(connection, where)
    return web.json_response(rows)


async def list_games(request: web.Request) -> web.Response:
    context = context_of(request)
    status = request.query.get("status")
    if status is not None and status not in ("scheduled", "live", "over"):
        raise errors.BadRequestError("query parameter 'status' must be scheduled, live or over")
    query: Any = (  # the labelled columns are beyond the typed Select
        select(
            col(Game.id),
            col(Game.external_id),
            col(Game.status),
            col(Game.winner),
            col(Game.reason),
            col(Game.article),
            col(Platform.name),
            col(Tournament.slug).label("event"),
            col(Section.slug).label("section"),
            col(Pairing.round_no),
            col(Pairing.board),
        )
        .join(
            Platform,
            col(Platform.id) == col(Game.platform_id),
        )
        .outerjoin(Pairing, col(Pairing.id) == col(Game.pairing_id))
        .outerjoin(Section, col(Section.id) == col(Pairing.section_id))
        .outerjoin(Tournament, col(Tournament.id) == col(Section.tournament_id))
    )  # one query: the event, section, round and board of a linked game (null when unpaired)
    if status is not None:
        query = query.where(col(Game.status) == status)
    platform = request.query.get("platform")
    if platform is not None:
        query = query.where(col(Platform.name) == platform)
    with context.engine.connect() as connection:
        rows = connection.execute(query.order_by(col(Game.id))).all()
    return web.json_response(
        [
            {
                "id": row.id,
                "platform": row.name,
                "platform_game_id": row.external_id,
                "status": row.status,
                "event": row.event,
                "section": row.section,
                "round": row.round_no,
                "board": row.board,
                "result": None
                if row.reason is None
                else {"winner": row.winner, "reason": row.reason, "article": row.article},
            }
            for row in rows
        ]
    )


async def list_events(request: web.Request) -> web.Response:
    """Events with their sections and the rounds paired so far."""
    context = context_of(request)
    tournament, section, pairing = Tournament.__table__, Section.__table__, Pairing.__table__  # type: ignore[attr-defined]
    with context.engine.connect() as connection:
        events = connection.execute(
            select(tournament.c.id, tournament.c.slug, tournament.c.name).order_by(tournament.c.id)
        ).all()
        sections = connection.execute(select(section.c.id, section.c.tournament_id, section.c.slug, section.c.name,
                                             section.c.rule, section.c.opening, section.c.time_control,
                                             section.c.system)).all()  # fmt: skip
        rounds = connection.execute(
            select(pairing.c.section_id, pairing.c.round_no, func.count(), func.count(pairing.c.platform_game_id))
            .group_by(pairing.c.section_id, pairing.c.round_no)
            .order_by(pairing.c.section_id, pairing.c.round_no)
        ).all()
    by_section: dict[int, list[dict[str, Any]]] = {}
    for section_id, round_no, boards, _ in rounds:
        by_section.setdefault(section_id, []).append({"round": round_no, "boards": boards})
    return web.json_response([
        {
            "slug": event.slug,
            "name": event.name,
            "sections": [
                {"slug": s.slug, "name": s.name, "rule": s.rule, "opening": s.opening, "time_control": s.time_control,
                 "system": s.system, "rounds": by_section.get(s.id, [])}
                for s in sections if s.tournament_id == event.id
            ],
        }
        for event in events
    ])  # fmt: skip


async def stream(request: web.Request) -> web.StreamResponse:
    """Server-sent events: every change (games, incidents) as it is committed; arbiters and the review panel only."""
    arbiter(request)
    context = context_of(request)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    await response.write(b": connected\n\n")
    async for frame in context.bus.subscribe():
        await response.write(frame.encode())
    return response


async def healthz(request: web.Request) -> web.Response:
    context = context_of(request)
    with context.engine.connect() as connection:
        connection.execute(select(1))
    return web.json_response(
        {"status": "ok", "games": len(context.service.games), "writer_batches": context.writer.batches}
    )


# --- Review, exports and appeals (arbiters and the review panel) -----------------------------------------------------


async def get_timeline(request: web.Request) -> web.Response:
    """One game's review timeline (proctor.review): moves with clocks, clock actions, feed and camera gaps per player,
    incidents, arbiter actions and verdicts, the result."""
    arbiter(request)
    game_id = path_id(request, "game")
    return web.json_response(await read(context_of(request), lambda c: review.read_timeline(c, game_id)))


async def get_player_history(request: web.Request) -> web.Response:
    """A player's sections, games, incidents and penalties, in one event (``event``) or across all."""
    arbiter(request)
    context = context_of(request)
    player, event = request.match_info["player"], request.query.get("event") or None
    states = {game_id: game.state for game_id, game in dict(context.service.games).items()}
    return web.json_response(await read(context, lambda c: review.read_history(c, player, event, states)))


async def _game_record(request: web.Request, kind: str) -> web.Response:
    arbiter(request)
    game_id = path_id(request, "game")
    text = await read(context_of(request), lambda c: review.read_record(c, game_id, kind))
    content_type = "application/xml" if kind == "rif" else "text/plain"
    return attachment(text, content_type, f"game-{game_id}.{kind}")


async def get_record_rif(request: web.Request) -> web.Response:
    """The game's record as RenjuNet RIF XML (engine.records.write_rif)."""
    return await _game_record(request, "rif")


async def get_record_psq(request: web.Request) -> web.Response:
    """The game's record as Gomocup PSQ, with each stone's thinking time (409 for swaps or candidates)."""
    return await _game_record(request, "psq")


async def _standings(request: web.Request, kind: str) -> web.Response:
    arbiter(request)
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]
    through = int_query(request, "round")
    states = {game_id: game.state for game_id, game in dict(context.service.games).items()}

    def build(connection: Any) -> str:
        tournament, table = review.section_standings(review.read_section(connection, slug, section, states), through)
        return review.standings_csv(tournament, table) if kind == "csv" else review.standings_trf(tournament, table)

    text = await read(context, build)
    return attachment(text, "text/csv" if kind == "csv" else "text/plain", f"{slug}-{section}-standings.{kind}")


async def get_standings_csv(request: web.Request) -> web.Response:
    """A section's standings with its tie-breaks (28, 29), after its last complete round or ``round``."""
    return await _standings(request, "csv")


async def get_standings_trf(request: web.Request) -> web.Response:
    """The same standings as a TRF file (engine.trf.write_trf)."""
    return await _standings(request, "trf")


async def get_standings(request: web.Request) -> web.Response:
    """The standings as JSON: the CSV's rows (place, start number, name, team, points, each tie-break by name), the
    tie-break names, the round, and every pairing with its result and where it comes from."""
    arbiter(request)
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]
    through = int_query(request, "round")
    states = {game_id: game.state for game_id, game in dict(context.service.games).items()}
    body = await read(context, lambda c: review.standings_json(review.read_section(c, slug, section, states), through))
    return web.json_response(body)


async def post_result(request: web.Request) -> web.Response:
    """Enter or correct a pairing's result (28): the chief arbiter or a deputy chief (16)."""
    who = arbiter(request)
    results.check_role(who)
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]
    body = await json_body(request)
    round_no = whole_number(body, "round", (1, 1000))
    board = whole_number(body, "board", (1, 100_000))
    result, reason = text_field(body, "result", required=True), text_field(body, "reason")
    override = body.get("override", False)
    if not isinstance(override, bool):
        raise errors.BadRequestError("'override' must be true or false")
    entered = await context.writer.submit(
        lambda connection, batch: results.enter_result(
            context.service, connection, batch, who, slug, section, round_no, board, result, reason, override,
            now_ms(),
        )
    )  # fmt: skip
    return web.json_response(entered, status=201)


async def get_audit_verify(request: web.Request) -> web.Response:
    """The audit log's hash chain recomputed (as ``proctor audit verify``)."""
    arbiter(request)
    report = await read(context_of(request), verify_audit)
    return web.json_response({"ok": report.ok, "entries": report.entries, "problems": list(report.problems)})


async def _incident_report(request: web.Request) -> review.IncidentReport:
    arbiter(request)
    where = review.IncidentFilter.from_query(request.query)
    report: review.IncidentReport = await read(context_of(request), lambda c: review.read_report(c, where, now_ms()))
    return report


async def get_report_html(request: web.Request) -> web.Response:
    """The printable incident report, filtered like the incident list; every text escaped."""
    report = await _incident_report(request)
    response = web.Response(text=review.report_html(report), content_type="text/html", charset="utf-8")
    response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return response


async def get_report_pdf(request: web.Request) -> web.Response:
    """The same report as a PDF, in the ``PDF_FONT`` font (Chinese names need its CJK glyphs)."""
    report = await _incident_report(request)
    data = await asyncio.to_thread(review.report_pdf, report, context_of(request).settings.pdf_font)
    return attachment(data, "application/pdf", "incidents.pdf", "inline")


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


# --- Routes and their OpenAPI description ---------------------------------------------------------------------------


INCIDENT_FILTERS: Final = (
    ("game", "query", "the service's game id"), ("kind", "query", "e.g. feed-gap, result-mismatch"),
    ("player", "query", "the player's id on the platform"),
    ("status", "query", "open, or the last action: confirm, dismiss, note, penalty, evidence"),
    ("source", "query", "feed, rules, service, player, arbiter (any) or arbiter:NAME, detector (any) or detector:NAME"),
    ("article", "query", "an article and its sub-articles, e.g. 36.4"),
    ("since", "query", "raised at or after (ms since 1970)"), ("until", "query", "raised at or before (ms since 1970)"),
    ("q", "query", "text in the kind or the summary"), ("event", "query", "an event's slug"),
)  # fmt: skip

ROUTES: Final = (
    Route(
        "POST", "/api/v1/webhooks/{platform}", post_webhook,
        "Deliver a signed platform event (Standard Webhooks); 2xx only once it is stored",
        {
            "200": "stored and applied (or a duplicate, or refused by the rules with an incident)",
            "202": "stored and held until an earlier seq arrives",
            "400": "malformed body or stale timestamp",
            "401": "missing or wrong signature",
            "404": "unknown platform or game",
            "409": "seq reused with another body",
            "429": "too many events held",
        },
        (("platform", "path", "the platform's registered name"),),
    ),
    Route(
        "GET", "/api/v1/platforms/{platform}/games/{game_id}", get_game,
        "A game: position, moves, clocks, state, result with its article, verdicts and incidents",
        {"200": "the game", "404": "unknown platform or game"},
        (("platform", "path", "the platform's name"), ("game_id", "path", "the platform's game id")),
    ),
    Route(
        "GET", "/api/v1/games", list_games, "Games, filtered by status and platform",
        {"200": "the games", "400": "bad filter"},
        (("status", "query", "scheduled, live or over"), ("platform", "query", "a platform name")),
    ),
    Route("GET", "/api/v1/events", list_events, "Events, their sections and rounds", {"200": "the events"}),
    Route(
        "GET", "/api/v1/incidents", list_incidents,
        "Incidents with their arbiter actions and status (arbiters and the review panel), filtered",
        {"200": "the incidents", "400": "bad filter", "401": "not an arbiter", "404": "unknown event"},
        INCIDENT_FILTERS,
    ),
    Route(
        "POST", "/api/v1/games/{game}/actions", post_game_action,
        "An arbiter's action on a game: pause, resume, adjust, split, suspend, resume-game, confirm-verdict, overrule, "
        "confirm-result, declare-result, penalty (bearer token; each names who and why)",
        {"200": "the game after the action", "400": "malformed action", "401": "no or unknown token",
         "403": "beyond the arbiter's authority (16)", "404": "unknown game", "409": "the rules refuse it now"},
        (("game", "path", "the service's game id"),),
    ),
    Route(
        "POST", "/api/v1/incidents", post_incident, "Raise an incident (bearer token)",
        {"201": "the incident's id", "400": "malformed", "401": "no or unknown token", "404": "unknown game"},
    ),
    Route(
        "POST", "/api/v1/incidents/{incident}/actions", post_incident_action,
        "Confirm, dismiss or note an incident, or give the penalty its offence calls for (bearer token)",
        {"201": "the action and any verdict", "400": "malformed", "401": "no or unknown token",
         "403": "beyond the arbiter's authority (16)", "404": "unknown incident", "409": "the rules refuse it"},
        (("incident", "path", "the incident's id"),),
    ),
    Route(
        "POST", "/api/v1/players/{player}/stream-token", post_stream_token,
        "Issue a player's camera token (bearer token of an arbiter); the player opens /play/{token}",
        {"201": "the token and the page's address", "401": "no or unknown arbiter token"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route("GET", "/play/{token}", play_page, "The player's camera page", {"200": "the page", "404": "unknown token"},
          (("token", "path", "the player's stream token"),)),
    Route(
        "GET", "/api/v1/rtc/config", rtc_config, "ICE servers and stream settings for a player's page",
        {"200": "the configuration", "404": "unknown token"}, (("token", "query", "the player's stream token"),),
    ),
    Route(
        "POST", "/api/v1/rtc/offer", rtc_offer, "A player's WebRTC offer {sdp, type, token}; returns the answer",
        {"200": "the answer {sdp, type}", "400": "malformed body or unusable SDP", "404": "unknown token"},
    ),
    Route(
        "POST", "/api/v1/play/{token}/requests", play_request,
        "A player's request to leave the area (36.4.1) or call to the arbiter",
        {"201": "the incident raised", "400": "unknown kind", "404": "unknown token"},
        (("token", "path", "the player's stream token"),),
    ),
    Route(
        "GET", "/api/v1/play/{token}/events", play_events,
        "Server-sent events for the player's page only: the arbiters' messages, prompts, leave grants and approval "
        "(the first event, state, is what the page should show now)",
        {"200": "an event stream", "404": "unknown token"}, (("token", "path", "the player's stream token"),),
    ),
    Route(
        "POST", "/api/v1/players/{player}/camera/messages", post_camera_message,
        "Send the player's page a message {text, incident} (bearer token of an arbiter; audited)",
        {"201": "the message's id and time", "400": "empty or longer than 500 characters, or a bad incident",
         "401": "no or unknown arbiter token", "404": "unknown player or incident"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "POST", "/api/v1/players/{player}/camera/prompts", post_camera_prompt,
        "Ask the player to show something on camera {kind: ear-check (36.2), room-scan or pan-check (36.4), seconds "
        "5-60 (15), incident}: the page shows it with a countdown, and the window's clip (and for the ear check two "
        "stills) become evidence on the incident given or on a new one",
        {"201": "the prompt's id, its incident and when it ends", "400": "bad kind, seconds or incident",
         "401": "no or unknown arbiter token", "404": "unknown player or incident",
         "409": "the player has no live camera stream"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "POST", "/api/v1/players/{player}/camera/leave", post_camera_leave,
        "Grant leave of the competition area (36.4.1) {minutes 1-60, reason, incident}: the left-area check stays "
        "quiet until then, across reconnections",
        {"201": "the grant and its end", "400": "minutes out of range, no reason, or a bad incident",
         "401": "no or unknown arbiter token", "404": "unknown player or incident"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "POST", "/api/v1/players/{player}/camera/approval", post_camera_approval,
        "Approve (or not) the player's setup after the pre-game environment check {approved, note, incident}",
        {"201": "the approval as stored", "400": "malformed (a refusal needs a note)",
         "401": "no or unknown arbiter token", "404": "unknown player or incident"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "GET", "/api/v1/players/{player}/camera", get_camera,
        "The player's camera for arbiters: connected since, frames, active findings, the section policy in force "
        "(checks, thresholds, retention), leave, approval, last prompts "
        "and messages, which checks run",
        {"200": "the status", "401": "no or unknown arbiter token", "404": "unknown player"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "GET", "/api/v1/media", get_media,
        "An evidence file named by an incident (snapshot, clip, still, ear crop), for arbiters and the review panel",
        {"200": "the file (image/jpeg or video/webm)", "401": "not an arbiter",
         "404": "no such file under MEDIA_DIR (or deleted after its retention)"},
        (("name", "query", "the media name as the incident's evidence gives it, e.g. event/section/file.jpg"),),
    ),
    Route(
        "GET", "/api/v1/players/{player}/camera/thumbnail.jpg", get_camera_thumbnail,
        "The last analysed frame of the player's live stream as a 320x240 JPEG (arbiters and the review panel; "
        "Cache-Control: no-store)",
        {"200": "the JPEG", "401": "not an arbiter", "404": "no live camera stream"},
        (("player", "path", "the player's id on the platform"),),
    ),
    Route(
        "POST", "/api/v1/session", post_session,
        "Log in to the dashboard {name, password}: a session cookie (HttpOnly, SameSite=Strict) and the CSRF token",
        {"201": "who, role, csrf, expires, sections", "400": "malformed", "401": "wrong name or password",
         "429": "too many failed logins for this name or address (Retry-After)"},
    ),
    Route("GET", "/api/v1/session", get_session, "Who is logged in, and the session's CSRF token",
          {"200": "who, role, csrf, expires, sections", "401": "not logged in"}),
    Route("DELETE", "/api/v1/session", delete_session, "Log out (X-CSRF-Token)",
          {"204": "logged out", "401": "not logged in", "403": "missing or wrong CSRF token"}),
    Route("GET", "/arbiter", arbiter_page, "The arbiters' dashboard: login, the live round, the incident queue",
          {"200": "the page"}),
    Route("GET", "/review", review_page,
          "The review panel's page: games with timeline and replay, player history, incident search, exports, audit, "
          "appeals, standings and results entry",
          {"200": "the page"}),
    Route("GET", "/api/v1/stream", stream, "Server-sent events of every committed change", {"200": "an event stream"}),
    Route(
        "GET", "/api/v1/games/{game}/timeline", get_timeline,
        "One game's review timeline: moves with both clocks, clock actions, penalties and verdicts (who, when, why, "
        "article), incidents and their actions, feed and camera gaps per player as separate series, the result",
        {"200": "the timeline", "401": "not an arbiter", "404": "unknown game"},
        (("game", "path", "the service's game id"),),
    ),
    Route(
        "GET", "/api/v1/players/{player}/history", get_player_history,
        "A player's sections, games (colour, opponent, result and article), incidents and penalties",
        {"200": "the history", "401": "not an arbiter", "404": "unknown player or event"},
        (("player", "path", "the player's id on the platform"), ("event", "query", "an event's slug")),
    ),
    Route(
        "GET", "/api/v1/games/{game}/record.rif", get_record_rif, "The game's record as RenjuNet RIF XML",
        {"200": "the record", "401": "not an arbiter", "404": "unknown game"},
        (("game", "path", "the service's game id"),),
    ),
    Route(
        "GET", "/api/v1/games/{game}/record.psq", get_record_psq,
        "The game's record as Gomocup PSQ with each stone's thinking time",
        {"200": "the record", "401": "not an arbiter", "404": "unknown game",
         "409": "PSQ holds stones only: the game has swaps or candidates"},
        (("game", "path", "the service's game id"),),
    ),
    Route(
        "GET", "/api/v1/events/{slug}/sections/{section}/standings.csv", get_standings_csv,
        "A section's standings with its tie-breaks (28, 29) and each round's result, as CSV",
        {"200": "the table", "400": "bad round", "401": "not an arbiter", "404": "unknown event or section",
         "409": "a knockout section, or the round asked for is not complete"},
        (("slug", "path", "the event's slug"), ("section", "path", "the section's slug"),
         ("round", "query", "after this round (the last complete round by default)")),
    ),
    Route(
        "GET", "/api/v1/events/{slug}/sections/{section}/standings.trf", get_standings_trf,
        "The same standings as a FIDE TRF file",
        {"200": "the file", "400": "bad round", "401": "not an arbiter", "404": "unknown event or section",
         "409": "a knockout section, or the round asked for is not complete"},
        (("slug", "path", "the event's slug"), ("section", "path", "the section's slug"),
         ("round", "query", "after this round (the last complete round by default)")),
    ),
    Route(
        "GET", "/api/v1/events/{slug}/sections/{section}/standings", get_standings,
        "The same standings as JSON: place, start number, name, team, points and each tie-break by name, the "
        "tie-break names, the round, and every pairing with its result and its source (entered or the game's)",
        {"200": "the standings", "400": "bad round", "401": "not an arbiter", "404": "unknown event or section",
         "409": "a knockout section, or the round asked for is not complete"},
        (("slug", "path", "the event's slug"), ("section", "path", "the section's slug"),
         ("round", "query", "after this round (the last complete round by default)")),
    ),
    Route(
        "POST", "/api/v1/events/{slug}/sections/{section}/results", post_result,
        "Enter or correct a pairing's result (28) {round, board, result: 1-0, 0-1, ½-½ (0.5-0.5), or the forfeits "
        "+-, -+, -- (28.3), reason, override}: chief arbiter or deputy chief (16); audited with old and new",
        {"201": "the result as stored, the previous one and the game's verdict", "400": "malformed",
         "401": "not an arbiter", "403": "not the chief or a deputy chief, or an override by a deputy (16)",
         "404": "unknown event, section or pairing",
         "409": "a bye, or the linked game's verdict differs (or it is still in play) without the chief's override"},
        (("slug", "path", "the event's slug"), ("section", "path", "the section's slug")),
    ),
    Route(
        "GET", "/api/v1/audit/verify", get_audit_verify, "The audit log's hash chain verified: ok, entries, problems",
        {"200": "the result", "401": "not an arbiter"},
    ),
    Route(
        "GET", "/api/v1/reports/incidents.html", get_report_html,
        "A printable incident report (filtered like the incident list): evidence with SHA-256, actions, verdicts",
        {"200": "the page", "400": "bad filter", "401": "not an arbiter", "404": "unknown event"}, INCIDENT_FILTERS,
    ),
    Route(
        "GET", "/api/v1/reports/incidents.pdf", get_report_pdf, "The same incident report as a PDF",
        {"200": "the PDF", "400": "bad filter", "401": "not an arbiter", "404": "unknown event",
         "500": "the PDF_FONT font is missing"},
        INCIDENT_FILTERS,
    ),
    Route(
        "POST", "/api/v1/appeals", post_appeal,
        "Record a written appeal (22.1) {game or incident, filed_by {name, capacity: team-leader or coach, team}, "
        "grounds, deposit {amount, currency}}",
        {"201": "the appeal", "400": "malformed, or not lodged by a team leader or coach (22.1)",
         "401": "not an arbiter", "403": "the review panel reads only", "404": "unknown game or incident"},
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
    Route("GET", "/api/openapi.json", None, "This document", {"200": "the OpenAPI document"}),
    Route("GET", "/healthz", healthz, "Liveness and database check", {"200": "ok"}),
)  # fmt: skip


async def get_openapi(request: web.Request) -> web.Response:
    return web.json_response(document(ROUTES))


def add_routes(app: web.Application) -> None:
    for route in ROUTES:
        handler = route.handler or get_openapi
        app.router.add_route(route.method, route.path, handler)
