"""Live games: each game as the service holds it in memory, loaded at start from its snapshot and the events after it;
what is applied to a game recorded (its engine event, the verdicts audited) and its row's new values staged.

Effective time.  A feed event is applied at the platform's ``at`` (the moment the platform accepted it), or at the
game's current time if that is later; a deadline (flag fall, reconnect window, no-show) at its exact instant; an
arbiter's action at the server's time.  The instants are stored with each applied event, so a replay of the
game_event log reproduces the state exactly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Connection, select
from sqlmodel import col

from engine import adjudication as adj
from engine.adjudication import Adjudication, restore, settings_from_dict
from engine.openings import Player
from proctor import feed
from proctor.audit import AuditChain
from proctor.codec import event_from_dict, event_to_dict
from proctor.deadlines import deadline_of
from proctor.game_views import game_summary
from proctor.models import FeedDelivery, Game, GameEvent
from proctor.settings import Settings
from proctor.staging import Batch, Notice, Staging
from proctor.wall_clock import now_ms


@dataclass(frozen=True, slots=True)
class Held:
    delivery_id: int
    message: feed.FeedMessage


@dataclass(frozen=True, slots=True)
class LiveGame:
    """A game as the service holds it in memory; replaced, never mutated."""

    id: int
    platform_id: int
    external_id: str
    refs: dict[str, Player]
    state: Adjudication
    last_seq: int
    applied: int
    snapshot_applied: int
    held: dict[int, Held] = field(default_factory=dict)
    gap_since_ms: int | None = None
    gap_reported: bool = False
    incidents: int = 0
    created_ms: int = 0
    """When the service learned of the game (server time): no deadline is applied before the feed has had the grace
    to deliver what happened up to it (proctor.deadlines.is_due)."""


class LiveGames:
    """The games as committed (by service id, and by platform and platform game id), and their changes staged."""

    def __init__(self, settings: Settings, staging: Staging, audit_chain: AuditChain) -> None:
        self.settings = settings
        self.staging = staging
        self.audit_chain = audit_chain
        self.games: dict[int, LiveGame] = {}
        self.by_external: dict[tuple[int, str], int] = {}
        self.observers: list[Callable[[Batch, LiveGame, adj.Event, LiveGame], None]] = []
        """Called with each applied event, the game before and after it (in the job's batch): what follows from a
        change of state elsewhere (a pending verdict's case: proctor.incidents, proctor.casebook)."""

    def load(self, connection: Connection) -> None:
        """Every stored game: its snapshot and the events after it, and the deliveries held after a gap."""
        rows = connection.execute(select(Game)).all()
        for row in rows:
            game = self._load_game(connection, row._mapping)
            self.by_external[(game.platform_id, game.external_id)] = game.id
            self.games[game.id] = game

    def _load_game(self, connection: Connection, row: Any) -> LiveGame:
        settings = settings_from_dict(row["settings"])
        if row["snapshot"] is not None:
            state = restore(row["snapshot"])
            start = row["snapshot_applied"]
        else:
            state, start = Adjudication.new(settings), 0
        events = connection.execute(
            select(col(GameEvent.event))
            .where(col(GameEvent.game_id) == row["id"], col(GameEvent.position) >= start)
            .order_by(col(GameEvent.position))
        ).scalars()
        for data in events:
            state = state.apply(event_from_dict(data))
        held: dict[int, Held] = {}
        for delivery in connection.execute(
            select(col(FeedDelivery.id), col(FeedDelivery.body)).where(
                col(FeedDelivery.game_id) == row["id"], col(FeedDelivery.seq) > row["last_seq"]
            )
        ):
            message = feed.parse_message(json.dumps(delivery.body).encode())
            held[message.seq] = Held(delivery.id, message)
        refs = {row["black_ref"]: Player.FIRST, row["white_ref"]: Player.SECOND}
        return LiveGame(
            row["id"],
            row["platform_id"],
            row["external_id"],
            refs,
            state,
            row["last_seq"],
            row["applied"],
            row["snapshot_applied"],
            held,
            now_ms() if held else None,
            created_ms=row["created_ms"],
        )

    def game(self, batch: Batch, game_id: int) -> LiveGame:
        """The game as this batch has it (staged), else as committed."""
        return batch.games.get(game_id) or self.games[game_id]

    def stored_events(self, connection: Connection, batch: Batch, game_id: int) -> list[adj.Event]:
        """The game's whole event log, committed and staged, in order."""
        rows = connection.execute(
            select(col(GameEvent.event)).where(col(GameEvent.game_id) == game_id).order_by(col(GameEvent.position))
        ).scalars()
        staged = sorted(
            (row for row in batch.rows.get("game_event", []) if row["game_id"] == game_id),
            key=lambda row: int(row["position"]),
        )
        return [event_from_dict(data) for data in rows] + [event_from_dict(row["event"]) for row in staged]

    def knows(self, batch: Batch, game_id: int) -> bool:
        return game_id in self.games or game_id in batch.games

    def commit(self, batch: Batch) -> None:
        """Make a committed batch's games visible."""
        for game in batch.games.values():
            self.games[game.id] = game
            self.by_external[(game.platform_id, game.external_id)] = game.id

    def record(
        self, batch: Batch, game: LiveGame, source: str, delivery_id: int | None, event: adj.Event, after: Adjudication
    ) -> LiveGame:
        """Stage an applied engine event (from the feed, a deadline or an arbiter) and the game's state after it; the
        verdicts and penalties it brought are audited."""
        self.staging.stage(batch, "game_event", {
            "id": self.staging.allocate(batch, "game_event"), "game_id": game.id, "position": game.applied,
            "source": source, "delivery_id": delivery_id, "at_ms": event.at, "event": event_to_dict(event),
        })  # fmt: skip
        new_entries = after.log[len(game.state.log) :]
        for entry in new_entries:
            if entry.kind in ("verdict", "verdict-pending", "penalty", "disciplinary-loss", "both-lose", "revision"):
                self.audit_chain.append(
                    batch,
                    entry.at,
                    entry.actor or "service",
                    f"game.{entry.kind}",
                    f"game:{game.id}",
                    {"text": entry.text, "article": entry.article},
                )
        updated = replace(game, state=after, applied=game.applied + 1)
        batch.games[game.id] = updated
        batch.notices.append(Notice("game", game_summary(updated)))
        for observer in self.observers:
            observer(batch, game, event, updated)
        return self.game(batch, game.id)

    def save(self, batch: Batch, game: LiveGame, at: int) -> None:
        """Stage the game row's new values (a full snapshot every ``snapshot_every`` events and at the end)."""
        state = game.state
        outcome = state.outcome
        values: dict[str, Any] = {
            "last_seq": game.last_seq,
            "applied": game.applied,
            "status": "over" if outcome else ("live" if state.started else "scheduled"),
            "winner": (outcome.winner.value if outcome.winner else None) if outcome else None,
            "reason": outcome.termination.value if outcome else None,
            "article": outcome.article if outcome else None,
            "next_deadline_ms": deadline_of(state),
            "updated_ms": at,
        }
        if outcome is not None or game.applied - game.snapshot_applied >= self.settings.snapshot_every:
            values["snapshot"] = state.to_dict()
            values["snapshot_applied"] = game.applied
            game = replace(game, snapshot_applied=game.applied)
            batch.games[game.id] = game
        staged = batch.updates.get(game.id)
        if staged is not None and "snapshot" in staged and "snapshot" not in values:
            values["snapshot"], values["snapshot_applied"] = staged["snapshot"], staged["snapshot_applied"]
        batch.updates[game.id] = values
