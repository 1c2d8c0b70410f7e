"""Knockout stages: a knockout section's bracket (GET), and its draw from the preliminaries by the chief arbiter or a
deputy (POST) (27.1, 28.4; regulations 2023 VII(3), VII(4)3; proctor.brackets, proctor.bracket_draws)."""

from __future__ import annotations

from typing import Any, Final

from aiohttp import web

from proctor import bracket_draws, brackets, errors
from proctor.models import MAX_INTEGER
from proctor.wall_clock import now_ms
from proctor.web.inputs import context_of, json_body, text_field
from proctor.web.openapi import Route
from proctor.web.reads import read
from proctor.web.sessions import arbiter


async def get_bracket(request: web.Request) -> web.Response:
    """The bracket as it stands: every match with its players, games (the play-off's included) and next game, and
    the places (28.4) once the final is decided."""
    arbiter(request)
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]
    states = {game_id: game.state for game_id, game in dict(context.service.games).items()}
    body = await read(context, lambda c: brackets.bracket_json(c, slug, section, states))
    return web.json_response(body)


def _seeds(body: dict[str, Any]) -> list[int] | None:
    seeds = body.get("seeds")
    if seeds is None:
        return None
    if not isinstance(seeds, list) or not all(
        isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= MAX_INTEGER for x in seeds
    ):
        raise errors.BadRequestError("'seeds' must be a list of start numbers of the preliminary section, seed 1 first")
    return seeds


async def post_bracket(request: web.Request) -> web.Response:
    """Draw the knockout from its preliminaries' final standings (the chief arbiter or a deputy chief): the top
    ``qualifiers`` by place, or ``seeds`` after a play-off at the cut, with the ``reason``."""
    who = arbiter(request)
    if who.role not in bracket_draws.DRAWING_ROLES:
        raise errors.ForbiddenError(f"the bracket is drawn by the chief arbiter or a deputy chief, not the "
                                    f"{who.role.value} (16)", article="16")  # fmt: skip
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]
    body = await json_body(request)
    seeds = _seeds(body)
    reason = text_field(body, "reason", required=True)

    def job(connection: Any, batch: Any) -> dict[str, Any]:
        states = context.service.states(batch)
        return bracket_draws.draw_bracket(context.service, connection, batch, who, slug, section, seeds, reason,
                                          now_ms(), states)  # fmt: skip

    drawn = await context.writer.submit(job)
    return web.json_response(drawn, status=201)


ROUTES: Final = (
    Route(
        "GET", "/api/v1/events/{slug}/sections/{section}/bracket", get_bracket,
        "A knockout section's bracket: matches, games, play-offs, next games and places (27.1, 28.4)",
        {"200": "the bracket", "401": "not an arbiter", "404": "no such section",
         "409": "the section is not a knockout"},
        (("slug", "path", "the event's slug"), ("section", "path", "the section's slug")),
    ),
    Route(
        "POST", "/api/v1/events/{slug}/sections/{section}/bracket", post_bracket,
        "Draw a knockout from its preliminaries' final standings (chief arbiter or deputy; regulations 2023 VII(3))",
        {"201": "drawn, with the first games' pairings", "400": "bad input", "403": "not the chief or a deputy",
         "409": "already drawn, preliminaries not over, or a tie at the cut to be played off first"},
        (("slug", "path", "the event's slug"), ("section", "path", "the knockout section's slug")),
    ),
)  # fmt: skip
