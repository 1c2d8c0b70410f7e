"""Incidents: raised by the feed's checks, the rules, the cameras, a player or an arbiter, and the arbiters' actions
on them (confirm, dismiss, note, a penalty for their game, evidence that came later), each audited."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from engine import adjudication as adj
from proctor import penalty_preview
from proctor.accounts import Identity
from proctor.assignments import require_assigned_to_game, require_assigned_to_player
from proctor.audit import AuditChain
from proctor.casebook import Casebook
from proctor.cases import VERDICT_KIND, verdict_facts
from proctor.errors import BadRequestError, NotFoundError
from proctor.game_actions import GameActions, game_action_event
from proctor.game_views import result_json
from proctor.live_games import LiveGame, LiveGames
from proctor.models import Incident
from proctor.server_words import IncidentFacts, incident_words
from proctor.staging import Batch, Notice, Staging, table_of
from proctor.wall_clock import now_ms


class Incidents:
    def __init__(
        self, staging: Staging, audit_chain: AuditChain, live: LiveGames, game_actions: GameActions, casebook: Casebook
    ) -> None:
        self.staging = staging
        self.audit_chain = audit_chain
        self.live = live
        self.game_actions = game_actions
        self.casebook = casebook
        live.observers.append(self._on_game_event)

    def _on_game_event(self, batch: Batch, before: LiveGame, event: adj.Event, after: LiveGame) -> None:
        """A time verdict that now waits for the arbiter (``confirm_time_verdicts``) is an incident, so a case at the
        top of the desk's queue, with its facts."""
        pending = after.state.pending_verdict
        if pending is None or before.state.pending_verdict is not None:
            return
        entries = [e for e in after.state.log[len(before.state.log) :] if e.kind == "verdict-pending"]
        summary = entries[-1].text if entries else f"a verdict awaits the arbiter: {pending.termination.value}"
        facts = verdict_facts(after.state, after.refs)
        self.incident(batch, after, VERDICT_KIND, summary, source="rules", article=pending.article,
                      evidence={"verdict": facts}, at=facts["at"])  # fmt: skip

    def incident(
        self,
        batch: Batch,
        game: LiveGame | None,
        kind: str,
        summary: str,
        *,
        source: str,
        article: str | None = None,
        evidence: dict[str, Any] | None = None,
        player_ref: str | None = None,
        at: int | None = None,
        confidence: float | None = None,
    ) -> int:
        """Stage an incident (and its audit entry and notice); its id."""
        at = at if at is not None else now_ms()
        incident_id = self.staging.allocate(batch, "incident")
        row = {
            "id": incident_id, "game_id": game.id if game else None, "player_ref": player_ref, "kind": kind,
            "source": source, "article": article, "confidence": confidence, "summary": summary,
            "evidence": evidence or {}, "created_ms": at,
        }  # fmt: skip
        self.staging.stage(batch, "incident", row)
        self.audit_chain.append(
            batch,
            at,
            source,
            "incident.raised",
            f"incident:{incident_id}",
            {
                "kind": kind,
                "game": game.id if game else None,
                "article": article,
                "media_sha256": (evidence or {}).get("sha256"),
            },
        )
        case_id = self.casebook.occurred(batch, row)
        batch.notices.append(
            Notice(
                "incident",
                {
                    "id": incident_id,
                    "game": game.id if game else None,
                    "kind": kind,
                    "article": article,
                    "summary": summary,
                    "summary_words": incident_words(
                        IncidentFacts(kind, source, summary, article, evidence or {}, player_ref)
                    ),
                    "case": case_id,
                },
            )
        )
        return incident_id

    def raise_incident(
        self, connection: Connection, batch: Batch, game_id: int | None, kind: str, summary: str, *, source: str,
        article: str | None = None, evidence: dict[str, Any] | None = None, player_ref: str | None = None,
        at: int | None = None, confidence: float | None = None,
    ) -> int:  # fmt: skip
        game = None
        if game_id is not None:
            if not self.live.knows(batch, game_id):
                raise NotFoundError(f"no game {game_id}")
            game = self.live.game(batch, game_id)
            if player_ref is not None and player_ref not in game.refs:
                raise BadRequestError(f"'player' must be one of this game's player ids: {', '.join(sorted(game.refs))}")
        return self.incident(batch, game, kind, summary, source=source, article=article, evidence=evidence,
                             player_ref=player_ref, at=at, confidence=confidence)  # fmt: skip

    def report_incident(
        self, connection: Connection, batch: Batch, who: Identity, game_id: int | None, kind: str, summary: str, *,
        article: str | None = None, player_ref: str | None = None, at: int | None = None,
    ) -> int:  # fmt: skip
        """An incident an arbiter raises: within their assignment like any change they make (16), about the game's
        board, else the player's sections; the chief and the deputy chief report everywhere."""
        if player_ref is not None:
            require_assigned_to_player(connection, who, player_ref, game_id, "the incident they report")
        else:
            require_assigned_to_game(connection, who, game_id, "the incident they report")
        return self.raise_incident(connection, batch, game_id, kind, summary, source=f"arbiter:{who.name}",
                                   article=article, player_ref=player_ref, evidence={"reported_by": who.label},
                                   at=at)  # fmt: skip

    def act_on_incident(
        self, connection: Connection, batch: Batch, incident_id: int, who: Identity, action: str, note: str,
        offence: str | None, player_ref: str | None, server_now: int, evidence_from: tuple[str, ...] = (),
    ) -> dict[str, Any]:  # fmt: skip
        """An arbiter's action on an incident: confirm, dismiss, note, or a penalty applied to its game (its evidence:
        ``evidence_from``, the incident and its media)."""
        row = connection.execute(select(table_of(Incident)).where(table_of(Incident).c.id == incident_id)).first()
        if row is None:
            raise NotFoundError(f"no incident {incident_id}")
        self._require_assigned(connection, who, row.game_id, row.player_ref, incident_id)
        if action not in ("confirm", "dismiss", "note", "penalty"):
            raise BadRequestError("'action' must be confirm, dismiss, note or penalty")
        verdict: dict[str, Any] | None = None
        if action == "penalty":
            if row.game_id is None:
                raise BadRequestError("this incident is not about a game: no penalty can follow from it")
            target = player_ref or row.player_ref
            game = self.live.game(batch, row.game_id)
            evidence = [*evidence_from, f"incident:{incident_id}", *(row.evidence or {}).get("media", [])]
            make = game_action_event(
                "penalty", {"player": target, "offence": offence, "evidence": evidence}, who, note, game.refs
            )
            before = len(game.state.penalties.penalties)
            updated = self.game_actions.apply(connection, batch, row.game_id, who, make, server_now)
            penalty = updated.state.penalties.penalties[before]
            verdict = {
                "penalty": penalty.kind.value, "offence": penalty.offence, "articles": penalty.articles,
                "reason": penalty.reason, "occurrence": penalty.occurrence, "player": target,
                "game_result": result_json(updated.state),
            }  # fmt: skip
        self.staging.stage(batch, "incident_action", {
            "id": self.staging.allocate(batch, "incident_action"), "incident_id": incident_id, "arbiter": who.name,
            "role": who.role.value, "action": action, "note": note, "verdict": verdict, "created_ms": server_now,
        })  # fmt: skip
        self.audit_chain.append(batch, server_now, who.label, f"incident.{action}", f"incident:{incident_id}",
                   {"verdict": verdict})  # fmt: skip
        if action == "note":
            self.casebook.noted(batch, incident_id, who, note, server_now)
        batch.notices.append(Notice("incident-action", {"incident": incident_id, "action": action, "verdict": verdict}))
        return {"incident": incident_id, "action": action, "verdict": verdict}

    def penalise_case(
        self, connection: Connection, batch: Batch, case_id: int, who: Identity, body: dict[str, Any], note: str,
        server_now: int,
    ) -> dict[str, Any]:  # fmt: skip
        """The penalty the ladder gives for a case (``body``: offence, player (the case's by default), ``expect`` as
        previewed, ``confirm_loss``), decided again here: refused when it is no longer what was previewed or loses
        the game unconfirmed (proctor.penalty_preview), or beyond the arbiter's authority (the engine, 16).  Recorded
        as the penalty action on the case's latest incident in its game, and the case closed as ``penalised``."""
        head = self.casebook.open_case(connection, batch, case_id, who)
        if head.game_id is None:
            raise BadRequestError(f"case {case_id} is not about a game: no penalty can follow from it")
        if not note.strip():
            raise BadRequestError("a penalty needs a 'reason'")
        game = self.live.game(batch, head.game_id)
        asked = penalty_preview.PenaltyRequest.from_body(body, game.refs, default_player=head.player_ref)
        if asked.disqualify:
            raise BadRequestError("a disqualification is the committee's, through the game's actions (15.4, 16.4)")
        confirm_loss = body.get("confirm_loss", False)
        if not isinstance(confirm_loss, bool):
            raise BadRequestError("'confirm_loss' must be true or false")
        expected = penalty_preview.Expected.from_body(body)
        state = game.state.advance(max(server_now, game.state.now))
        seen = penalty_preview.preview(state, game.id, game.refs, asked, who.role)
        penalty_preview.require_as_previewed(seen, expected, confirm_loss)
        incident_id = self.casebook.case_incident(connection, head)
        answer = self.act_on_incident(connection, batch, incident_id, who, "penalty", note, asked.offence,
                                      asked.player_ref, server_now, evidence_from=(f"case:{case_id}",))  # fmt: skip
        verdict = answer["verdict"]
        detail = {"incident": incident_id, "verdict": verdict}
        self.casebook.close(batch, head, who, "penalty", note, detail, server_now)
        return {"case": case_id, "action": "penalty", "status": "penalised", "incident": incident_id,
                "game": head.game_id, "verdict": verdict}  # fmt: skip

    @staticmethod
    def _require_assigned(
        connection: Connection, who: Identity, game_id: int | None, player_ref: str | None, incident_id: int
    ) -> None:
        """An assigned arbiter acts on the incidents of their sections' games and players only (16)."""
        if player_ref is not None:
            require_assigned_to_player(connection, who, player_ref, game_id, f"incident {incident_id}")
        else:
            require_assigned_to_game(connection, who, game_id, f"incident {incident_id}")

    def add_evidence(
        self, connection: Connection, batch: Batch, incident_id: int, who: Identity, media: str, sha256: str,
        note: str, server_now: int,
    ) -> dict[str, Any]:  # fmt: skip
        """Evidence that came after the incident was raised (a clip): an ``evidence`` action naming the file, with
        its SHA-256 in the audit log."""
        incidents = table_of(Incident)
        row = connection.execute(
            select(incidents.c.game_id, incidents.c.player_ref).where(incidents.c.id == incident_id)
        ).first()
        if row is None:
            raise NotFoundError(f"no incident {incident_id}")
        self._require_assigned(connection, who, row.game_id, row.player_ref, incident_id)
        detail = {"evidence": {"media": [media], "sha256": sha256}}
        self.staging.stage(batch, "incident_action", {
            "id": self.staging.allocate(batch, "incident_action"), "incident_id": incident_id, "arbiter": who.name,
            "role": who.role.value, "action": "evidence", "note": note, "verdict": detail, "created_ms": server_now,
        })  # fmt: skip
        self.audit_chain.append(batch, server_now, who.label, "incident.evidence", f"incident:{incident_id}",
                   {"media_sha256": sha256})  # fmt: skip
        batch.notices.append(Notice("incident-action", {"incident": incident_id, "action": "evidence"}))
        return {"incident": incident_id, "action": "evidence"}
