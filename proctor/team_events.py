"""Team events (2021 regulations VI(2), VIII(6)2; 29.1.2): a team event named in the event file (``[[teams]]``)
scored from its individual sections, each ranked by its own standings (proctor.review, with withdrawals and the
games' verdicts), then :func:`engine.teams.youth_team_standings`: each unit's best-placed male plus best-placed
female player's points, ties to the lower sum of their places, then the male player's place."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any, Final

from sqlalchemy import Connection, select
from sqlmodel import col

from engine.adjudication import Adjudication
from engine.standings import StandingsError, format_score
from engine.teams import YouthTeamStanding, youth_team_standings
from proctor import review
from proctor.errors import ConflictError, NotFoundError
from proctor.models import Tournament
from proctor.spreadsheets import spreadsheet_text

ARTICLE: Final = "2021 regulations VIII(6)2"


def team_event(connection: Connection, slug: str, team: str) -> dict[str, Any]:
    """The team event's entry in the event's stored file."""
    config = connection.execute(select(col(Tournament.config)).where(col(Tournament.slug) == slug)).scalar()
    if config is None:
        raise NotFoundError(f"no event {slug!r}")
    for item in config.get("teams", []):
        if isinstance(item, dict) and item.get("slug") == team:
            return item
    raise NotFoundError(f"no team event {team!r} in {slug!r}")


def team_standings(
    connection: Connection, slug: str, team: str, states: Mapping[int, Adjudication], through: int | None = None
) -> tuple[dict[str, Any], list[YouthTeamStanding], dict[str, int]]:
    """The team event, its table, and the round each section's standings are after (the last complete round, or
    ``through``)."""
    spec = team_event(connection, slug, team)
    tournaments, rounds, tiebreaks = [], {}, "PTS"
    for section in spec["sections"]:
        table = review.read_section(connection, slug, section, states)
        tournament = review.section_tournament(table, through)
        tournaments.append(tournament)
        rounds[section] = tournament.rounds
        tiebreaks = table.tiebreaks
    try:
        return spec, youth_team_standings(tournaments, tiebreaks), rounds
    except StandingsError as error:
        raise ConflictError(f"team event {team}: {error}", article=ARTICLE) from None


def _player(row: Any) -> dict[str, Any]:
    return {"start_no": row.entrant.start_no, "name": row.entrant.name, "place": row.rank,
            "points": format_score(row.points)}  # fmt: skip


def team_standings_json(
    connection: Connection, slug: str, team: str, states: Mapping[int, Adjudication], through: int | None = None
) -> dict[str, Any]:
    spec, table, rounds = team_standings(connection, slug, team, states, through)
    return {
        "event": slug, "team": team, "name": spec.get("name", team), "scoring": spec.get("scoring", "youth"),
        "article": ARTICLE, "sections": list(spec["sections"]), "rounds": rounds,
        "rows": [{"place": row.rank, "unit": row.unit, "points": format_score(row.points), "place_sum": row.place_sum,
                  "male": _player(row.male), "female": _player(row.female)} for row in table],
    }  # fmt: skip


def team_standings_csv(
    connection: Connection, slug: str, team: str, states: Mapping[int, Adjudication], through: int | None = None
) -> str:
    """Place, unit, points, the sum of places, then the male and the female player (name, place, points); unit and
    names neutralised for spreadsheets (proctor.spreadsheets)."""
    _, table, _ = team_standings(connection, slug, team, states, through)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["place", "unit", "points", "place sum", "male", "male place", "male points", "female",
                     "female place", "female points"])  # fmt: skip
    for row in table:
        writer.writerow([
            row.rank, spreadsheet_text(row.unit), format_score(row.points), row.place_sum,
            spreadsheet_text(row.male.entrant.name), row.male.rank, format_score(row.male.points),
            spreadsheet_text(row.female.entrant.name), row.female.rank, format_score(row.female.points),
        ])  # fmt: skip
    return out.getvalue()
