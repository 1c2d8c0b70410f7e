"""Technical appeals (22).

An appeal against an arbiter's decision on a game or an incident is lodged in writing, only by a team leader or a
coach (22.1), with the deposit paid at the same time (22.1, 22.2); an arbiter records it.  The technical appeals
committee rules on it by majority, each member having one vote (22.2): here the members are the arbiters with the
role ``committee``, and a side needs the votes of more than half of them.  The deposit is returned when the appeal
succeeds; when it fails it is forfeited, or half of it returned if the committee finds the appeal had some reasonable
basis (22.1 ¶5, 22.2 ¶3).

Appeals, votes and decisions are append-only rows.  Each write runs on the writer, checks first and writes last, and
adds an audit entry that holds ids, references and the SHA-256 of the free text (never the text or a name).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from sqlalchemy import Connection, func, insert, select
from sqlmodel import col

from engine.penalties import Role
from proctor.accounts import Identity
from proctor.assignments import require_assigned_to_game, require_assigned_to_player
from proctor.errors import BadRequestError, ConflictError, ForbiddenError, NotFoundError
from proctor.models import (
    MAX_INTEGER,
    Appeal,
    AppealDecision,
    AppealVote,
    Arbiter,
    Game,
    Incident,
    Pairing,
    Section,
    Tournament,
)
from proctor.service import Service
from proctor.staging import Batch, Notice
from proctor.time_zones import config_zone, local_time

TIME_LIMIT: Final = "14.9"
"""An appeal within the prescribed time after the end of the round (delays caused by the organiser excepted)."""
LODGING: Final = "22.1"
"""Written appeals, by a team leader or coach only, with a deposit."""
COMMITTEE: Final = "22.2"
"""The technical appeals committee: one vote per member, decision by majority, final."""
DEPOSIT: Final = "22.1, 22.2"
"""The deposit: returned if the appeal succeeds; if it fails but had some reasonable basis, half may be returned."""
CAPACITIES: Final = ("team-leader", "coach")
VOTES: Final = ("uphold", "reject")
MAX_TEXT: Final = 5000


class NoMajorityError(ConflictError):
    """No side has the votes of more than half of the committee yet."""

    code = "no-majority"


class TieError(ConflictError):
    """Every member has voted and the votes are equal."""

    code = "tie"


# --- The rules, as pure functions -----------------------------------------------------------------------------------


def majority(votes: Sequence[str], members: int) -> str:
    """``upheld`` or ``rejected``: the side with the votes of more than half of the committee's ``members`` (22.2);
    a :class:`TieError` when all have voted and the votes are equal, else :class:`NoMajorityError`."""
    uphold, reject = votes.count("uphold"), votes.count("reject")
    if 2 * uphold > members:
        return "upheld"
    if 2 * reject > members:
        return "rejected"
    if uphold == reject and len(votes) >= members:
        raise TieError(f"the committee is tied, {uphold} to {reject}: no decision (22.2)", article=COMMITTEE,
                       uphold=uphold, reject=reject, committee=members)  # fmt: skip
    raise NoMajorityError(
        f"no majority yet: {uphold} to uphold, {reject} to reject, of {members} member(s); a decision needs "
        f"{members // 2 + 1} votes on one side (22.2)",
        article=COMMITTEE, uphold=uphold, reject=reject, committee=members,
    )  # fmt: skip


def deposit_outcome(outcome: str, amount: Decimal, reasonable_basis: bool) -> tuple[str, Decimal]:
    """What becomes of the deposit (22.1, 22.2): returned when the appeal is upheld; when it is rejected, half
    returned if it had some reasonable basis, else forfeited.  (outcome, amount returned)."""
    if outcome == "upheld":
        return "returned", amount
    if reasonable_basis:
        return "half-returned", amount / 2
    return "forfeited", Decimal(0)


def _amount_text(amount: Decimal) -> str:
    return format(amount.normalize() if amount == amount.to_integral() else amount, "f")


@dataclass(frozen=True, slots=True)
class AppealRequest:
    """A written appeal as lodged: what it is about, by whom, on what grounds, and the deposit."""

    game: int | None
    incident: int | None
    filed_by: str
    capacity: str
    team: str
    grounds: str
    amount: Decimal
    currency: str
    late_accepted: str | None = None
    """Why an appeal after the deadline is accepted (14.9: a delay caused by the organiser); the chief or a deputy."""

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> AppealRequest:
        game, incident = body.get("game"), body.get("incident")
        for key, value in (("game", game), ("incident", incident)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 1 <= value <= MAX_INTEGER):  # fmt: skip
                raise BadRequestError(f"'{key}' must be the service's {key} id (a whole number, 1 to {MAX_INTEGER})")
        if game is None and incident is None:
            raise BadRequestError("an appeal is about a 'game' or an 'incident' (the arbiter's decision appealed)",
                                  article=LODGING)  # fmt: skip
        filed_by = body.get("filed_by")
        if not isinstance(filed_by, dict):
            raise BadRequestError("'filed_by' must be {name, capacity, team}: who lodges the appeal", article=LODGING)
        name, capacity, team = filed_by.get("name"), filed_by.get("capacity"), filed_by.get("team", "")
        grounds = body.get("grounds")
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            raise BadRequestError("'filed_by.name' must be the name of who lodges the appeal", article=LODGING)
        if capacity not in CAPACITIES:
            raise BadRequestError(
                "'filed_by.capacity' must be team-leader or coach: during the competition only a team leader (or "
                "coach) may lodge an appeal, and a player's appeal without their support is not accepted (22.1)",
                article=LODGING,
            )
        if not isinstance(team, str) or len(team) > 200:
            raise BadRequestError("'filed_by.team' must be the team's name")
        if not isinstance(grounds, str) or not grounds.strip() or len(grounds) > MAX_TEXT:
            raise BadRequestError(f"'grounds' must be the written appeal (1 to {MAX_TEXT} characters)", article=LODGING)
        deposit = body.get("deposit")
        if not isinstance(deposit, dict):
            raise BadRequestError("'deposit' must be {amount, currency}: a deposit is paid with the appeal (22.1)",
                                  article=DEPOSIT)  # fmt: skip
        raw, currency = deposit.get("amount"), deposit.get("currency")
        try:
            if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
                raise InvalidOperation
            amount = Decimal(str(raw))
        except InvalidOperation:
            amount = Decimal(0)
        if not amount.is_finite() or amount <= 0 or len(_amount_text(amount)) > 24:
            raise BadRequestError("'deposit.amount' must be a positive amount, such as 500 or \"200.50\"",
                                  article=DEPOSIT)  # fmt: skip
        if not isinstance(currency, str) or not re.fullmatch(r"[A-Z]{3}", currency):
            raise BadRequestError("'deposit.currency' must be an ISO 4217 code, such as CNY", article=DEPOSIT)
        late = body.get("late_accepted")
        if late is not None and (not isinstance(late, str) or not late.strip() or len(late) > MAX_TEXT):
            raise BadRequestError("'late_accepted' must say why an appeal after the deadline is accepted (14.9: a "
                                  "delay caused by the organiser)", article=TIME_LIMIT)  # fmt: skip
        return cls(game, incident, name.strip(), capacity, team.strip(), grounds.strip(), amount, currency,
                   late.strip() if late else None)  # fmt: skip


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _require_committee(who: Identity, what: str) -> None:
    if who.role is not Role.APPEALS_COMMITTEE:
        raise ForbiddenError(
            f"{what} is for the appeals committee (role appeals-committee), not the {who.role.value} (22.2)",
            article=COMMITTEE,
        )


def _require_lawful_size(members: int) -> None:
    """22.2: the committee has an odd number of members, at least 3 (so that a majority always exists)."""
    if members < 3 or members % 2 == 0:
        raise ConflictError(
            f"the appeals committee has {members} member(s): it must have an odd number of members, at least 3, "
            "before it rules (22.2)", article=COMMITTEE,
        )  # fmt: skip


def _committee_size(connection: Connection) -> int:
    return int(
        connection.execute(
            select(func.count()).select_from(Arbiter).where(col(Arbiter.role) == Role.APPEALS_COMMITTEE.value)
        ).scalar_one()
    )


@dataclass(frozen=True, slots=True)
class TimeLimit:
    """The appeal deadline of a game's round (14.9): the round's end and the minutes the event allows after it."""

    round_no: int
    ended_ms: int
    minutes: float
    zone: str

    @property
    def due_ms(self) -> int:
        return self.ended_ms + round(self.minutes * 60_000)


def time_limit(service: Service, connection: Connection, game: int | None) -> TimeLimit | None:
    """The deadline for appeals on ``game``: none without an event deadline (``appeal_deadline_minutes``), for a game
    in no round, or while a game of its round is still being played (the round has not ended)."""
    if game is None:
        return None
    placed = connection.execute(
        select(col(Pairing.section_id), col(Pairing.round_no), col(Tournament.config))
        .join(Game, col(Game.pairing_id) == col(Pairing.id))
        .join(Section, col(Section.id) == col(Pairing.section_id))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(Game.id) == game)
    ).first()  # fmt: skip
    if placed is None:
        return None
    event = (placed.config or {}).get("event") or {}
    minutes = event.get("appeal_deadline_minutes")
    if not isinstance(minutes, (int, float)) or isinstance(minutes, bool):
        return None
    games = connection.execute(
        select(col(Game.id)).join(Pairing, col(Game.pairing_id) == col(Pairing.id))
        .where(col(Pairing.section_id) == placed.section_id, col(Pairing.round_no) == placed.round_no)
    ).scalars().all()  # fmt: skip
    ends = []
    for game_id in games:
        live = service.games.get(game_id) if game_id is not None else None
        if live is None or live.state.outcome is None:
            return None  # a game of the round is still on
        outcome = live.state.outcome
        ends.append(outcome.at if outcome.at is not None else live.state.now)
    return TimeLimit(placed.round_no, max(ends), float(minutes), config_zone(placed.config))


def _check_time_limit(
    service: Service, connection: Connection, who: Identity, game: int | None, request: AppealRequest, at: int
) -> dict[str, Any] | None:
    """Refuse an appeal past its round's deadline (14.9) unless the chief or a deputy accepts it late, saying why; what
    the audit keeps of a late acceptance."""
    limit = time_limit(service, connection, game)
    if limit is None or at <= limit.due_ms:
        return None
    ended = f"{local_time(limit.ended_ms, limit.zone)} {limit.zone}"
    if request.late_accepted is None:
        raise ConflictError(
            f"the appeal comes after the deadline: round {limit.round_no} ended at {ended} and the event allows "
            f"{limit.minutes:g} minutes after it (14.9); the chief arbiter or a deputy may accept it late with "
            "'late_accepted': why (a delay caused by the organiser)",
            article=TIME_LIMIT, deadline_ms=limit.due_ms,
        )  # fmt: skip
    if who.role not in (Role.CHIEF, Role.DEPUTY_CHIEF):
        raise ForbiddenError(
            f"accepting an appeal after the deadline is for the chief arbiter or a deputy, not the {who.role.value} "
            "(14.9)", article=TIME_LIMIT,
        )  # fmt: skip
    return {"deadline_ms": limit.due_ms, "article": TIME_LIMIT, "reason_sha256": _sha256(request.late_accepted)}


# --- Writes (on the writer) -----------------------------------------------------------------------------------------


def file_appeal(
    service: Service, connection: Connection, batch: Batch, who: Identity, request: AppealRequest, at: int
) -> dict[str, Any]:
    """Record a written appeal (22.1); 404 for an unknown game or incident, 400 when they do not match, 403 when its
    game or player is outside the recording arbiter's assignment (16)."""
    game, player = request.game, None
    if request.incident is not None:
        row = connection.execute(
            select(col(Incident.game_id), col(Incident.player_ref)).where(col(Incident.id) == request.incident)
        ).first()
        if row is None:
            raise NotFoundError(f"no incident {request.incident}")
        if game is not None and row.game_id != game:
            raise BadRequestError(f"incident {request.incident} is not about game {game}")
        game, player = row.game_id, row.player_ref
    if game is not None and connection.execute(select(col(Game.id)).where(col(Game.id) == game)).first() is None:
        raise NotFoundError(f"no game {game}")
    what = (
        f"the appeal on incident {request.incident}" if request.incident is not None else f"the appeal on game {game}"
    )
    if player is not None:  # within the recording arbiter's assignment, like their other changes (16)
        require_assigned_to_player(connection, who, player, game, what)
    else:
        require_assigned_to_game(connection, who, game, what)
    late = _check_time_limit(service, connection, who, game, request, at)
    appeal_id = connection.execute(
        insert(Appeal).values(
            game_id=game, incident_id=request.incident, filed_by=request.filed_by, capacity=request.capacity,
            team=request.team, grounds=request.grounds, deposit_amount=_amount_text(request.amount),
            deposit_currency=request.currency, recorded_by=who.name, recorded_role=who.role.value, created_ms=at,
        ).returning(col(Appeal.id))
    ).scalar_one()  # fmt: skip
    assert appeal_id is not None
    service.seal(connection, batch, "appeal", appeal_id)
    service.audit(connection, batch, at, who.label, "appeal.filed", f"appeal:{appeal_id}", {
        "article": LODGING, "game": game, "incident": request.incident, "capacity": request.capacity,
        "deposit": {"amount": _amount_text(request.amount), "currency": request.currency},
        "filed_by_sha256": _sha256(request.filed_by), "grounds_sha256": _sha256(request.grounds), "late": late,
    })  # fmt: skip
    batch.notices.append(Notice("appeal", {"id": appeal_id, "game": game, "status": "open"}))
    return read_appeal(connection, appeal_id)


