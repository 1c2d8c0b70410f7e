"""Events and their sections: the list, standings (CSV, TRF, JSON) and results entry (proctor.review,
proctor.results)."""

from __future__ import annotations

from typing import Any, Final

from aiohttp import web
from sqlalchemy import func, select

from proctor import brackets, errors, results, review, team_events, withdrawals
from proctor.models import Pairing, Section, Tournament
from proctor.wall_clock import now_ms
from proctor.web.downloads import attachment
from proctor.web.inputs import context_of, int_query, json_body, text_field, whole_number
from proctor.web.openapi import Route
from proctor.web.reads import read
from proctor.web.sessions import arbiter


async def list_events(request: web.Request) -> web.Response:
    """Events with their sections and the rounds paired so far, and their team events."""
    context = context_of(request)
    tournament, section, pairing = Tournament.__table__, Section.__table__, Pairing.__table__  # type: ignore[attr-defined]
    with context.engine.connect() as connection:
        events = connection.execute(
            select(tournament.c.id, tournament.c.slug, tournament.c.name, tournament.c.config).order_by(tournament.c.id)
        ).all()
        sections = connection.execute(select(section.c.id, section.c.tournament_id, section.c.slug, section.c.name,
                                             section.c.rule, section.c.opening, section.c.time_control,
                                             section.c.system)).all()  # fmt: skip
        rounds = connection.execute(
            select(
                pairing.c.section_id,
                pairing.c.round_no,
                func.count(func.distinct(pairing.c.board)),
                func.count(pairing.c.platform_game_id),
            )
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
            "teams": [{"slug": team.get("slug"), "name": team.get("name"), "sections": team.get("sections", [])}
                      for team in (event.config or {}).get("teams", []) if isinstance(team, dict)],
            "sections": [
                {"slug": s.slug, "name": s.name, "rule": s.rule, "opening": s.opening, "time_control": s.time_control,
                 "system": s.system, "rounds": by_section.get(s.id, [])}
                for s in sections if s.tournament_id == event.id
            ],
        }
        for event in events
    ])  # fmt: skip


async def _standings(request: web.Request, kind: str) -> web.Response:
    arbiter(request)
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]
    through = int_query(request, "round")
    states = {game_id: game.state for game_id, game in dict(context.service.games).items()}

    def build(connection: Any) -> str:
        if kind == "csv" and brackets.section_row(connection, slug, section).system == "knockout":
            return brackets.knockout_standings_csv(brackets.knockout_standings(connection, slug, section, states))
        section_table = review.read_section(connection, slug, section, states)
        tournament, table = review.section_standings(section_table, through)
        if kind == "csv":
            return review.standings_csv(tournament, table, section_table)
        return review.standings_trf(tournament, table)

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
    tie-break names, the round, and every pairing with its result and where it comes from; a knockout's are its
    places (28.4)."""
    arbiter(request)
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]
    through = int_query(request, "round")
    states = {game_id: game.state for game_id, game in dict(context.service.games).items()}

    def build(connection: Any) -> dict[str, Any]:
        if brackets.section_row(connection, slug, section).system == "knockout":
            body = brackets.knockout_standings(connection, slug, section, states)
            table = review.read_section(connection, slug, section, states)
            done = review.complete_rounds(table)
            body.update(pairings=review.section_pairings(table), games_per_match=table.games_per_match, complete=done,
                        round=done, rounds=max(table.rounds, int(body["rounds"] or 0)))  # fmt: skip
            return body
        return review.standings_json(review.read_section(connection, slug, section, states), through)

    return web.json_response(await read(context, build))


async def get_team_standings(request: web.Request) -> web.Response:
    """A team event's table (2021 regulations VIII(6)2) as JSON, or as CSV with ``format=csv``."""
    arbiter(request)
    context = context_of(request)
    slug, team = request.match_info["slug"], request.match_info["team"]
    through = int_query(request, "round")
    kind = request.query.get("format", "json")
    if kind not in ("json", "csv"):
        raise errors.BadRequestError("'format' must be json or csv")
    states = {game_id: game.state for game_id, game in dict(context.service.games).items()}
    if kind == "csv":
        text = await read(context, lambda c: team_events.team_standings_csv(c, slug, team, states, through))
        return attachment(text, "text/csv", f"{slug}-{team}-standings.csv")
    body = await read(context, lambda c: team_events.team_standings_json(c, slug, team, states, through))
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
    game = whole_number(body, "match_game", (1, 100)) if "match_game" in body else 1
    result, reason = text_field(body, "result", required=True), text_field(body, "reason")
    override = body.get("override", False)
    if not isinstance(override, bool):
        raise errors.BadRequestError("'override' must be true or false")
    entered = await context.writer.submit(
        lambda connection, batch: results.enter_result(
            context.service, connection, batch, who, slug, section, round_no, board, result, reason, override,
            now_ms(), game,
        )
    )  # fmt: skip
    return web.json_response(entered, status=201)


