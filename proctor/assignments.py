"""Assignments (16): an arbiter assigned to sections (``event/section``) or boards (``event/section/board``) changes
only the games, incidents and cameras there; the chief arbiter and the deputy chief act everywhere, and so does an
arbiter with no assignment.  Checked on the writer thread, in the transaction of the change it allows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sqlalchemy import Connection, select
from sqlmodel import col

from engine.penalties import Role
from proctor.accounts import Identity
from proctor.errors import ForbiddenError
from proctor.models import Game, Pairing, Section, Tournament
from proctor.models import Player as PlayerRow

EVERYWHERE: Final = frozenset({Role.CHIEF, Role.DEPUTY_CHIEF})
"""The roles whose authority an assignment does not limit (16)."""


@dataclass(frozen=True, slots=True)
class Place:
    """Where a game or a player is: the event and section, and the board when it is a game's."""

    event: str
    section: str
    board: int | None = None

    def covered_by(self, assignment: str) -> bool:
        section = f"{self.event}/{self.section}"
        return assignment == section or (self.board is not None and assignment == f"{section}/{self.board}")

    def __str__(self) -> str:
        where = f"{self.event}/{self.section}"
        return where if self.board is None else f"{where}, board {self.board}"


def restricted(who: Identity) -> bool:
    """True when an assignment limits what this arbiter may change."""
    return bool(who.sections) and who.role not in EVERYWHERE


def game_place(connection: Connection, game_id: int) -> Place | None:
    """The event, section and board of a game's pairing (None: a game in no event's pairings)."""
    row = connection.execute(
        select(col(Tournament.slug), col(Section.slug), col(Pairing.board))
        .select_from(Game)
        .join(Pairing, col(Pairing.id) == col(Game.pairing_id))
        .join(Section, col(Section.id) == col(Pairing.section_id))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(Game.id) == game_id)
    ).first()
    return None if row is None else Place(row[0], row[1], row[2])


def player_places(connection: Connection, player_ref: str) -> list[Place]:
    """The sections a player (by their platform id) plays in."""
    rows = connection.execute(
        select(col(Tournament.slug), col(Section.slug))
        .select_from(PlayerRow)
        .join(Section, col(Section.id) == col(PlayerRow.section_id))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(PlayerRow.platform_ref) == player_ref)
    ).all()
    return [Place(event, section) for event, section in rows]


def require_assigned(who: Identity, places: list[Place], what: str) -> None:
    """Refuse (ForbiddenError, 16) a change by an assigned arbiter outside their sections and boards."""
    if not restricted(who):
        return
    if any(place.covered_by(assignment) for place in places for assignment in who.sections):
        return
    where = " or ".join(str(place) for place in places) or "no event's section"
    raise ForbiddenError(
        f"{who.name} is assigned to {', '.join(who.sections)}; {what} is in {where}: only the chief arbiter or a "
        "deputy chief acts beyond an assignment (16)",
        article="16",
    )


def require_assigned_to_game(connection: Connection, who: Identity, game_id: int | None, what: str) -> None:
    if restricted(who):
        place = None if game_id is None else game_place(connection, game_id)
        require_assigned(who, [] if place is None else [place], what)


def require_assigned_to_player(
    connection: Connection, who: Identity, player_ref: str, game_id: int | None, what: str
) -> None:
    """A player's camera or incident: the board of their current game, else the sections they play in."""
    if restricted(who):
        place = None if game_id is None else game_place(connection, game_id)
        require_assigned(who, [place] if place is not None else player_places(connection, player_ref), what)
