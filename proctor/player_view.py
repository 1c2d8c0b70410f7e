"""What the player's page shows about its player: who they are and where they play (event, section, round, board,
colour, opponent: from their game in play, else their event's pairing for the first round with neither a result nor
a finished game), the zone the page shows times in, and the arbiter's answer to their latest leave request (36.4.1)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, exists, or_, select
from sqlmodel import col

from proctor.models import (
    CameraAction,
    Case,
    CaseAction,
    CaseOccurrence,
    Game,
    Incident,
    IncidentAction,
    Pairing,
    Player,
    Section,
    Tournament,
)
from proctor.time_zones import DEFAULT_ZONE, config_zone

LEAVE_REQUEST = "leave-request"


def _player_rows(connection: Connection, section_id: int) -> dict[int, str]:
    rows = connection.execute(
        select(col(Player.start_no), col(Player.name)).where(col(Player.section_id) == section_id)
    ).all()
    return {row.start_no: row.name for row in rows}


def _place(connection: Connection, pairing_id: int, player_ref: str) -> dict[str, Any] | None:
    row: Any = connection.execute(
        select(col(Pairing.section_id), col(Pairing.round_no), col(Pairing.board), col(Pairing.black_start_no),
               col(Pairing.white_start_no), col(Section.name).label("section"),
               col(Tournament.name).label("event"),
               col(Tournament.config).label("config"))
        .join(Section, col(Section.id) == col(Pairing.section_id))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(Pairing.id) == pairing_id)
    ).first()  # fmt: skip
    if row is None:
        return None
    pairing = row
    names = _player_rows(connection, pairing.section_id)
    refs = dict(connection.execute(
        select(col(Player.start_no), col(Player.platform_ref)).where(col(Player.section_id) == pairing.section_id)
    ).all())  # fmt: skip
    black, white = pairing.black_start_no, pairing.white_start_no
    mine = "black" if refs.get(black) == player_ref else "white"
    other = white if mine == "black" else black
    return {
        "event": row.event, "section": row.section, "round": pairing.round_no, "board": pairing.board,
        "colour": mine if white is not None else None,
        "opponent": None if other is None else {"name": names.get(other, "")},
        "time_zone": config_zone(row.config),
    }  # fmt: skip


def player_place(connection: Connection, player_ref: str) -> dict[str, Any]:
    """``{name, event, section, round, board, colour, opponent: {name}, time_zone}``; each field the service does not
    know is None (the page shows nothing for it)."""
    view: dict[str, Any] = {"name": None, "event": None, "section": None, "round": None, "board": None,
                            "colour": None, "opponent": None, "time_zone": DEFAULT_ZONE}  # fmt: skip
    game: Any = connection.execute(
        select(col(Game.black_ref), col(Game.black_name), col(Game.white_name), col(Game.pairing_id))
        .where(or_(col(Game.black_ref) == player_ref, col(Game.white_ref) == player_ref))
        .where(col(Game.status) != "over")
        .order_by(col(Game.id).desc())
        .limit(1)
    ).first()  # fmt: skip
    if game is not None:
        black = game.black_ref == player_ref
        view |= {"name": (game.black_name if black else game.white_name) or None,
                 "colour": "black" if black else "white",
                 "opponent": {"name": (game.white_name if black else game.black_name) or None}}  # fmt: skip
        if game.pairing_id is not None and (place := _place(connection, game.pairing_id, player_ref)):
            view |= {k: v for k, v in place.items() if k not in ("colour", "opponent")}
    registered: Any = connection.execute(
        select(col(Player.name), col(Player.section_id), col(Player.start_no), col(Section.name).label("section"),
               col(Tournament.name).label("event"),
               col(Tournament.config).label("config"))
        .join(Section, col(Section.id) == col(Player.section_id))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(Player.platform_ref) == player_ref)
        .order_by(col(Section.id).desc())
        .limit(1)
    ).first()  # fmt: skip
    if registered is None:
        return view
    player = registered
    view["name"] = player.name  # the event's spelling of the name over the platform's
    if view["event"] is None:
        view |= {"event": registered.event, "section": registered.section,
                 "time_zone": config_zone(registered.config)}  # fmt: skip
        pairing = connection.execute(
            select(col(Pairing.id))
            .where(col(Pairing.section_id) == player.section_id, col(Pairing.result) == "")
            .where(or_(col(Pairing.black_start_no) == player.start_no, col(Pairing.white_start_no) == player.start_no))
            .where(~exists().where(col(Game.pairing_id) == col(Pairing.id), col(Game.status) == "over"))
            .order_by(col(Pairing.round_no))
            .limit(1)
        ).scalar()  # fmt: skip
        if pairing is not None and (place := _place(connection, pairing, player_ref)):
            view |= place
    if view["opponent"] is not None and not view["opponent"].get("name"):
        view["opponent"] = None
    return view


def leave_answer(connection: Connection, player_ref: str) -> dict[str, Any] | None:
    """The player's latest leave request and the arbiter's answer: ``{incident, at, answer, until, note}``, answer
    ``waiting``, ``granted`` (a leave of the area granted since the request: until when) or ``refused`` (the request's
    incident dismissed, or its case refused or dismissed: the arbiter's reason); None when the player has asked
    nothing."""
    request = connection.execute(
        select(col(Incident.id), col(Incident.created_ms))
        .where(col(Incident.player_ref) == player_ref, col(Incident.kind) == LEAVE_REQUEST)
        .order_by(col(Incident.id).desc())
        .limit(1)
    ).first()  # fmt: skip
    if request is None:
        return None
    answer: dict[str, Any] = {"incident": request.id, "at": request.created_ms, "answer": "waiting", "until": None,
                              "note": ""}  # fmt: skip
    grant = connection.execute(
        select(col(CameraAction.detail), col(CameraAction.created_ms))
        .where(col(CameraAction.player_ref) == player_ref, col(CameraAction.kind) == "leave")
        .where(col(CameraAction.created_ms) >= request.created_ms)
        .order_by(col(CameraAction.id).desc())
        .limit(1)
    ).first()  # fmt: skip
    if grant is not None:
        return answer | {"answer": "granted", "until": (grant.detail or {}).get("until"), "answered": grant.created_ms}
    refusal = connection.execute(
        select(col(IncidentAction.note), col(IncidentAction.created_ms))
        .where(col(IncidentAction.incident_id) == request.id, col(IncidentAction.action) == "dismiss")
        .order_by(col(IncidentAction.id).desc())
        .limit(1)
    ).first()  # fmt: skip
    if refusal is None:
        refusal = connection.execute(
            select(col(CaseAction.note), col(CaseAction.created_ms))
            .join(Case, col(Case.id) == col(CaseAction.case_id))
            .join(CaseOccurrence, col(CaseOccurrence.case_id) == col(Case.id))
            .where(col(CaseOccurrence.incident_id) == request.id, col(CaseAction.action).in_(("dismiss", "refuse")))
            .order_by(col(CaseAction.id).desc())
            .limit(1)
        ).first()  # fmt: skip
    if refusal is not None:
        return answer | {"answer": "refused", "note": refusal.note, "answered": refusal.created_ms}
    return answer


def leave_requesters(connection: Connection, incidents: list[int], cases: list[int]) -> set[str]:
    """The players whose leave request is among these incidents, or among these cases' occurrences."""
    ids = set(incidents)
    if cases:
        ids |= set(connection.execute(
            select(col(CaseOccurrence.incident_id)).where(col(CaseOccurrence.case_id).in_(cases))
        ).scalars())  # fmt: skip
    if not ids:
        return set()
    rows = connection.execute(
        select(col(Incident.player_ref)).where(col(Incident.id).in_(ids), col(Incident.kind) == LEAVE_REQUEST)
    ).scalars()
    return {ref for ref in rows if ref}