def vote(
    service: Service, connection: Connection, batch: Batch, appeal_id: int, who: Identity, choice: str, note: str,
    at: int,
) -> dict[str, Any]:  # fmt: skip
    """A committee member's vote (22.2: each member one vote, once); refused once the appeal is decided."""
    _require_committee(who, "voting on an appeal")
    _require_lawful_size(_committee_size(connection))
    if choice not in VOTES:
        raise BadRequestError("'vote' must be uphold or reject", article=COMMITTEE)
    appeal = read_appeal(connection, appeal_id)
    if appeal["decision"] is not None:
        raise ConflictError(f"appeal {appeal_id} is already decided: the committee's decision is final (22.2)",
                            article=COMMITTEE)  # fmt: skip
    if any(v["member"] == who.name for v in appeal["votes"]):
        raise ConflictError(f"{who.name} has already voted on appeal {appeal_id}: each member has one vote (22.2)",
                            article=COMMITTEE)  # fmt: skip
    vote_id = connection.execute(
        insert(AppealVote).values(appeal_id=appeal_id, member=who.name, vote=choice, note=note, created_ms=at)
        .returning(col(AppealVote.id))
    ).scalar_one()  # fmt: skip
    assert vote_id is not None
    service.seal(connection, batch, "appeal_vote", vote_id)
    service.audit(connection, batch, at, who.label, "appeal.vote", f"appeal:{appeal_id}",
                  {"article": COMMITTEE, "vote": choice, "vote_id": vote_id, "note_sha256": _sha256(note)})  # fmt: skip
    batch.notices.append(Notice("appeal", {"id": appeal_id, "game": appeal["game"], "status": "open"}))
    return read_appeal(connection, appeal_id)


