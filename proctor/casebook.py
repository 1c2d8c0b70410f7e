"""The casebook: incidents grouped into cases as they are raised, the arbiters' actions on cases, and the
escalations (proctor.cases has the rules).  Runs on the writer thread; every row it writes is append-only and audited
(``case.opened``, ``case.occurrence``, ``case.dismiss``, ``case.confirm``, ``case.overrule``, ``case.decide``,
``case.escalate``, ``case.penalty``, ``case.grant-leave``, ``case.refuse``), and each change is a ``case`` notice on
the live stream."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import Connection, select
from sqlmodel import col

from engine import adjudication as adj
from engine.openings import Player
from engine.penalties import Role
from proctor.accounts import Identity
from proctor.assignments import require_assigned_to_game, require_assigned_to_player
from proctor.audit import AuditChain
from proctor.cases import (
    ESCALATE,
    LEAVE_KIND,
    RESOLUTIONS,
    VERDICT_KIND,
    CaseHead,
    case_key,
    ended_after_ms,
    steps_crossed,
)
from proctor.errors import BadRequestError, ConflictError, NotFoundError
from proctor.models import Case, CaseAction, CaseOccurrence, Game, Incident, IncidentAction, Pairing, Section
from proctor.models import Player as PlayerRow
from proctor.server_words import event_words
from proctor.staging import Batch, Notice, Staging

if TYPE_CHECKING:
    from proctor.game_actions import GameActions
    from proctor.live_games import LiveGame, LiveGames

CONFIRMATION_DEADLINE_KEY: Final = "verdict_confirmation_deadline_s"
"""The section policy key (docs/events.md): how long a pending verdict may wait before it escalates to the chief."""
CONFIRMATION_STEP: Final = "confirmation-deadline"
SERVICE: Final = Identity("service", Role.ARBITER)
MAX_BULK: Final = 500


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Casebook:
    """The cases as committed (their heads: proctor.cases.CaseHead), and their changes staged."""

    def __init__(self, staging: Staging, audit_chain: AuditChain, live: LiveGames) -> None:
        self.staging = staging
        self.audit_chain = audit_chain
        self.live = live
        self.game_actions: GameActions | None = None
        self.heads: dict[int, CaseHead] = {}
        self.latest: dict[str, int] = {}
        """Key → the key's latest case."""
        self.by_incident: dict[int, int] = {}
        self.waiting: set[int] = set()
        """The pending verdicts' cases still open and not escalated (committed)."""
        self.deadlines: dict[int, int | None] = {}
        """A pending verdict's case → when it escalates (None: its section sets no deadline); filled on the writer."""
        live.observers.append(self._on_game_event)

    # --- Memory --------------------------------------------------------------------------------------------------

    def load(self, connection: Connection) -> None:
        """Every case's head, folded from its rows."""
        cases = connection.execute(select(Case).order_by(col(Case.id))).all()
        counts: dict[int, int] = {}
        games: dict[int, int] = {}
        for case_id, incident_id, game_id in connection.execute(
            select(col(CaseOccurrence.case_id), col(CaseOccurrence.incident_id), col(Incident.game_id))
            .join(Incident, col(Incident.id) == col(CaseOccurrence.incident_id))
            .order_by(col(CaseOccurrence.id))
        ):
            counts[case_id] = counts.get(case_id, 0) + 1
            if game_id is not None:
                games[case_id] = game_id
            self.by_incident[incident_id] = case_id
        totals: dict[int, int] = {}
        for incident_id, arbiter, note in connection.execute(
            select(col(IncidentAction.incident_id), col(IncidentAction.arbiter), col(IncidentAction.note)).where(
                col(IncidentAction.action) == "note"
            )
        ):
            duration = ended_after_ms(arbiter, note)
            noted = self.by_incident.get(incident_id)
            if duration is not None and noted is not None:
                totals[noted] = totals.get(noted, 0) + duration
        statuses: dict[int, str] = {}
        escalated: dict[int, set[str]] = {}
        for acted_on, action, detail in connection.execute(
            select(col(CaseAction.case_id), col(CaseAction.action), col(CaseAction.detail)).order_by(col(CaseAction.id))
        ):
            if action in RESOLUTIONS:
                statuses[acted_on] = RESOLUTIONS[action]
            elif action == ESCALATE:
                escalated.setdefault(acted_on, set()).add(str((detail or {}).get("step", "")))
        for row in cases:
            self.heads[row.id] = CaseHead(
                row.id, row.key, row.kind, games.get(row.id, row.game_id), row.created_ms, counts.get(row.id, 0),
                totals.get(row.id, 0), statuses.get(row.id, "open"), frozenset(escalated.get(row.id, ())),
            )  # fmt: skip
            self.latest[row.key] = row.id
            self._track(self.heads[row.id])

    def _track(self, head: CaseHead) -> None:
        if head.is_verdict and head.is_open and CONFIRMATION_STEP not in head.escalated:
            self.waiting.add(head.id)
        else:
            self.waiting.discard(head.id)

    def head(self, batch: Batch, case_id: int) -> CaseHead:
        head = batch.cases.get(case_id) or self.heads.get(case_id)
        if head is None:
            raise NotFoundError(f"no case {case_id}")
        return head

    def _latest(self, batch: Batch, key: str) -> CaseHead | None:
        case_id = batch.case_keys.get(key, self.latest.get(key))
        return None if case_id is None else self.head(batch, case_id)

    def commit(self, batch: Batch) -> None:
        for head in batch.cases.values():
            self.heads[head.id] = head
            self._track(head)
        self.latest.update(batch.case_keys)
        self.by_incident.update(batch.case_incidents)

    # --- Occurrences ---------------------------------------------------------------------------------------------

    def occurred(self, batch: Batch, incident: dict[str, Any]) -> int:
        """A staged incident joins the open case of its key, or opens one (which follows the key's resolved case);
        the case's id."""
        incident_id, kind, at = incident["id"], incident["kind"], incident["created_ms"]
        key = case_key(kind, incident["game_id"], incident["player_ref"], incident_id,
                       (incident.get("evidence") or {}).get("device"))  # fmt: skip
        previous = self._latest(batch, key)
        if previous is not None and previous.is_open:
            game_id = incident["game_id"] if incident["game_id"] is not None else previous.game_id
            head = replace(previous, occurrences=previous.occurrences + 1, game_id=game_id)
            self._stage_occurrence(batch, head, incident_id, at)
            batch.cases[head.id] = head
            self._notice(batch, head, "occurrence", alert=None)
            return head.id
        case_id = self.staging.allocate(batch, "incident_case")
        follows = previous.id if previous is not None else None
        self.staging.stage(batch, "incident_case", {
            "id": case_id, "key": key, "kind": kind, "player_ref": incident["player_ref"],
            "game_id": incident["game_id"], "follows": follows, "created_ms": at,
        })  # fmt: skip
        self.audit_chain.append(batch, at, "service", "case.opened", f"case:{case_id}",
                                {"kind": kind, "incident": incident_id, "follows": follows})  # fmt: skip
        head = CaseHead(case_id, key, kind, incident["game_id"], at)
        self._stage_occurrence(batch, head, incident_id, at, audited=False)
        batch.cases[case_id] = head
        batch.case_keys[key] = case_id
        alert = "opened" if previous is None else f"again after {previous.status}"
        self._notice(batch, head, "opened", alert=alert, follows=follows)
        return case_id

    def _stage_occurrence(self, batch: Batch, head: CaseHead, incident_id: int, at: int, audited: bool = True) -> None:
        self.staging.stage(batch, "case_occurrence", {
            "id": self.staging.allocate(batch, "case_occurrence"), "case_id": head.id, "incident_id": incident_id,
            "created_ms": at,
        })  # fmt: skip
        if audited:
            self.audit_chain.append(batch, at, "service", "case.occurrence", f"case:{head.id}",
                                    {"incident": incident_id})  # fmt: skip
        batch.case_incidents[incident_id] = head.id

    def noted(self, batch: Batch, incident_id: int, who: Identity, note: str, at: int) -> None:
        """A detector's note on an incident ("ended after 40 s") adds to its case's duration; crossing a step
        re-alerts the case (proctor.cases.DURATION_STEPS_MS)."""
        duration = ended_after_ms(who.name, note)
        case_id = batch.case_incidents.get(incident_id, self.by_incident.get(incident_id))
        if duration is None or case_id is None:
            return
        head = self.head(batch, case_id)
        if not head.is_open:
            return
        total = head.total_ms + duration
        head = replace(head, total_ms=total)
        batch.cases[head.id] = head
        for step in steps_crossed(total - duration, total):
            name = f"duration:{step}"
            if name in head.escalated:
                continue
            head = self._escalate(batch, head, at, name, {"reason": f"total duration over {step // 60_000} min",
                                                            "total_ms": total, "threshold_ms": step})  # fmt: skip

    # --- Escalations ---------------------------------------------------------------------------------------------

    def _escalate(self, batch: Batch, head: CaseHead, at: int, step: str, detail: dict[str, Any]) -> CaseHead:
        detail = {"step": step, **detail}
        self._stage_action(batch, head, SERVICE, ESCALATE, "", detail, at)
        head = replace(head, escalated=head.escalated | {step})
        batch.cases[head.id] = head
        self._notice(batch, head, "escalated", alert=str(detail["reason"]), alert_for=detail.get("for"))
        return head

    def confirmation_due(self, now: int) -> bool:
        """Whether a pending verdict's case (committed) may have passed its deadline, or has none looked up yet."""
        for case_id in list(self.waiting):
            deadline = self.deadlines.get(case_id, 0)
            if deadline is not None and deadline <= now:
                return True
        return False

    def escalate_due(self, connection: Connection, batch: Batch, now: int) -> list[int]:
        """Escalate to the chief arbiter each pending verdict past its section's confirmation deadline (nothing is
        ruled); the cases escalated."""
        escalated = []
        for case_id in sorted(self.waiting):
            head = self.head(batch, case_id)
            if not (head.is_verdict and head.is_open and CONFIRMATION_STEP not in head.escalated):
                continue
            if case_id not in self.deadlines:
                seconds = _confirmation_deadline_s(connection, head.game_id)
                self.deadlines[case_id] = None if seconds is None else head.opened_ms + round(seconds * 1000)
            deadline = self.deadlines[case_id]
            if deadline is None or deadline > now:
                continue
            self._escalate(batch, head, now, CONFIRMATION_STEP, {
                "reason": "the confirmation deadline passed: the chief arbiter decides", "for": "chief",
                "deadline_ms": deadline,
            })  # fmt: skip
            escalated.append(case_id)
        return escalated

    # --- Pending verdicts ----------------------------------------------------------------------------------------

    def _on_game_event(self, batch: Batch, before: LiveGame, event: adj.Event, after: LiveGame) -> None:
        """A pending verdict that the game no longer has closes its case, by the action that ended it."""
        if before.state.pending_verdict is None or after.state.pending_verdict is not None:
            return
        head = self._latest(batch, case_key(VERDICT_KIND, after.id, None, 0))
        if head is None or not head.is_open:
            return
        action = {adj.VerdictConfirmed: "confirm", adj.VerdictOverruled: "overrule"}.get(type(event), "decide")
        arbiter = getattr(event, "arbiter", "service") or "service"
        role = getattr(event, "role", None)
        who = Identity(arbiter, role if isinstance(role, Role) else Role.ARBITER)
        outcome = after.state.outcome
        detail: dict[str, Any] = {"result": None, "reason": None, "article": None}
        if outcome is not None:
            detail = {"result": outcome.result, "reason": outcome.termination.value, "article": outcome.article}
        self._close(batch, head, who, action, getattr(event, "reason", ""), detail, event.at)

    # --- The arbiters' actions -----------------------------------------------------------------------------------

    def act(
        self, connection: Connection, batch: Batch, case_ids: list[int], who: Identity, action: str, note: str,
        params: dict[str, Any], server_now: int,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """Dismiss or confirm cases (all or none), or confirm or overrule a pending verdict through its game's action
        (the engine checks the role: 16); refuse a leave request (with a reason); an assigned arbiter acts on the
        cases of their sections only (16).  A penalty and a leave granted have their own ways (proctor.incidents,
        proctor.camera), which close the case with :meth:`close`."""
        if action not in ("dismiss", "confirm", "overrule", "refuse"):
            raise BadRequestError(
                "'action' must be dismiss, confirm, overrule or refuse (penalty and grant-leave: one case at a time, "
                "POST /api/v1/cases/{case}/actions)"
            )
        if action in ("dismiss", "refuse") and not note.strip():
            raise BadRequestError(f"{'a dismissal' if action == 'dismiss' else 'a refusal'} needs a 'reason'")
        if not case_ids or len(case_ids) > MAX_BULK or len(set(case_ids)) != len(case_ids):
            raise BadRequestError(f"'cases' must be 1 to {MAX_BULK} different case ids")
        answers = []
        for case_id in case_ids:
            head = self.head(batch, case_id)
            self._require_assigned(connection, who, head)
            if not head.is_open:
                raise ConflictError(f"case {case_id} is already {head.status}", case=case_id)
            if head.is_verdict:
                answers.append(self._act_on_verdict(connection, batch, head, who, action, note, params, server_now))
                continue
            if action == "overrule":
                raise BadRequestError(f"case {case_id} is no pending verdict: only a verdict is overruled")
            if action == "refuse" and head.kind != LEAVE_KIND:
                raise BadRequestError(f"case {case_id} is no leave request: only a request is refused")
            self._close(batch, head, who, action, note, {}, server_now)
            answers.append({"case": case_id, "action": action, "status": RESOLUTIONS[action]})
        return answers

    def _act_on_verdict(
        self, connection: Connection, batch: Batch, head: CaseHead, who: Identity, action: str, note: str,
        params: dict[str, Any], server_now: int,
    ) -> dict[str, Any]:  # fmt: skip
        from proctor.game_actions import game_action_event  # noqa: PLC0415 (game_actions imports the live games)

        if action == "dismiss":
            raise BadRequestError(f"case {head.id} is a pending verdict: confirm or overrule it (37.7, 14.3)")
        assert self.game_actions is not None and head.game_id is not None
        game = self.live.game(batch, head.game_id)
        game_action = "confirm-verdict" if action == "confirm" else "overrule"
        make = game_action_event(game_action, params, who, note, game.refs)
        updated = self.game_actions.apply(connection, batch, head.game_id, who, make, server_now)
        closed = self.head(batch, head.id)
        # What changed, in both languages (proctor.server_words): the verdict confirmed or set aside, and the time
        # given; the players by the event's list of names, else the platform's.
        row = connection.execute(
            select(col(Game.black_name), col(Game.white_name)).where(col(Game.id) == head.game_id)
        ).first()
        listed = {ref: name for ref, name in connection.execute(
            select(col(PlayerRow.platform_ref), col(PlayerRow.name)).where(col(PlayerRow.platform_ref).in_(game.refs))
        )}  # fmt: skip
        platform = {Player.FIRST: (row[0] if row else "") or "", Player.SECOND: (row[1] if row else "") or ""}
        names = {seat: listed.get(ref) or platform[seat] for ref, seat in game.refs.items()}
        said = event_words(game.state, updated.state, params, names, by=who.name)
        return {"case": head.id, "action": action, "status": closed.status, "game": head.game_id, "said": said}

    def open_case(
        self, connection: Connection, batch: Batch, case_id: int, who: Identity, kind: str | None = None
    ) -> CaseHead:
        """A case an arbiter acts on: known (404), within their assignment (403), still open (409), of ``kind`` when
        given (400), and no pending verdict (those are confirmed or overruled)."""
        head = self.head(batch, case_id)
        self._require_assigned(connection, who, head)
        if not head.is_open:
            raise ConflictError(f"case {case_id} is already {head.status}", case=case_id)
        if head.is_verdict:
            raise BadRequestError(f"case {case_id} is a pending verdict: confirm or overrule it (37.7, 14.3)")
        if kind is not None and head.kind != kind:
            raise BadRequestError(f"case {case_id} is no {kind}")
        return head

    def case_incident(self, connection: Connection, head: CaseHead) -> int:
        """The case's latest occurrence about its game (else its latest): the incident an answer is recorded on."""
        rows = connection.execute(
            select(col(CaseOccurrence.incident_id), col(Incident.game_id))
            .join(Incident, col(Incident.id) == col(CaseOccurrence.incident_id))
            .where(col(CaseOccurrence.case_id) == head.id)
            .order_by(col(CaseOccurrence.id).desc())
        ).all()
        if not rows:
            raise ConflictError(f"case {head.id} has no stored occurrence yet: try again", case=head.id)
        same_game = [row for row in rows if head.game_id is not None and row[1] == head.game_id]
        return int((same_game or rows)[0][0])

    def close(
        self, batch: Batch, head: CaseHead, who: Identity, action: str, note: str, detail: dict[str, Any], at: int
    ) -> None:
        """Close a case by an action of :data:`proctor.cases.RESOLUTIONS` (audited, append-only)."""
        self._close(batch, head, who, action, note, detail, at)

    def _close(
        self, batch: Batch, head: CaseHead, who: Identity, action: str, note: str, detail: dict[str, Any], at: int
    ) -> None:
        self._stage_action(batch, head, who, action, note, detail, at)
        head = replace(head, status=RESOLUTIONS[action])
        batch.cases[head.id] = head
        self._notice(batch, head, action, alert=None)

    def _stage_action(
        self, batch: Batch, head: CaseHead, who: Identity, action: str, note: str, detail: dict[str, Any], at: int
    ) -> None:
        action_id = self.staging.allocate(batch, "case_action")
        self.staging.stage(batch, "case_action", {
            "id": action_id, "case_id": head.id, "arbiter": who.name, "role": who.role.value, "action": action,
            "note": note, "detail": detail, "created_ms": at,
        })  # fmt: skip
        self.audit_chain.append(batch, at, who.label, f"case.{action}", f"case:{head.id}",
                                {"action": action_id, "note_sha256": _sha256(note)})  # fmt: skip

    def _require_assigned(self, connection: Connection, who: Identity, head: CaseHead) -> None:
        """The case's player (their current game, else their sections), else its game (16)."""
        player = head.key.removeprefix("player:").rsplit("/", 1)[0] if head.key.startswith("player:") else None
        if player is not None:
            require_assigned_to_player(connection, who, player, head.game_id, f"case {head.id}")
        else:
            require_assigned_to_game(connection, who, head.game_id, f"case {head.id}")

    @staticmethod
    def _notice(
        batch: Batch, head: CaseHead, change: str, *, alert: str | None, alert_for: str | None = None,
        follows: int | None = None,
    ) -> None:  # fmt: skip
        batch.notices.append(Notice("case", {
            "id": head.id, "kind": head.kind, "change": change, "status": head.status, "game": head.game_id,
            "occurrences": head.occurrences, "total_ms": head.total_ms, "alert": alert is not None,
            "alert_reason": alert, "alert_for": alert_for, "follows": follows,
        }))  # fmt: skip


def _confirmation_deadline_s(connection: Connection, game_id: int | None) -> float | None:
    """The confirmation deadline of the game's section (None: none set, or a game in no section)."""
    if game_id is None:
        return None
    policy = connection.execute(
        select(col(Section.policy))
        .select_from(Game)
        .join(Pairing, col(Pairing.id) == col(Game.pairing_id))
        .join(Section, col(Section.id) == col(Pairing.section_id))
        .where(col(Game.id) == game_id)
    ).scalar()
    value = (policy or {}).get(CONFIRMATION_DEADLINE_KEY)
    return None if value is None else float(value)
