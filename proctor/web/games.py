"""Games: one game's full view, the list of games, and an arbiter's action on a game (proctor.game_actions)."""

from __future__ import annotations

from typing import Any, Final

from aiohttp import web
from sqlalchemy import select
from sqlmodel import col

from engine.openings import Player
from proctor import case_views, errors, penalty_preview, review
from proctor.context import Context
from proctor.game_actions import game_action_event
from proctor.game_views import game_view, public_view
from proctor.models import Game, Pairing, Platform, Section, Tournament
from proctor.models import Player as PlayerRow
from proctor.server_words import event_words
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of, json_body, path_id, text_field
from proctor.web.openapi import Route
from proctor.web.reads import read
from proctor.web.sessions import arbiter, has_credentials


def _refs(game_row_refs: dict[str, Player]) -> dict[Player, str]:
    return {player: ref for ref, player in game_row_refs.items()}


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
    data, names = _event_facts(body, game.refs), _game_link(context, game_id)[1]
    said: list[Any] = []

    def act(connection: Any, batch: Any) -> Any:
        before = context.service.live.game(batch, game_id).state
        after = context.service.arbiter_event(connection, batch, game_id, who, make, now_ms())
        said.append(event_words(before, after.state, data, names, by=who.name))
        return after

    updated = await context.writer.submit(act)
    # What changed, in both languages ("White (Li): clock 12:30 → 13:00"), beside the game (proctor.server_words).
    return web.json_response({**game_view(updated, _refs(updated.refs), now_ms()), "said": said[0] if said else None})


def _event_facts(body: dict[str, Any], refs: dict[str, Player]) -> dict[str, Any]:
    """The action's parameters as the stored event names them (the player by seat)."""
    player = body.get("player")
    return {
        "player": refs[player].value if isinstance(player, str) and player in refs else None,
        "delta_ms": body.get("delta_ms"), "round_wide": bool(body.get("round_wide")),
        "sealed_move": body.get("sealed_move"),
    }  # fmt: skip


async def post_penalty_preview(request: web.Request) -> web.Response:
    """What a penalty would be (the ladder's step, its articles, whether it loses the game) and whether this arbiter
    may give it (16), before anything is written (proctor.penalty_preview)."""
    who = arbiter(request)
    context = context_of(request)
    game_id = path_id(request, "game")
    body = await json_body(request)
    game = context.service.games.get(game_id)
    if game is None:
        raise errors.NotFoundError(f"no game {game_id}")
    asked = penalty_preview.PenaltyRequest.from_body(body, game.refs)
    state = game.state.advance(max(now_ms(), game.state.now))  # a flag that fell since the last event, fired
    preview = await read(
        context, lambda connection: penalty_preview.read_preview(connection, state, game_id, game.refs, asked, who)
    )
    return web.json_response(preview)


async def get_game(request: web.Request) -> web.Response:
    """A game.  Without credentials, what a broadcast may show (proctor.game_views.public_view); with an arbiter's
    or the review panel's (a bearer token or a session), the full view with player ids, verdicts, feed and
    incidents.  Credentials that are sent must be good (401)."""
    context = context_of(request)
    platform_id, _ = context.service.platform(request.match_info["platform"])
    game_id = context.service.by_external.get((platform_id, request.match_info["game_id"]))
    if game_id is None:
        raise errors.NotFoundError(f"unknown game {request.match_info['game_id']!r}")
    game = context.service.games[game_id]
    if not has_credentials(request):
        link, names = _game_link(context, game_id)
        return web.json_response({**public_view(game, names, now_ms()), **link})
    arbiter(request)
    view = game_view(game, _refs(game.refs), now_ms())
    link, names = _game_link(context, game_id)
    view.update(link)
    view["names"] = _names(context, game.refs, names)
    view["incidents"] = _incidents(context, game_id=game_id)
    return web.json_response(view)


