"""Cases as JSON: the queue (filtered, sorted by urgency then newest, paged with a cursor and a total) and one case
with its occurrences and actions.  Read from the stored rows and folded by proctor.cases; names in words for the
desk (players by name, the verdict's facts as a sentence), ids beside them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Connection, select
from sqlmodel import col

from proctor.cases import RESOLUTIONS, STATUSES, VERDICT_KIND, ActionTaken, CaseFile, Occurrence, ended_after_ms
from proctor.errors import BadRequestError, NotFoundError
from proctor.models import (
    MAX_INTEGER,
    Case,
    CaseAction,
    CaseOccurrence,
    Game,
    Incident,
    IncidentAction,
    Pairing,
    Section,
    Tournament,
)
from proctor.models import Player as PlayerRow
from proctor.server_words import Bilingual, IncidentFacts, incident_words, same, verdict_words
from proctor.staging import table_of

DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 500
STATUS_FILTERS: Final = (*STATUSES, "closed")
"""``closed``: any status but open."""


@dataclass(frozen=True, slots=True)
class Place:
    event: str
    section: str
    round_no: int
    board: int


@dataclass(frozen=True, slots=True)
class CaseFilter:
    kind: str | None = None
    sections: tuple[str, ...] = ()
    """``event/section`` or ``event/section/board``: a case in any of them."""
    board: int | None = None
    player: str | None = None
    game: int | None = None
    status: str | None = None
    limit: int = DEFAULT_LIMIT
    after: tuple[int, int, int] | None = None
    """The sort key of the last case of the previous page (the cursor)."""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> CaseFilter:
        status = query.get("status") or None
        if status is not None and status not in STATUS_FILTERS:
            raise BadRequestError(f"'status' must be one of {', '.join(STATUS_FILTERS)}")
        sections = tuple(s for s in (query.get("section") or "").split(",") if s)
        if any(s.count("/") not in (1, 2) for s in sections):
            raise BadRequestError("'section' must be event/section or event/section/board, comma-separated")
        return cls(
            kind=query.get("kind") or None, sections=sections, board=_number(query, "board"),
            player=query.get("player") or None, game=_number(query, "game"), status=status,
            limit=_number(query, "limit", 1, MAX_LIMIT) or DEFAULT_LIMIT, after=_cursor(query.get("cursor")),
        )  # fmt: skip

    def admits(self, case: CaseFile, place: Place | None, player_sections: list[str]) -> bool:
        if self.status == "closed" and case.status == "open":
            return False
        if self.status not in (None, "closed") and case.status != self.status:
            return False
        if self.game is not None and case.game_id != self.game:
            return False
        if self.board is not None and (place is None or place.board != self.board):
            return False
        if self.sections:
            where = [f"{place.event}/{place.section}", f"{place.event}/{place.section}/{place.board}"] if place else []
            where = where or player_sections
            if not any(s in where for s in self.sections):
                return False
        return True


def _number(query: Mapping[str, str], name: str, low: int = 0, high: int = MAX_INTEGER) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or len(raw) > len(str(high)) or not low <= int(raw) <= high:
        raise BadRequestError(f"query parameter '{name}' must be a whole number from {low} to {high}")
    return int(raw)


def _cursor(raw: str | None) -> tuple[int, int, int] | None:
    if not raw:
        return None
    parts = raw.split(".")
    if len(parts) != 3 or not all(p.lstrip("-").isdigit() and len(p) <= 20 for p in parts):
        raise BadRequestError("'cursor' must be the 'next' of the previous page")
    urgency, last_ms, case_id = (int(p) for p in parts)
    return (urgency, -last_ms, -case_id)


def cursor_of(case: CaseFile) -> str:
    return f"{case.urgency}.{case.last_ms}.{case.id}"


# --- Reading -----------------------------------------------------------------------------------------------------


def read_case_files(
    connection: Connection, *, case_id: int | None = None, kind: str | None = None, player: str | None = None
) -> list[CaseFile]:
    """The cases (one, or those of a kind or player), folded from their rows."""
    conditions = []
    if case_id is not None:
        conditions.append(col(Case.id) == case_id)
    if kind is not None:
        conditions.append(col(Case.kind) == kind)
    if player is not None:
        conditions.append(col(Case.player_ref) == player)
    rows = connection.execute(select(Case).where(*conditions).order_by(col(Case.id))).all()
    chosen = select(col(Case.id)).where(*conditions)
    occurrences: dict[int, list[Any]] = {}
    incident_ids: set[int] = set()
    incidents = table_of(Incident)
    for incident in connection.execute(
        select(col(CaseOccurrence.case_id).label("case_of"), *incidents.c)
        .join(incidents, incidents.c.id == col(CaseOccurrence.incident_id))
        .where(col(CaseOccurrence.case_id).in_(chosen))
        .order_by(col(CaseOccurrence.id))
    ):
        occurrences.setdefault(incident.case_of, []).append(incident)
        incident_ids.add(incident.id)
    durations: dict[int, int] = {}
    for incident_id, arbiter, note in connection.execute(
        select(col(IncidentAction.incident_id), col(IncidentAction.arbiter), col(IncidentAction.note))
        .join(CaseOccurrence, col(CaseOccurrence.incident_id) == col(IncidentAction.incident_id))
        .where(col(IncidentAction.action) == "note", col(CaseOccurrence.case_id).in_(chosen))
    ):
        duration = ended_after_ms(arbiter, note)
        if duration is not None and incident_id in incident_ids:
            durations[incident_id] = durations.get(incident_id, 0) + duration
    actions: dict[int, list[ActionTaken]] = {}
    acted = select(CaseAction).where(col(CaseAction.case_id).in_(chosen)).order_by(col(CaseAction.id))
    for a in connection.execute(acted):
        taken = ActionTaken(a.id, a.created_ms, a.arbiter, a.role, a.action, a.note, a.detail or {})
        actions.setdefault(a.case_id, []).append(taken)
    statuses = {}
    files = []
    for row in rows:
        folded = CaseFile(
            row.id,
            row.key,
            row.kind,
            row.player_ref,
            row.created_ms,
            row.follows,
            None,
            tuple(
                Occurrence(
                    i.id,
                    i.created_ms,
                    i.summary,
                    i.source,
                    i.article,
                    i.confidence,
                    i.evidence or {},
                    i.game_id,
                    durations.get(i.id),
                )
                for i in occurrences.get(row.id, [])
            ),
            tuple(actions.get(row.id, [])),
        )
        statuses[row.id] = folded.status
        files.append(folded)
    missing = {f.follows for f in files if f.follows is not None and f.follows not in statuses}
    if missing:
        statuses.update(read_statuses(connection, missing))
    return [_with_follows_status(f, statuses) for f in files]


def _with_follows_status(case: CaseFile, statuses: dict[int, str]) -> CaseFile:
    if case.follows is None:
        return case
    return CaseFile(case.id, case.key, case.kind, case.player_ref, case.opened_ms, case.follows,
                    statuses.get(case.follows), case.occurrences, case.actions)  # fmt: skip


def read_statuses(connection: Connection, case_ids: set[int]) -> dict[int, str]:
    statuses = dict.fromkeys(case_ids, "open")
    for case_id, action in connection.execute(
        select(col(CaseAction.case_id), col(CaseAction.action))
        .where(col(CaseAction.case_id).in_(list(case_ids)))
        .order_by(col(CaseAction.id))
    ):
        if action in RESOLUTIONS:
            statuses[case_id] = RESOLUTIONS[action]
    return statuses


def incident_cases(connection: Connection, incident_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The case each of these incidents is an occurrence of, by incident id: ``{id, status}`` (open, or how it was
    closed).  A closed case's incidents no longer count as open on the desk, whatever their own last action."""
    if not incident_ids:
        return {}
    rows = connection.execute(
        select(col(CaseOccurrence.incident_id), col(CaseOccurrence.case_id))
        .where(col(CaseOccurrence.incident_id).in_(list(incident_ids)))
    ).all()  # fmt: skip
    statuses = read_statuses(connection, {case_id for _, case_id in rows})
    return {incident_id: {"id": case_id, "status": statuses[case_id]} for incident_id, case_id in rows}


