"""The service core: platforms, live games, and the rules for applying a delivery, a deadline or an arbiter's action.

Everything here runs on the writer thread (proctor.writer) inside one database transaction per batch: a change is
first *staged* (new immutable game states, rows to insert), written, and only made visible once the transaction has
committed, so that nothing is acknowledged before it is stored and a failed commit leaves memory as it was.

Effective time.  A feed event is applied at the platform's ``at`` (the moment the platform accepted it), or at the
game's current time if that is later; a deadline (flag fall, reconnect window, no-show) at its exact instant; an
arbiter's action at the server's time.  The instants are stored with each applied event, so a replay of the
game_event log reproduces the state exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection, func, select
from sqlmodel import col

from engine.adjudication import (
    Adjudication,
    AdjudicationError,
    AdjudicationSettings,
    settings_to_dict,
)
from engine.clock import find_time_control
from engine.errors import EngineError
from engine.game import GameSettings
from engine.openings import Player
from engine.penalties import Ladder, PenaltyPolicy
from proctor import feed
from proctor.audit import AuditChain
from proctor.deadlines import Deadlines
from proctor.errors import BadRequestError, ConflictError, NotFoundError, OverloadedError
from proctor.game_actions import GameActions
from proctor.incidents import Incidents
from proctor.live_games import Held, LiveGame, LiveGames
from proctor.models import (
    Pairing,
    Platform,
    PlatformSecret,
    Section,
    Tournament,
)
from proctor.models import Player as PlayerRow
from proctor.seen import SeenFilter
from proctor.settings import Settings
from proctor.staging import FEED_TABLE, Batch, Notice, RawJson, Staging, table_of


@dataclass(frozen=True, slots=True)
class PairingLink:
    """The event's pairing a platform game belongs to, and its section's settings and policy."""

    pairing_id: int
    section: str
    rule: str
    opening: str
    time_control: str
    black_ref: str
    white_ref: str
    policy: dict[str, Any]

    def disagreements(self, setup: feed.GameSetup) -> list[str]:
        problems = []
        if (setup.black_ref, setup.white_ref) != (self.black_ref, self.white_ref):
            problems.append(
                f"the platform seats {setup.black_ref} (Black) against {setup.white_ref}; the pairing says "
                f"{self.black_ref or '?'} (Black) against {self.white_ref or '?'}"
            )
        if setup.rule != self.rule or (setup.opening or "free") != self.opening:
            problems.append(
                f"the platform plays {setup.rule}/{setup.opening or 'free'}; section {self.section} is "
                f"{self.rule}/{self.opening}"
            )
        if setup.time_control != find_time_control(self.time_control):
            problems.append(
                f"the platform's time control ({setup.time_control.describe()}) is not section {self.section}'s "
                f"({self.time_control})"
            )
        return problems


def find_pairing(connection: Connection, external_id: str, setup: feed.GameSetup) -> PairingLink | None:
    """The pairing whose platform game id this is; else the one at the game's event (``slug`` or ``slug/section``),
    round and board."""
    pairing, section, player = table_of(Pairing), table_of(Section), table_of(PlayerRow)
    query = select(pairing.c.id, pairing.c.black_start_no, pairing.c.white_start_no, section.c.id.label("section_id"),
                   section.c.slug, section.c.rule, section.c.opening, section.c.time_control, section.c.policy).join(
        section, section.c.id == pairing.c.section_id)  # fmt: skip
    row = connection.execute(query.where(pairing.c.platform_game_id == external_id)).first()
    if row is None and setup.event and setup.round_no and setup.board:
        slug, _, section_slug = setup.event.partition("/")
        tournament = table_of(Tournament)
        candidates = query.join(tournament, tournament.c.id == section.c.tournament_id).where(
            tournament.c.slug == slug, pairing.c.round_no == setup.round_no, pairing.c.board == setup.board
        )
        if section_slug:
            candidates = candidates.where(section.c.slug == section_slug)
        rows = connection.execute(candidates).all()
        row = rows[0] if len(rows) == 1 else None
    if row is None:
        return None
    refs = dict(
        connection.execute(
            select(player.c.start_no, player.c.platform_ref).where(player.c.section_id == row.section_id)
        ).all()
    )
    return PairingLink(
        row.id, row.slug, row.rule, row.opening, row.time_control, refs.get(row.black_start_no, ""),
        refs.get(row.white_start_no, "") if row.white_start_no else "", dict(row.policy or {}),
    )  # fmt: skip


# --- Results of a delivery ------------------------------------------------------------------------------------------


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


class Service:
    """Platforms, live games, incidents and the audit chain.  Mutated only on the writer thread."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.platforms: dict[str, tuple[int, tuple[str, ...]]] = {}
        self.staging = Staging()
        self.audit_chain = AuditChain(self.staging)
        self.live = LiveGames(settings, self.staging, self.audit_chain)
        self.game_actions = GameActions(self.live)
        self.incidents = Incidents(self.staging, self.audit_chain, self.live, self.game_actions)
        self.deadlines = Deadlines(settings, self.live, self.incidents)
        self.fire_deadlines = self.deadlines.fire
        self.report_gap = self.deadlines.report_gap
        self.arbiter_event = self.game_actions.apply
        self.raise_incident = self.incidents.raise_incident
        self.act_on_incident = self.incidents.act_on_incident
        self.add_evidence = self.incidents.add_evidence
        self.seen = SeenFilter()

    @property
    def games(self) -> dict[int, LiveGame]:
        """The games as committed, by service id."""
        return self.live.games

    @property
    def by_external(self) -> dict[tuple[int, str], int]:
        """Service game ids by platform id and platform game id."""
        return self.live.by_external

    # --- Loading ------------------------------------------------------------------------------------------------

    def load(self, connection: Connection) -> None:
        """Platforms, the audit chain's head, and every unfinished game (snapshot + the events after it)."""
        self.reload_platforms(connection)
        self.audit_chain.load(connection)
        self.staging.load(connection)
        received = connection.execute(select(func.count()).select_from(FEED_TABLE)).scalar_one()
        self.seen = SeenFilter(expected=max(1_000_000, 4 * received))
        for platform_id, webhook_id in connection.execute(select(FEED_TABLE.c.platform_id, FEED_TABLE.c.webhook_id)):
            self.seen.add(f"{platform_id}:{webhook_id}")
        self.live.load(connection)

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

    def game(self, batch: Batch, game_id: int) -> LiveGame:
        return self.live.game(batch, game_id)

    def commit(self, batch: Batch) -> None:
        """Make a committed batch visible."""
        self.live.commit(batch)
        self.audit_chain.commit(batch)
        self.staging.commit(batch)
        for platform_id, webhook_id in batch.webhooks:
            self.seen.add(f"{platform_id}:{webhook_id}")

    def flush(self, connection: Connection, batch: Batch) -> None:
        """Write the staged rows."""
        self.staging.flush(connection, batch)

    # --- Audit chain --------------------------------------------------------------------------------------------

    def audit(
        self,
        connection: Connection,
        batch: Batch,
        at: int,
        actor: str,
        action: str,
        subject: str,
        detail: dict[str, Any],
    ) -> None:
        """Append a hash-chained audit entry (no personal data: ids and references only)."""
        self.audit_chain.append(batch, at, actor, action, subject, detail)

    # --- Deliveries ---------------------------------------------------------------------------------------------

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
        game_id = self.by_external.get((platform_id, message.game_id))
        if message.type == "game.created":
            return self._create(connection, batch, platform_id, webhook_id, message, received, game_id)
        if game_id is None:
            raise NotFoundError(f"unknown game {message.game_id!r}: its game.created has not been received")
        game = self.game(batch, game_id)
        feed.check_engine_data(message, game.refs)
        if self._is_duplicate_seq(connection, batch, game, message):
            return DeliveryResult("duplicate", game.id, detail=f"seq {message.seq} was already received")
        delivery_id = self._store_delivery(batch, platform_id, webhook_id, game.id, message, received)
        self.audit(
            connection,
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
        status = self._apply_feed(connection, batch, game, delivery_id, message, incidents)
        game = self.game(batch, game_id)
        while game.last_seq + 1 in game.held:  # the gap has filled: apply what was held, in order
            held = dict(game.held)
            item = held.pop(game.last_seq + 1)
            batch.games[game.id] = replace(game, held=held)
            self._apply_feed(connection, batch, self.game(batch, game_id), item.delivery_id, item.message, incidents)
            game = self.game(batch, game_id)
        if not game.held and game.gap_since_ms is not None:
            batch.games[game.id] = replace(game, gap_since_ms=None, gap_reported=False)
        self.live.save(batch, self.game(batch, game_id), received)
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
            if self._is_duplicate_seq(connection, batch, self.game(batch, existing), message):
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
                game=GameSettings(rule=setup.rule, opening=setup.opening, max_candidates=policy.get("max_candidates")),
                lateness_tolerance_ms=round(1000 * policy.get("lateness_tolerance_s", 0)),
                reconnect_window_ms=None
                if policy.get("reconnect_window_s") is None
                else round(1000 * policy["reconnect_window_s"]),
                confirm_time_verdicts=bool(policy.get("confirm_time_verdicts", False)),
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
        self.audit(
            connection,
            batch,
            received,
            f"platform:{platform_id}",
            "game.created",
            f"game:{game_id}",
            {"external_id": message.game_id, "rule": setup.rule, "opening": setup.opening},
        )
        refs = {setup.black_ref: Player.FIRST, setup.white_ref: Player.SECOND}
        batch.games[game_id] = LiveGame(game_id, platform_id, message.game_id, refs, state, 1, 0, 0)
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
    ) -> str:
        state = game.state
        status = "applied"
        if message.type == "game.ended":
            incidents.extend(self._compare_claim(connection, batch, game, message))
            batch.games[game.id] = replace(game, last_seq=message.seq)
            return "recorded"
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
