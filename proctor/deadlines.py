"""Deadlines: a game's next deadline (flag fall, reconnect window, no-show), applied at its exact instant once the
grace for late deliveries has passed, and gaps in a game's feed reported when they stay open too long.  The timer
(proctor.app) finds the games due; this runs on the writer."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from sqlalchemy import Connection

from engine import adjudication as adj
from engine.adjudication import Adjudication
from proctor.settings import Settings
from proctor.staging import Batch

if TYPE_CHECKING:
    from proctor.incidents import Incidents
    from proctor.live_games import LiveGame, LiveGames


def deadline_of(state: Adjudication) -> int | None:
    deadline = state.next_deadline()
    return deadline[0] if deadline else None


NEW_GAME_SETTLE_MS: Final = 2_000
"""A game is ruled on no sooner than this after the service learned of it, whatever ``deadline_grace_ms``."""


def is_due(game: LiveGame, grace_ms: int, server_now: int) -> bool:
    """Whether the game's next deadline may be applied: it passed more than the grace for late deliveries ago, and
    the service has known the game for that long, at least :data:`NEW_GAME_SETTLE_MS`.  A game created after its own
    start (a platform that posts ``game.created`` late, then the players' arrivals) is not ruled a no-show in the
    moment between the two deliveries; the verdict, when there is one, keeps its own instant."""
    deadline = game.state.next_deadline()
    if deadline is None:
        return False
    return deadline[0] + grace_ms <= server_now and game.created_ms + max(grace_ms, NEW_GAME_SETTLE_MS) <= server_now


class Deadlines:
    def __init__(self, settings: Settings, live: LiveGames, incidents: Incidents) -> None:
        self.settings = settings
        self.live = live
        self.incidents = incidents

    def fire(self, connection: Connection, batch: Batch, game_id: int, server_now: int) -> bool:
        """Apply every deadline of a game that passed more than the grace ago; True if anything changed."""
        game = self.live.game(batch, game_id)
        changed = False
        while True:
            deadline = game.state.next_deadline()
            if deadline is None or not is_due(game, self.settings.deadline_grace_ms, server_now):
                break
            at = max(deadline[0], game.state.now)
            event = adj.Tick(at + (1 if deadline[1] == "arrival" else 0))
            after = game.state.apply(event)
            game = self.live.record(batch, game, "deadline", None, event, after)
            changed = True
        if changed:
            self.live.save(batch, game, server_now)
        return changed

    def report_gap(self, connection: Connection, batch: Batch, game_id: int, server_now: int) -> bool:
        """A ``feed-gap`` incident for a gap in a game's feed open longer than ``feed_gap_timeout_s`` (once a gap)."""
        game = self.live.game(batch, game_id)
        if game.gap_since_ms is None or game.gap_reported:
            return False
        if server_now - game.gap_since_ms < self.settings.feed_gap_timeout_s * 1000:
            return False
        summary = (
            f"feed gap: seq {game.last_seq + 1} has not arrived for "
            f"{(server_now - game.gap_since_ms) / 1000:.0f} s; {len(game.held)} later event(s) are held"
        )
        self.incidents.incident(
            batch,
            game,
            "feed-gap",
            summary,
            source="feed",
            evidence={"missing_seq": game.last_seq + 1, "held": sorted(game.held)},
            at=server_now,
        )
        batch.games[game.id] = replace(game, gap_reported=True)
        return True
