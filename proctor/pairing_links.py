"""A platform game's pairing in an event: found by its platform game id, else by the event, round and board the
platform names; with its section's settings and policy, and where the platform disagrees with them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection, select

from engine.clock import TimeControl, find_time_control
from proctor import feed
from proctor.models import Pairing, Section, Tournament
from proctor.models import Player as PlayerRow
from proctor.staging import table_of


def same_rate(one: TimeControl, other: TimeControl) -> bool:
    """The same time control whatever its name ("5+3" and the preset "playoff-5+3")."""
    return replace(one, name="") == replace(other, name="")


@dataclass(frozen=True, slots=True)
class PairingLink:
    """The event's pairing a platform game belongs to, and its section's settings and policy; the time control is
    the pairing's own when it has one (a knockout's play-off game, proctor.brackets)."""

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
        ours = self.policy.get("adjudication") or "automatic"
        if setup.adjudication is not None and setup.adjudication != ours:
            problems.append(
                f"the platform plays forbidden moves by {setup.adjudication}; section {self.section} by {ours} (19.1.2)"
            )
        if not same_rate(setup.time_control, find_time_control(self.time_control)):
            problems.append(
                f"the platform's time control ({setup.time_control.describe()}) is not section {self.section}'s "
                f"({self.time_control})"
            )
        return problems


def find_pairing(connection: Connection, external_id: str, setup: feed.GameSetup) -> PairingLink | None:
    """The pairing whose platform game id this is; else the one at the game's event (``slug`` or ``slug/section``),
    round, board and game of the match (``match_game``, 1 by default)."""
    pairing, section, player = table_of(Pairing), table_of(Section), table_of(PlayerRow)
    query = select(pairing.c.id, pairing.c.black_start_no, pairing.c.white_start_no, section.c.id.label("section_id"),
                   section.c.slug, section.c.rule, section.c.opening, section.c.time_control, section.c.policy,
                   pairing.c.time_control.label("own_time_control")).join(
        section, section.c.id == pairing.c.section_id)  # fmt: skip
    row = connection.execute(query.where(pairing.c.platform_game_id == external_id)).first()
    if row is None and setup.event and setup.round_no and setup.board:
        slug, _, section_slug = setup.event.partition("/")
        tournament = table_of(Tournament)
        candidates = query.join(tournament, tournament.c.id == section.c.tournament_id).where(
            tournament.c.slug == slug,
            pairing.c.round_no == setup.round_no,
            pairing.c.board == setup.board,
            pairing.c.game_no == (setup.match_game or 1),
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
        row.id, row.slug, row.rule, row.opening, row.own_time_control or row.time_control,
        refs.get(row.black_start_no, ""),
        refs.get(row.white_start_no, "") if row.white_start_no else "", dict(row.policy or {}),
    )  # fmt: skip