def with_cases(connection: Connection, incidents: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The incidents, each with its ``case`` (:func:`incident_cases`; None before its case is stored)."""
    cases = incident_cases(connection, [incident["id"] for incident in incidents])
    return [{**incident, "case": cases.get(incident["id"])} for incident in incidents]


def _places(connection: Connection) -> dict[int, Place]:
    rows = connection.execute(
        select(col(Game.id), col(Tournament.slug), col(Section.slug), col(Pairing.round_no), col(Pairing.board))
        .select_from(Game)
        .join(Pairing, col(Pairing.id) == col(Game.pairing_id))
        .join(Section, col(Section.id) == col(Pairing.section_id))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
    )
    return {
        int(game_id or 0): Place(event, section, round_no, board) for game_id, event, section, round_no, board in rows
    }


@dataclass(frozen=True, slots=True)
class Names:
    """Players' names: from their games (black and white) and the events' player lists; their sections."""

    by_ref: dict[str, str]
    sections: dict[str, list[str]]

    @classmethod
    def read(cls, connection: Connection) -> Names:
        by_ref: dict[str, str] = {}
        for black, white, black_name, white_name in connection.execute(
            select(col(Game.black_ref), col(Game.white_ref), col(Game.black_name), col(Game.white_name))
        ):
            by_ref.setdefault(black, black_name or black)
            by_ref.setdefault(white, white_name or white)
        sections: dict[str, list[str]] = {}
        for ref, name, event, section in connection.execute(
            select(col(PlayerRow.platform_ref), col(PlayerRow.name), col(Tournament.slug), col(Section.slug))
            .join(Section, col(Section.id) == col(PlayerRow.section_id))
            .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        ):
            if ref:
                by_ref[ref] = name or by_ref.get(ref, ref)
                sections.setdefault(ref, []).append(f"{event}/{section}")
        return cls(by_ref, sections)

    def player(self, ref: str | None) -> dict[str, str] | None:
        return None if ref is None else {"id": ref, "name": self.by_ref.get(ref, ref)}


def read_cases(connection: Connection, where: CaseFilter) -> dict[str, Any]:
    """A page of the queue: the cases the filter admits, most urgent then newest first, after the cursor; with the
    total the filter admits (so a desk knows how many pages there are, and none is dropped silently)."""
    files = read_case_files(connection, kind=where.kind, player=where.player)
    places, names = _places(connection), Names.read(connection)
    admitted = [
        case
        for case in files
        if where.admits(case, _place(case, places), names.sections.get(case.player_ref or "", []))
    ]
    admitted.sort(key=CaseFile.sort_key)
    after = [case for case in admitted if where.after is None or case.sort_key() > where.after]
    page = after[: where.limit]
    more = len(after) > len(page)
    return {
        "cases": [case_json(case, places, names) for case in page],
        "total": len(admitted),
        "remaining": len(after) - len(page),
        "next": cursor_of(page[-1]) if more and page else None,
        "limit": where.limit,
    }


def read_case(connection: Connection, case_id: int) -> dict[str, Any]:
    files = read_case_files(connection, case_id=case_id)
    if not files:
        raise NotFoundError(f"no case {case_id}")
    return case_json(files[0], _places(connection), Names.read(connection), full=True)


def _place(case: CaseFile, places: dict[int, Place]) -> Place | None:
    return None if case.game_id is None else places.get(case.game_id)


# --- JSON --------------------------------------------------------------------------------------------------------


def case_json(case: CaseFile, places: dict[int, Place], names: Names, full: bool = False) -> dict[str, Any]:
    place = _place(case, places)
    latest = case.latest
    best = case.best_evidence
    alert = case.alert
    body: dict[str, Any] = {
        "id": case.id, "kind": case.kind, "status": case.status, "urgency": case.urgency,
        "article": latest.article if latest else None, "summary": latest.summary if latest else "",
        "summary_words": _words(case, latest, names) if latest else same(""),
        "player": names.player(case.player_ref), "game": case.game_id,
        "event": place.event if place else None, "section": place.section if place else None,
        "round": place.round_no if place else None, "board": place.board if place else None,
        "opened": case.opened_ms, "first": case.first_ms, "last": case.last_ms,
        "occurrence_count": len(case.occurrences), "duration_ms": case.total_duration_ms,
        "evidence": None if best is None else {
            "incident": best.incident, "media": best.evidence.get("media", []), "sha256": best.evidence.get("sha256"),
            "summary": best.summary, "summary_words": _words(case, best, names), "duration_ms": best.duration_ms,
        },
        "follows": case.follows, "follows_status": case.follows_status,
        "alert": None if alert is None else {"reason": alert.reason, "at": alert.at, "for": alert.for_role},
        "verdict": None,
    }  # fmt: skip
    if case.kind == VERDICT_KIND and latest is not None:
        body["verdict"] = verdict_json(latest.evidence.get("verdict") or {}, names)
    if full:
        body["occurrences"] = [occurrence_json(o) | {"summary_words": _words(case, o, names)} for o in case.occurrences]
        body["actions"] = [
            {"id": a.id, "at": a.at, "by": a.arbiter, "role": a.role, "action": a.action, "note": a.note}
            | {"detail": a.detail}
            for a in case.actions
        ]
    return body


def _words(case: CaseFile, occurrence: Occurrence, names: Names) -> Bilingual:
    """An occurrence's summary in both languages (proctor.server_words)."""
    facts = IncidentFacts(case.kind, occurrence.source, occurrence.summary, occurrence.article, occurrence.evidence,
                          case.player_ref)  # fmt: skip
    return incident_words(facts, names.by_ref)


def occurrence_json(occurrence: Occurrence) -> dict[str, Any]:
    return {
        "incident": occurrence.incident, "at": occurrence.at, "summary": occurrence.summary,
        "source": occurrence.source, "article": occurrence.article, "confidence": occurrence.confidence,
        "duration_ms": occurrence.duration_ms, "game": occurrence.game_id, "evidence": occurrence.evidence,
    }  # fmt: skip


def duration_words(ms: int) -> str:
    """``45 s``, ``3 min 5 s``, ``1 h 2 min``."""
    seconds = round(ms / 1000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


_WHY: Final = {
    "not-arrived": "did not arrive: absent {d} since the scheduled start",
    "disconnected": "lost the connection and did not come back: gone {d}",
    "out-of-time": "ran out of time",
}


def verdict_json(facts: dict[str, Any], names: Names) -> dict[str, Any]:
    """A pending verdict's facts, with the players' names and a sentence that says them."""
    players = []
    lines = []
    for entry in facts.get("players", []):
        name = names.by_ref.get(entry.get("player") or "", entry.get("player") or "?")
        colour = str(entry.get("colour", ""))
        words = _WHY.get(entry.get("why", ""), "").format(d=duration_words(int(entry.get("absent_ms", 0))))
        players.append({**entry, "name": name})
        lines.append(f"{colour.capitalize()} ({name}) {words}")
    winner = facts.get("winner")
    if facts.get("double_loss"):
        outcome = "both players lose"
    elif winner:
        outcome = f"{winner} wins"
    else:
        outcome = "no winner: the arbiter decides"
    text = "; ".join(lines) or str(facts.get("termination", ""))
    text += f". The verdict ({facts.get('termination')}, {facts.get('article')}): {outcome}, unless overruled."
    return {**facts, "players": players, "text": text, "text_words": verdict_words(facts, names.by_ref)}