def decide(
    service: Service, connection: Connection, batch: Batch, appeal_id: int, who: Identity, reasonable_basis: bool,
    note: str, at: int,
) -> dict[str, Any]:  # fmt: skip
    """The committee's decision by majority (22.2), and the deposit's outcome (22.1, 22.2)."""
    _require_committee(who, "deciding an appeal")
    appeal = read_appeal(connection, appeal_id)
    if appeal["decision"] is not None:
        raise ConflictError(f"appeal {appeal_id} is already decided: the committee's decision is final (22.2)",
                            article=COMMITTEE)  # fmt: skip
    members = _committee_size(connection)
    _require_lawful_size(members)
    votes = [v["vote"] for v in appeal["votes"]]
    outcome = majority(votes, members)
    if outcome == "upheld" and reasonable_basis:
        raise BadRequestError("'reasonable_basis' is for an appeal that fails (half of the deposit returned); this "
                              "one succeeds and its deposit is returned in full", article=DEPOSIT)  # fmt: skip
    fate, returned = deposit_outcome(outcome, Decimal(appeal["deposit"]["amount"]), reasonable_basis)
    decision_id = connection.execute(
        insert(AppealDecision).values(
            appeal_id=appeal_id, outcome=outcome, uphold=votes.count("uphold"), reject=votes.count("reject"),
            committee=members, deposit_outcome=fate, deposit_returned=_amount_text(returned), decided_by=who.name,
            decided_role=who.role.value, note=note, created_ms=at,
        ).returning(col(AppealDecision.id))
    ).scalar_one()  # fmt: skip
    assert decision_id is not None
    service.seal(connection, batch, "appeal_decision", decision_id)
    service.audit(connection, batch, at, who.label, "appeal.decided", f"appeal:{appeal_id}", {
        "article": COMMITTEE, "outcome": outcome, "uphold": votes.count("uphold"), "reject": votes.count("reject"),
        "committee": members, "deposit": {"outcome": fate, "returned": _amount_text(returned), "article": DEPOSIT},
        "note_sha256": _sha256(note),
    })  # fmt: skip
    batch.notices.append(Notice("appeal", {"id": appeal_id, "game": appeal["game"], "status": outcome}))
    return read_appeal(connection, appeal_id)


