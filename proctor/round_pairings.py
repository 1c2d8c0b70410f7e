"""A new round's pairings added to a loaded section (27.3: a Swiss is paired round by round, after the previous
round's results).

An event file may list only the first round's pairings; a later round's come from the pairing software.  Loading the
file again (``proctor event load --replace``) is refused once games are linked to the event's pairings, so a round is
added on its own: :func:`add_round` checks it as the event file's pairings are checked (each player once; a match of
several games on one board, its games added with the colours swapped game by game, regulations 2023 VII(2)) and that
it is the section's next round, then stores it.  The pairings themselves are not made here.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, func, insert, select
from sqlmodel import col

from proctor.errors import ConflictError, NotFoundError
from proctor.events import EventFileError, PairingSpec, _check_matches, _missing_games
from proctor.models import Pairing, Player, Section, Tournament


@dataclass(frozen=True, slots=True)
class Board:
    """One board of the round: the first player (Black in game 1) and the second; no second player is a bye."""

    board: int
    black: int
    white: int | None


def add_round(connection: Connection, slug: str, section_slug: str, round_no: int, boards: list[Board]) -> int:
    """Store round ``round_no`` of ``slug/section`` (the round after the last one paired, within the section's
    rounds); the number of pairings stored (a match's games each one)."""
    row = connection.execute(
        select(col(Section.id), col(Section.system), col(Section.games_per_match), col(Section.policy))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(Tournament.slug) == slug, col(Section.slug) == section_slug)
    ).first()
    if row is None:
        raise NotFoundError(f"no section {slug}/{section_slug}")
    section_id, system, per, policy = row
    where = f"{slug}/{section_slug} round {round_no}"
    if system == "knockout":
        raise ConflictError(f"{where}: a knockout's games follow its bracket (27.1), not a round's pairings")
    last = connection.execute(
        select(func.max(col(Pairing.round_no))).where(col(Pairing.section_id) == section_id)
    ).scalar()
    rounds = int((policy or {}).get("rounds") or 1)
    if round_no != (last or 0) + 1 or round_no > rounds:
        raise ConflictError(f"{where}: the next round to pair is {(last or 0) + 1} (of {rounds})")
    numbers = set(connection.execute(select(col(Player.start_no)).where(col(Player.section_id) == section_id))
                  .scalars())  # fmt: skip
    pairings = [PairingSpec(round_no, b.board, b.black, b.white) for b in boards]
    for pairing in pairings:
        for number in (pairing.black, pairing.white):
            if number is not None and number not in numbers:
                raise EventFileError(f"{where} board {pairing.board}: no player with start number {number}")
    if len({p.board for p in pairings}) != len(pairings):
        raise EventFileError(f"{where}: a board is given twice")
    pairings += _missing_games(pairings, per)
    _check_matches(pairings, where)
    connection.execute(
        insert(Pairing),
        [{"section_id": section_id, "round_no": p.round_no, "board": p.board, "game_no": p.game_no,
          "black_start_no": p.black, "white_start_no": p.white, "platform_game_id": "", "result": ""}
         for p in pairings],
    )  # fmt: skip
    return len(pairings)
