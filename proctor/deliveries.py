"""The feed's deliveries: each signed webhook from a platform stored, checked against what was received before (the
same webhook-id, the same seq with the same or another body), held while an earlier seq is missing, and applied to
its game in order; game.created makes the game (linked to its pairing), game.ended and the platform's clock readings
are compared with the service's own.  Checks come first (raising changes nothing), then the writes are staged."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection, func, select
from sqlmodel import col

from engine.adjudication import (
    Adjudication,
    AdjudicationError,
    AdjudicationSettings,
    BothDisconnected,
    settings_to_dict,
)
from engine.errors import EngineError
from engine.game import AdjudicationMode, GameSettings
from engine.openings import Player
from engine.penalties import Ladder, PenaltyPolicy
from proctor import feed, revisions
from proctor.audit import AuditChain
from proctor.errors import BadRequestError, ConflictError, NotFoundError, OverloadedError, UnauthorizedError
from proctor.incidents import Incidents
from proctor.live_games import Held, LiveGame, LiveGames
from proctor.models import Platform, PlatformSecret
from proctor.pairing_links import find_pairing
from proctor.seen import SeenFilter
from proctor.server_words import outcome_facts
from proctor.settings import Settings
from proctor.staging import FEED_TABLE, Batch, Notice, RawJson, Staging


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    status: str
    """applied, held, duplicate, created, refused (the rules refused it: an incident says why) or recorded."""
    game_id: int
    incidents: tuple[int, ...] = ()
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": self.status, "game": self.game_id}
        if self.incidents:
            body["incidents"] = list(self.incidents)
        if self.detail:
            body["detail"] = self.detail
        return body


class Deliveries:
    """The platforms with their secrets, the webhook-ids received (a filter over the stored ones), and each
    delivery's way to its game."""

    def __init__(
        self, settings: Settings, staging: Staging, audit_chain: AuditChain, live: LiveGames, incidents: Incidents
    ) -> None:
        self.settings = settings
        self.staging = staging
        self.audit_chain = audit_chain
        self.live = live
        self.incidents = incidents
        self.platforms: dict[str, tuple[int, tuple[str, ...]]] = {}
        self.seen = SeenFilter()

    def load(self, connection: Connection) -> None:
        """The platforms, and every webhook-id received."""
        self.reload_platforms(connection)
        received = connection.execute(select(func.count()).select_from(FEED_TABLE)).scalar_one()
        self.seen = SeenFilter(expected=max(1_000_000, 4 * received))
        for platform_id, webhook_id in connection.execute(select(FEED_TABLE.c.platform_id, FEED_TABLE.c.webhook_id)):
            self.seen.add(f"{platform_id}:{webhook_id}")

    def commit(self, batch: Batch) -> None:
        """Remember a committed batch's webhook-ids."""
        for platform_id, webhook_id in batch.webhooks:
            self.seen.add(f"{platform_id}:{webhook_id}")

    def reload_platforms(self, connection: Connection) -> None:
        platforms = {row.id: row.name for row in connection.execute(select(col(Platform.id), col(Platform.name)))}
        secrets: dict[int, list[str]] = {pid: [] for pid in platforms}
        for row in connection.execute(
            select(col(PlatformSecret.platform_id), col(PlatformSecret.secret)).where(
                col(PlatformSecret.revoked_ms).is_(None)
            )
        ):
            secrets[row.platform_id].append(row.secret)
        self.platforms = {name: (pid, tuple(secrets[pid])) for pid, name in platforms.items()}

    def check_secret(self, connection: Connection, platform_id: int, secret: str) -> None:
        """Refuse a delivery signed with a secret revoked since it was loaded (``proctor platform revoke``, from any
        process): its row is read again in the transaction that would store the delivery (one indexed read), and
        the platforms are read again so that the revocation is seen by the next request's check too."""
        revoked = connection.execute(
            select(col(PlatformSecret.revoked_ms)).where(
                col(PlatformSecret.platform_id) == platform_id, col(PlatformSecret.secret) == secret
            )
        ).first()
        if revoked is None or revoked[0] is not None:
            self.reload_platforms(connection)
            raise UnauthorizedError("the secret that signed this delivery was revoked (proctor platform revoke)")

    def platform(self, name: str) -> tuple[int, tuple[str, ...]]:
        try:
            return self.platforms[name]
        except KeyError:
            raise NotFoundError(f"unknown platform {name!r}: register it with 'proctor platform add {name}'") from None

    def check_duplicate(self, connection: Connection, batch: Batch, platform_id: int, webhook_id: str) -> int | None:
        """The game a delivery with this webhook-id went to, if it was received before (staged or stored)."""
        staged = batch.webhooks.get((platform_id, webhook_id))
        if staged is not None:
            return staged
        if not self.seen.might_contain(f"{platform_id}:{webhook_id}"):
            return None
        row = connection.execute(
            select(FEED_TABLE.c.game_id).where(
                FEED_TABLE.c.platform_id == platform_id, FEED_TABLE.c.webhook_id == webhook_id
            )
        ).first()
        return None if row is None else int(row[0])

    def deliver(
        self,
        connection: Connection,
        batch: Batch,
        platform_id: int,
        webhook_id: str,
        message: feed.FeedMessage,
        received: int,
    ) -> DeliveryResult:
        """Store and apply one verified delivery.  Checks first (raising changes nothing), then writes."""
        known = self.check_duplicate(connection, batch, platform_id, webhook_id)
        if known is not None:
            return DeliveryResult("duplicate", known, detail="this webhook-id was already received")
        game_id = self.live.by_external.get((platform_id, message.game_id))
        if message.type == "game.created":
            return self._create(connection, batch, platform_id, webhook_id, message, received, game_id)
        if game_id is None:
            raise NotFoundError(f"unknown game {message.game_id!r}: its game.created has not been received")
        game = self.live.game(batch, game_id)
        feed.check_engine_data(message, game.refs)
        if self._is_duplicate_seq(connection, batch, game, message):
            return DeliveryResult("duplicate", game.id, detail=f"seq {message.seq} was already received")
        delivery_id = self._store_delivery(batch, platform_id, webhook_id, game.id, message, received)
        self.audit_chain.append(
            batch,
            received,
            f"platform:{platform_id}",
            "feed.received",
            f"game:{game.id}",
            {"seq": message.seq, "type": message.type, "webhook_id": webhook_id},
        )
        if message.seq != game.last_seq + 1:
            held = dict(game.held)
            held[message.seq] = Held(delivery_id, message)
            gap_since = game.gap_since_ms if game.gap_since_ms is not None else received
            batch.games[game.id] = replace(game, held=held, gap_since_ms=gap_since)
            return DeliveryResult("held", game.id, detail=f"waiting for seq {game.last_seq + 1}")
        incidents: list[int] = []
        status = self._apply_feed(connection, batch, game, delivery_id, message, incidents, received)
        game = self.live.game(batch, game_id)
        while game.last_seq + 1 in game.held:  # the gap has filled: apply what was held, in order
            held = dict(game.held)
            item = held.pop(game.last_seq + 1)
            batch.games[game.id] = replace(game, held=held)
            self._apply_feed(
                connection, batch, self.live.game(batch, game_id), item.delivery_id, item.message, incidents, received
            )
            game = self.live.game(batch, game_id)
        if not game.held and game.gap_since_ms is not None:
            batch.games[game.id] = replace(game, gap_since_ms=None, gap_reported=False)
        self.live.save(batch, self.live.game(batch, game_id), received)
        return DeliveryResult(status, game_id, tuple(incidents))

    def _is_duplicate_seq(
        self, connection: Connection, batch: Batch, game: LiveGame, message: feed.FeedMessage
    ) -> bool:
        """True for the same seq with the same body again; a conflict for the same seq with another body."""
        if message.seq <= game.last_seq or message.seq in game.held:
            body = batch.bodies.get((game.id, message.seq))
            if body is None:
                row = connection.execute(
                    select(FEED_TABLE.c.body).where(FEED_TABLE.c.game_id == game.id, FEED_TABLE.c.seq == message.seq)
                ).first()
                body = None if row is None else row[0]
            if body == message.raw:
                return True
            raise ConflictError(f"seq {message.seq} of game {message.game_id!r} was already received with another body")
        if message.seq != game.last_seq + 1 and len(game.held) >= self.settings.max_held_events:
            raise OverloadedError(
                f"{len(game.held)} events of game {message.game_id!r} are already waiting for seq {game.last_seq + 1}"
            )
        return False

    def _store_delivery(
        self,
        batch: Batch,
        platform_id: int,
        webhook_id: str,
        game_id: int,
        message: feed.FeedMessage,
        received: int,
    ) -> int:
        delivery_id = self.staging.allocate(batch, "feed_delivery")
        self.staging.stage(batch, "feed_delivery", {
            "id": delivery_id, "platform_id": platform_id, "webhook_id": webhook_id, "game_id": game_id,
            "seq": message.seq, "kind": message.type, "at_ms": message.at_ms, "received_ms": received,
            "body": RawJson(message.text) if message.text is not None else message.raw,
        })  # fmt: skip
        batch.webhooks[(platform_id, webhook_id)] = game_id
        batch.bodies[(game_id, message.seq)] = message.raw
        return delivery_id

    def _create(
        self,
        connection: Connection,
        batch: Batch,
        platform_id: int,
        webhook_id: str,
        message: feed.FeedMessage,
        received: int,
        existing: int | None,
    ) -> DeliveryResult:
        if existing is not None:
            if self._is_duplicate_seq(connection, batch, self.live.game(batch, existing), message):
                return DeliveryResult("duplicate", existing, detail="game.created was already received")
            raise ConflictError(f"game {message.game_id!r} already exists")
        if message.seq != 1:
            raise ConflictError("game.created must be seq 1")
        setup = feed.parse_setup(message)
        link = find_pairing(connection, message.game_id, setup)
        policy = link.policy if link else {}
        try:
            settings = AdjudicationSettings(
                time_control=setup.time_control,
                start_at=setup.start_at_ms,
                game=GameSettings(
                    rule=setup.rule,
                    opening=setup.opening,
                    adjudication=AdjudicationMode(policy.get("adjudication") or setup.adjudication or "automatic"),
                    max_candidates=policy.get("max_candidates"),
                ),
                lateness_tolerance_ms=round(1000 * policy.get("lateness_tolerance_s", 0)),
                reconnect_window_ms=None
                if policy.get("reconnect_window_s") is None
                else round(1000 * policy["reconnect_window_s"]),
                confirm_time_verdicts=bool(policy.get("confirm_time_verdicts", False)),
                both_disconnected=BothDisconnected(policy.get("both_disconnected") or BothDisconnected.ARBITER.value),
                penalty_policy=PenaltyPolicy({k: Ladder(v) for k, v in policy.get("penalties", {}).items()})
                if policy.get("penalties")
                else PenaltyPolicy(),
            )
            state = Adjudication.new(settings)
        except EngineError as error:
            raise BadRequestError(f"'data': {error}") from None
        game_id = self.staging.allocate(batch, "game")
        self.staging.stage(batch, "game", {
            "id": game_id, "platform_id": platform_id, "external_id": message.game_id,
            "pairing_id": link.pairing_id if link else None,
            "black_ref": setup.black_ref, "white_ref": setup.white_ref, "black_name": setup.black_name,
            "white_name": setup.white_name, "settings": settings_to_dict(settings), "last_seq": 1, "applied": 0,
            "status": "scheduled", "winner": None, "reason": None, "article": None, "snapshot": None,
            "snapshot_applied": 0, "next_deadline_ms": settings.start_at, "created_ms": received,
            "updated_ms": received,
        })  # fmt: skip
        self._store_delivery(batch, platform_id, webhook_id, game_id, message, received)
        self.audit_chain.append(
            batch,
            received,
            f"platform:{platform_id}",
            "game.created",
            f"game:{game_id}",
            {"external_id": message.game_id, "rule": setup.rule, "opening": setup.opening},
        )
        refs = {setup.black_ref: Player.FIRST, setup.white_ref: Player.SECOND}
        batch.games[game_id] = LiveGame(
            game_id, platform_id, message.game_id, refs, state, 1, 0, 0, created_ms=received
        )
        batch.notices.append(Notice("game", {"id": game_id, "external_id": message.game_id, "status": "scheduled"}))
        incidents: list[int] = []
        if link is not None:
            game = batch.games[game_id]
            for problem in link.disagreements(setup):
                incidents.append(
                    self.incidents.incident(
                        batch,
                        game,
                        "pairing-mismatch",
                        problem,
                        source="feed",
                        evidence={"pairing": link.pairing_id, "section": link.section},
                        at=received,
                    )
                )
        return DeliveryResult("created", game_id, tuple(incidents))

    def _apply_feed(
        self,
        connection: Connection,
        batch: Batch,
        game: LiveGame,
        delivery_id: int,
        message: feed.FeedMessage,
        incidents: list[int],
        received: int,
    ) -> str:
        state = game.state
        status = "applied"
        if message.type == "game.ended":
            incidents.extend(self._compare_claim(connection, batch, game, message))
            batch.games[game.id] = replace(game, last_seq=message.seq)
            return "recorded"
        if message.at_ms < state.now and (state.is_over or state.pending_verdict is not None):
            late = self._late(connection, batch, game, delivery_id, message, incidents, received)
            if late is not None:
                return late
        at = max(message.at_ms, state.now)
        event = feed.to_engine_event(message, at, game.refs)
        try:
            after = state.apply(event)
        except AdjudicationError as error:
            summary = self._refusal_summary(game, message, error)
            incidents.append(
                self.incidents.incident(
                    batch,
                    game,
                    "platform-disagreement",
                    summary,
                    source="rules",
                    article=error.article,
                    evidence={"seq": message.seq, "type": message.type, "data": message.data},
                    at=message.at_ms,
                )
            )
            batch.games[game.id] = replace(game, last_seq=message.seq)
            return "refused"
        game = self.live.record(batch, game, "feed", delivery_id, event, after)
        game = replace(game, last_seq=message.seq)
        batch.games[game.id] = game
        if message.type == "move" and "clock_ms" in message.data:
            incidents.extend(self._compare_clock(connection, batch, game, state, message))
        return status

    def _late(
        self,
        connection: Connection,
        batch: Batch,
        game: LiveGame,
        delivery_id: int,
        message: feed.FeedMessage,
        incidents: list[int],
        received: int,
    ) -> str | None:
        """A delivery stamped before the game's verdict (proctor.revisions): put in its place, or left to the
        arbiter with an incident; None when it changes nothing (it is then applied, or refused, as any other)."""
        late = feed.to_engine_event(message, message.at_ms, game.refs)
        cause = f"a late {message.type} (seq {message.seq})"
        stored = self.live.stored_events(connection, batch, game.id)
        window_ms = self.settings.late_delivery_window_s * 1000
        decided = revisions.plan(game.state, stored, late, cause, window_ms, received)
        if decided is None:
            return None
        evidence = {"seq": message.seq, "type": message.type, "stamped_ms": message.at_ms,
                    "early_ms": decided.early_ms, "withdrawn": outcome_facts(decided.verdict)}  # fmt: skip
        if isinstance(decided, revisions.LeftToArbiter):
            evidence |= {"why": decided.why, "window_ms": window_ms}
            summary = (f"a late {message.type} (seq {message.seq}) was stamped {decided.early_ms} ms before the "
                       f"verdict; not put in its place ({decided.why}): the arbiter decides")  # fmt: skip
            incidents.append(self.incidents.incident(
                batch, game, "late-delivery", summary, source="feed", article=decided.verdict.article,
                evidence=evidence, at=received,
            ))  # fmt: skip
            batch.games[game.id] = replace(game, last_seq=message.seq)
            return "refused"
        game = self.live.record(batch, game, "revision", delivery_id, decided.event, decided.after)
        batch.games[game.id] = replace(game, last_seq=message.seq)
        now = decided.after.pending_verdict or decided.after.outcome
        evidence["now"] = outcome_facts(now)
        summary = (
            f"a late {message.type} (seq {message.seq}), stamped {decided.early_ms} ms before the verdict, was "
            f"put in its place: the verdict is withdrawn" + (f"; now {now.termination.value}" if now else "")
        )
        incidents.append(self.incidents.incident(
            batch, self.live.game(batch, game.id), "verdict-revised", summary, source="feed",
            article=decided.verdict.article, evidence=evidence, at=received,
        ))  # fmt: skip
        return "revised"

    def _refusal_summary(self, game: LiveGame, message: feed.FeedMessage, error: AdjudicationError) -> str:
        if game.state.is_over:
            return f"the platform sent '{message.type}' (seq {message.seq}) after the service's verdict: {error.why}"
        return f"the platform accepted '{message.type}' (seq {message.seq}) that the rules refuse: {error.why}"

    def _compare_claim(
        self, connection: Connection, batch: Batch, game: LiveGame, message: feed.FeedMessage
    ) -> list[int]:
        claimed = message.data.get("result")
        outcome = game.state.outcome
        ours = outcome.result if outcome else None
        if outcome is not None and claimed == ours:
            return []
        summary = (
            f"the platform claims {claimed or 'no result'} ({message.data.get('reason') or 'no reason'}); the service "
            + (f"has {ours} by {outcome.termination.value} ({outcome.article})" if outcome else "has no result yet")
        )
        return [
            self.incidents.incident(
                batch,
                game,
                "result-mismatch",
                summary,
                source="rules",
                article=outcome.article if outcome else None,
                evidence={"claim": message.data, "service": ours},
                at=message.at_ms,
            )
        ]

    def _compare_clock(
        self, connection: Connection, batch: Batch, game: LiveGame, before: Adjudication, message: feed.FeedMessage
    ) -> list[int]:
        mover = before.due_player() if not before.is_over else None
        if mover is None:
            return []
        theirs = int(message.data["clock_ms"])
        ours = game.state.clock.remaining_of(mover)
        if abs(theirs - ours) <= self.settings.clock_tolerance_ms:
            return []
        summary = (
            f"after seq {message.seq} the platform shows {theirs} ms for the {mover.value} player, the service "
            f"{ours} ms ({theirs - ours:+d} ms)"
        )
        return [
            self.incidents.incident(
                batch,
                game,
                "clock-mismatch",
                summary,
                source="rules",
                article="34.1",
                evidence={"seq": message.seq, "platform_ms": theirs, "service_ms": ours},
                at=message.at_ms,
            )
        ]