# --- Reads ----------------------------------------------------------------------------------------------------------


def _views(connection: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    ids = [row.id for row in rows]
    votes: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    decisions: dict[int, Any] = {}
    if ids:
        for v in connection.execute(
            select(AppealVote).where(col(AppealVote.appeal_id).in_(ids)).order_by(col(AppealVote.id))
        ):
            votes[v.appeal_id].append({"member": v.member, "vote": v.vote, "note": v.note, "at": v.created_ms})
        for decision in connection.execute(select(AppealDecision).where(col(AppealDecision.appeal_id).in_(ids))):
            decisions[decision.appeal_id] = decision
    views = []
    for row in rows:
        d: Any = decisions.get(row.id)
        cast = [v["vote"] for v in votes[row.id]]
        views.append({
            "id": row.id, "article": "22", "game": row.game_id, "incident": row.incident_id,
            "filed_by": {"name": row.filed_by, "capacity": row.capacity, "team": row.team},
            "grounds": row.grounds,
            "deposit": {
                "amount": row.deposit_amount, "currency": row.deposit_currency, "article": DEPOSIT,
                "outcome": None if d is None else d.deposit_outcome,
                "returned": None if d is None else d.deposit_returned,
            },
            "recorded_by": {"name": row.recorded_by, "role": row.recorded_role, "article": LODGING},
            "at": row.created_ms,
            "votes": votes[row.id],
            "tally": {"uphold": cast.count("uphold"), "reject": cast.count("reject")},
            "status": "open" if d is None else d.outcome,
            "decision": None if d is None else {
                "outcome": d.outcome, "uphold": d.uphold, "reject": d.reject, "committee": d.committee,
                "by": d.decided_by, "role": d.decided_role, "note": d.note, "at": d.created_ms,
                "article": COMMITTEE,
            },
        })  # fmt: skip
    return views


def read_appeal(connection: Connection, appeal_id: int) -> dict[str, Any]:
    row = connection.execute(select(Appeal).where(col(Appeal.id) == appeal_id)).first()
    if row is None:
        raise NotFoundError(f"no appeal {appeal_id}")
    return _views(connection, [row])[0]


def list_appeals(connection: Connection, game: int | None = None, status: str | None = None) -> list[dict[str, Any]]:
    """Appeals, oldest first; ``status`` is open, upheld or rejected."""
    query = select(Appeal).order_by(col(Appeal.id))
    if game is not None:
        query = query.where(col(Appeal.game_id) == game)
    views = _views(connection, connection.execute(query).all())
    return [view for view in views if status is None or view["status"] == status]