def _game_link(context: Context, game_id: int) -> tuple[dict[str, Any], dict[Player, str]]:
    """The event, section, round and board of a game linked to its pairing (all None when it has none), and its
    players' names (the first player's and the second's, as the platform gave them)."""
    query = (
        select(col(Tournament.slug), col(Section.slug), col(Pairing.round_no), col(Pairing.board),
               col(Pairing.game_no), col(Game.black_name), col(Game.white_name))
        .select_from(Game)
        .outerjoin(Pairing, col(Pairing.id) == col(Game.pairing_id))
        .outerjoin(Section, col(Section.id) == col(Pairing.section_id))
        .outerjoin(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(Game.id) == game_id)
    )  # fmt: skip
    with context.engine.connect() as connection:
        row = connection.execute(query).first()
    event, section, round_no, board, match_game, first, second = row if row is not None else (None,) * 7
    link = {"event": event, "section": section, "round": round_no, "board": board, "match_game": match_game}
    return link, {Player.FIRST: first or "", Player.SECOND: second or ""}


def _names(context: Context, refs: dict[str, Player], platform_names: dict[Player, str]) -> dict[str, str]:
    """The players' names by id, as the cases say them: the event's player list first, else the platform's, else
    the id (the desk shows names; the ids only as a tooltip)."""
    with context.engine.connect() as connection:
        listed = {ref: name for ref, name in connection.execute(
            select(col(PlayerRow.platform_ref), col(PlayerRow.name)).where(col(PlayerRow.platform_ref).in_(list(refs)))
        )}  # fmt: skip
    return {ref: listed.get(ref) or platform_names.get(player) or ref for ref, player in refs.items()}


def _incidents(
    context: Context, game_id: int | None = None, kind: str | None = None, limit: int = 500
) -> list[dict[str, Any]]:
    with context.engine.connect() as connection:
        incidents = review.read_incidents(connection, review.IncidentFilter(game=game_id, kind=kind), limit)
        return case_views.with_cases(connection, incidents)


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
            col(Pairing.game_no),
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
                "match_game": row.game_no,
                "result": None
                if row.reason is None
                else {"winner": row.winner, "reason": row.reason, "article": row.article},
            }
            for row in rows
        ]
    )


ROUTES: Final = (
    Route(
        "GET", "/api/v1/platforms/{platform}/games/{game_id}", get_game,
        "A game. Public: position, moves, clocks, state, result with its article, the players' names by colour. "
        "With an arbiter's or the review panel's credentials also player ids, verdicts, feed state and incidents",
        {"200": "the game", "401": "credentials sent but unknown or expired", "404": "unknown platform or game"},
        (("platform", "path", "the platform's name"), ("game_id", "path", "the platform's game id")),
    ),
    Route(
        "GET", "/api/v1/games", list_games, "Games, filtered by status and platform",
        {"200": "the games", "400": "bad filter"},
        (("status", "query", "scheduled, live or over"), ("platform", "query", "a platform name")),
    ),
    Route(
        "POST", "/api/v1/games/{game}/actions", post_game_action,
        "An arbiter's action on a game: pause, resume, adjust, split, suspend, resume-game, confirm-verdict, overrule, "
        "confirm-result, declare-result, penalty (bearer token; each names who and why); the answer says what "
        "changed in both languages (said: {zh, en})",
        {"200": "the game after the action, with said", "400": "malformed action", "401": "no or unknown token",
         "403": "beyond the arbiter's authority (16)", "404": "unknown game", "409": "the rules refuse it now"},
        (("game", "path", "the service's game id"),),
    ),
    Route(
        "POST", "/api/v1/games/{game}/penalties/preview", post_penalty_preview,
        "Preview a penalty {player, offence, disqualify?} without giving it: the ladder's step (warning, violation, "
        "loss of the game) with its articles and reason, whether it loses the game (15.3), the player's earlier "
        "penalties, and whether this arbiter may give it (16: role and assignment) and if not why. Writes nothing",
        {"200": "the preview", "400": "malformed, a player not of this game, or no such offence",
         "401": "not an arbiter", "403": "the review panel, or no CSRF token", "404": "unknown game"},
        (("game", "path", "the service's game id"),),
    ),
)  # fmt: skip
