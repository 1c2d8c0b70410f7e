"""The review panel's reads: a game's timeline, a player's history, game records (RIF, PSQ), the audit check."""

from __future__ import annotations

from typing import Final

from aiohttp import web

from proctor import review
from proctor.audit import verify_audit
from proctor.web.downloads import attachment
from proctor.web.inputs import context_of, path_id
from proctor.web.openapi import Route
from proctor.web.reads import read
from proctor.web.sessions import arbiter


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
    """The game's record as Gomocup PSQ, with each stone's thinking time and the opening's decisions after the stones
    (409 for a game with a pass)."""
    return await _game_record(request, "psq")


async def get_audit_verify(request: web.Request) -> web.Response:
    """The audit log's hash chain recomputed (as ``proctor audit verify``)."""
    arbiter(request)
    report = await read(context_of(request), verify_audit)
    return web.json_response({"ok": report.ok, "entries": report.entries, "problems": list(report.problems)})


ROUTES: Final = (
    Route(
        "GET", "/api/v1/games/{game}/timeline", get_timeline,
        "One game's review timeline: moves with both clocks, clock actions, penalties and verdicts (who, when, why, "
        "article), incidents and their actions, feed and camera gaps per player as separate series, the result; "
        "each log line's and incident's words also in both languages (text_words, summary_words: {zh, en})",
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
        "The game's record as Gomocup PSQ with each stone's thinking time; an opening protocol's decisions (swaps, "
        "candidates, Swap2's choice) in info lines after the names, which Piskvork ignores",
        {"200": "the record", "401": "not an arbiter", "404": "unknown game",
         "409": "the game has a pass: PSQ colours the stones by alternation"},
        (("game", "path", "the service's game id"),),
    ),
    Route(
        "GET", "/api/v1/audit/verify", get_audit_verify, "The audit log's hash chain verified: ok, entries, problems",
        {"200": "the result", "401": "not an arbiter"},
    ),
)  # fmt: skip
