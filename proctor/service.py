"""The service core: what the service holds and does, by concept, behind one facade for the other layers.

Everything here runs on the writer thread (proctor.writer) inside one database transaction per batch: a change is
first *staged* (new immutable game states, rows to insert; proctor.staging), written, and only made visible once the
transaction has committed, so that nothing is acknowledged before it is stored and a failed commit leaves memory as it
was.  The parts:

- proctor.staging: the batch of one transaction, the ids of the append-only tables, the rows' way to the database;
- proctor.audit: the audit log's hash chain;
- proctor.live_games: the games in memory, what is applied to them recorded, their rows' new values;
- proctor.deliveries: the platforms and the feed's deliveries (proctor.pairing_links: a game's pairing);
- proctor.deadlines: deadlines fired and feed gaps reported;
- proctor.game_actions: an arbiter's actions on a game;
- proctor.incidents: incidents and the arbiters' actions on them;
- proctor.casebook: incidents grouped into cases (proctor.cases), the arbiters' actions on cases, escalations.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, select
from sqlmodel import col

from engine.adjudication import Adjudication
from engine.knockout import KnockoutError
from proctor.audit import AuditChain
from proctor.brackets import BracketError, advance_section, knockout_sections_of_games
from proctor.casebook import Casebook
from proctor.deadlines import Deadlines
from proctor.deliveries import Deliveries
from proctor.game_actions import GameActions
from proctor.incidents import Incidents
from proctor.live_games import LiveGame, LiveGames
from proctor.models import Player
from proctor.settings import Settings
from proctor.staging import Batch, Notice, Staging, seal_stored
from proctor.wall_clock import now_ms

log = logging.getLogger("proctor.service")


class Service:
    """Platforms, live games, incidents and the audit chain.  Mutated only on the writer thread."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.staging = Staging()
        self.audit_chain = AuditChain(self.staging)
        self.live = LiveGames(settings, self.staging, self.audit_chain)
        self.game_actions = GameActions(self.live)
        self.casebook = Casebook(self.staging, self.audit_chain, self.live)
        self.casebook.game_actions = self.game_actions
        self.incidents = Incidents(self.staging, self.audit_chain, self.live, self.game_actions, self.casebook)
        self.deliveries = Deliveries(settings, self.staging, self.audit_chain, self.live, self.incidents)
        self.deadlines = Deadlines(settings, self.live, self.incidents)
        # What the other layers ask of the service (writer jobs take the connection and the batch first):
        self.game = self.live.game
        self.platform = self.deliveries.platform
        self.reload_platforms = self.deliveries.reload_platforms
        self.deliver = self.deliveries.deliver
        self.fire_deadlines = self.deadlines.fire
        self.report_gap = self.deadlines.report_gap
        self.arbiter_event = self.game_actions.apply
        self.raise_incident = self.incidents.raise_incident
        self.report_incident = self.incidents.report_incident
        self.act_on_incident = self.incidents.act_on_incident
        self.add_evidence = self.incidents.add_evidence
        self.act_on_cases = self.casebook.act
        self.penalise_case = self.incidents.penalise_case
        self.escalate_cases = self.casebook.escalate_due

    @property
    def games(self) -> dict[int, LiveGame]:
        """The games as committed, by service id."""
        return self.live.games

    @property
    def by_external(self) -> dict[tuple[int, str], int]:
        """Service game ids by platform id and platform game id."""
        return self.live.by_external

    def knows_player(self, connection: Connection, player_ref: str) -> bool:
        """Whether the player is an event's player (by their platform id) or plays a game not over."""
        if any(player_ref in game.refs and not game.state.is_over for game in list(self.games.values())):
            return True
        query = select(col(Player.id)).where(col(Player.platform_ref) == player_ref).limit(1)
        return player_ref != "" and connection.execute(query).first() is not None

    def load(self, connection: Connection) -> None:
        """Platforms, the audit chain's head, and every unfinished game (snapshot + the events after it)."""
        self.deliveries.load(connection)
        self.audit_chain.load(connection)
        self.staging.load(connection)
        self.live.load(connection)
        self.casebook.load(connection)

    def flush(self, connection: Connection, batch: Batch) -> None:
        """Chain the audit entries (with the rows' hashes) and write the staged rows; then the knockouts whose games
        ended in the batch get their next games' pairings (proctor.brackets)."""
        self.audit_chain.finish(batch, now_ms())
        self.staging.flush(connection, batch)
        ended = [game_id for game_id, values in batch.updates.items() if values.get("status") == "over"]
        if ended:
            self.advance_brackets(connection, batch, knockout_sections_of_games(connection, ended))

    def states(self, batch: Batch) -> dict[int, Adjudication]:
        """Every game's state as this batch has it."""
        return {game_id: game.state for game_id, game in {**self.games, **batch.games}.items()}

    def advance_brackets(self, connection: Connection, batch: Batch, section_ids: Iterable[int]) -> None:
        """Create the pairings the knockouts ``section_ids`` need next.  A bracket that does not fit its pairings
        (a result entered against it) stops only itself: it is logged, and its page says why (proctor.brackets)."""
        for section_id in sorted(section_ids):
            try:
                created = advance_section(connection, section_id, self.states(batch))
            except (BracketError, KnockoutError) as error:
                log.warning("knockout section %s not advanced: %s", section_id, error)
                continue
            if created:
                batch.notices.append(Notice("bracket", {"section_id": section_id, "games": len(created)}))

    def commit(self, batch: Batch) -> None:
        """Make a committed batch visible."""
        self.live.commit(batch)
        self.audit_chain.commit(batch)
        self.staging.commit(batch)
        self.deliveries.commit(batch)
        self.casebook.commit(batch)

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

    def seal(self, connection: Connection, batch: Batch, table: str, row_id: int) -> None:
        """Put the hash of an append-only row the job wrote itself into the audit entry that follows it."""
        seal_stored(connection, batch, table, row_id)