async def post_withdrawal(request: web.Request) -> web.Response:
    """A player's withdrawal (24.4) with its written reasons (24.1.2): the chief arbiter, a deputy chief or the
    organising committee."""
    who = arbiter(request)
    context = context_of(request)
    slug, section = request.match_info["slug"], request.match_info["section"]
    body = await json_body(request)
    start_no = whole_number(body, "start_no", (1, 100_000))
    after_round = whole_number(body, "after_round", (0, 1000))
    reason = text_field(body, "reason", required=True)
    recorded = await context.writer.submit(
        lambda connection, batch: withdrawals.record_withdrawal(
            context.service, connection, batch, who, slug, section, start_no, after_round, reason, now_ms()
        )
    )
    return web.json_response(recorded, status=201)


ROUTES: Final = (
    Route("GET", "/api/v1/events", list_events, "Events, their sections and rounds", {"200": "the events"}),
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
        "GET", "/api/v1/events/{slug}/teams/{team}/standings", get_team_standings,
        "A team event's table (2021 regulations VIII(6)2: each unit's best-placed male plus best-placed female "
        "player's points, then the lower sum of their places, then the male player's place), from its sections' "
        "standings; JSON, or CSV with format=csv",
        {"200": "the table", "400": "bad round or format", "401": "not an arbiter",
         "404": "unknown event or team event", "409": "a section's round is not complete, or a unit lacks a male or "
         "a female player"},
        (("slug", "path", "the event's slug"), ("team", "path", "the team event's slug"),
         ("round", "query", "each section after this round (the last complete round by default)"),
         ("format", "query", "json (default) or csv")),
    ),
    Route(
        "POST", "/api/v1/events/{slug}/sections/{section}/results", post_result,
        "Enter or correct a pairing's result (28) {round, board, match_game (a match's game, 1 by default: regulations "
        "2023 VII(2)), result: 1-0, 0-1, ½-½ (0.5-0.5), or the forfeits +-, -+, -- (28.3), reason, "
        "override}: chief arbiter or deputy chief (16); audited with old and new",
        {"201": "the result as stored, the previous one and the game's verdict", "400": "malformed",
         "401": "not an arbiter", "403": "not the chief or a deputy chief, or an override by a deputy (16)",
         "404": "unknown event, section or pairing",
         "409": "a bye, or the linked game's verdict differs (or it is still in play) without the chief's override"},
        (("slug", "path", "the event's slug"), ("section", "path", "the section's slug")),
    ),
    Route(
        "POST", "/api/v1/events/{slug}/sections/{section}/withdrawals", post_withdrawal,
        "Record a player's withdrawal (24.4) {start_no, after_round (0: before the first round), reason (24.1.2)}: "
        "chief arbiter, deputy chief or organising committee; the standings apply it (24.4.2 round robin: annulled "
        "below half the games, forfeits from half; 24.4.3 Swiss: not paired again); audited",
        {"201": "the withdrawal as stored", "400": "malformed", "401": "not an arbiter", "403": "another role",
         "404": "unknown event, section or start number", "409": "the player has already withdrawn"},
        (("slug", "path", "the event's slug"), ("section", "path", "the section's slug")),
    ),
)  # fmt: skip
