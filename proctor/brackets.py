"""Knockout stages (27.1, 27.7, 28.4; regulations 2023 VII(3), VII(4)3): the bracket of a knockout section, drawn
once and then advanced by its games' results.

**The draw.**  A knockout section either lists its players (drawn when the event file is loaded, seeded by start
number or by ``seeds``), or qualifies from a preliminary section (``qualify_from``, ``qualifiers``): the chief
arbiter or a deputy draws it (``POST .../bracket``) once the preliminaries' last round is complete, from their final
standings, the top ``qualifiers`` seeded by place.  A tie across the cut that every tie-break leaves level is decided
by a play-off (VII(4)3): the draw is refused, naming the tied players, unless the chief gives the seeds after it.
The qualifiers join the knockout section as its players, start number = seed; the draw is an append-only, sealed row.

**Advancing.**  The bracket is never stored: it is replayed from the draw and the section's pairings with their
results (entered, or the service's verdicts on the linked games), in the order the matches need them
(:func:`replay_bracket`).  Each game a match needs next becomes a pairing (round = the knockout's round, board = the
match's number, game = the game of the match, the play-off's games after the regular ones with their own time
control), created when the draw is made and whenever a game of the section ends or a result is entered
(:func:`advance_section`).  A match whose game both players lost, or both forfeited, cannot go on by itself: the chief
enters the result that decides it.

**Places.**  The section's standings are the knockout's places (28.4): the champion, the final's loser, then
everyone eliminated in the same round sharing a place (3-4 without a match for third place, 5-8).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from sqlalchemy import Connection, insert, select
from sqlmodel import col

from engine.adjudication import Adjudication
from engine.clock import PlayOff, find_time_control
from engine.knockout import Knockout, KnockoutError, Match, MatchStatus
from engine.standings import ResultKind
from proctor.errors import ConflictError, NotFoundError
from proctor.game_results import game_results
from proctor.models import BracketDraw, Game, Pairing, Player, Section, Tournament
from proctor.spreadsheets import spreadsheet_text
from proctor.staging import table_of

ARTICLE: Final = "27.1"
STORED_RESULTS: Final = {
    "1-0": (ResultKind.WIN, ResultKind.LOSS),
    "0-1": (ResultKind.LOSS, ResultKind.WIN),
    "½-½": (ResultKind.DRAW, ResultKind.DRAW),
    "+/-": (ResultKind.FORFEIT_WIN, ResultKind.FORFEIT_LOSS),
    "-/+": (ResultKind.FORFEIT_LOSS, ResultKind.FORFEIT_WIN),
    "-/-": (ResultKind.FORFEIT_LOSS, ResultKind.FORFEIT_LOSS),
    "0-0": (ResultKind.LOSS, ResultKind.LOSS),
}
"""A pairing's stored result (TRF's notation) as the first and the second player's results."""

Results = tuple[ResultKind, ResultKind]


class BracketError(ConflictError):
    """The bracket cannot be drawn or does not fit its pairings; nothing was changed."""

    code = "bracket"


class PairingLike(Protocol):
    @property
    def round_no(self) -> int: ...
    @property
    def board(self) -> int: ...
    @property
    def game_no(self) -> int: ...


# --- The bracket from its draw and results (pure) --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BracketSettings:
    """How the section's matches are played: games a match (27.7), the final's, a match for third place (28.4), and
    the play-off's two time controls (regulations 2023 VII(4)3)."""

    games: int = 1
    final_games: int | None = None
    third_place_match: bool = False
    play_off: tuple[str, str] = ("playoff-5+3", "playoff-3+2")

    @classmethod
    def of_section(cls, games_per_match: int, policy: Mapping[str, Any] | None) -> BracketSettings:
        knockout = dict((policy or {}).get("knockout") or {})
        play_off = knockout.get("play_off") or ["playoff-5+3", "playoff-3+2"]
        return cls(games_per_match, knockout.get("final_games"), bool(knockout.get("third_place_match")),
                   (str(play_off[0]), str(play_off[1])))  # fmt: skip

    def create(self, seeds: Sequence[int]) -> Knockout:
        chain = PlayOff(find_time_control(self.play_off[0]), find_time_control(self.play_off[1]))
        return Knockout.create(seeds, best_of=self.games, final_best_of=self.final_games,
                               third_place_match=self.third_place_match, play_off=chain)  # fmt: skip


@dataclass(frozen=True, slots=True)
class GameSlot:
    """A game the bracket has had or needs: where (round, board = the match's number, game of the match), who is
    first (Black) and second, and its own time control (a play-off game's; empty for a regular game)."""

    round_no: int
    board: int
    game_no: int
    black: int
    white: int
    time_control: str = ""
    play_off_index: int | None = None


@dataclass(frozen=True, slots=True)
class Replayed:
    """The bracket after the results known, the games it has had or needs, those still without a pairing, and the
    matches stopped by a result that decides nothing (both players lost or forfeited)."""

    knockout: Knockout
    slots: dict[tuple[int, int, int], GameSlot]
    due: tuple[GameSlot, ...]
    stuck: tuple[str, ...]


def _slot(match: Match) -> GameSlot | None:
    upcoming = match.next_game()
    if upcoming is None:
        return None
    control = upcoming.time_control.name if upcoming.time_control is not None else ""
    return GameSlot(match.round_no, match.number, upcoming.number, upcoming.first, upcoming.second, control,
                    upcoming.play_off_index)  # fmt: skip


def replay_bracket(
    settings: BracketSettings,
    seeds: Sequence[int],
    pairings: Iterable[Any],
    result_of: Callable[[Any], Results | str | None],
) -> Replayed:
    """The bracket of ``seeds`` with the results of ``pairings`` (objects with ``round_no``, ``board``, ``game_no``,
    ``black_start_no`` or ``black``, and ``white_start_no`` or ``white``) applied game by game, in the order its
    matches play them.  ``result_of`` gives a pairing's result (the two players' kinds, or the stored text), or None
    while it has none.  A pairing that is no game of the bracket, or seats other players, is a BracketError."""
    knockout = settings.create(seeds)
    listed = {(p.round_no, p.board, p.game_no): p for p in pairings}
    slots: dict[tuple[int, int, int], GameSlot] = {}
    stuck: list[str] = []
    moved = True
    while moved:
        moved = False
        for match in knockout.matches_to_play():
            slot = _slot(match)
            assert slot is not None
            key = (slot.round_no, slot.board, slot.game_no)
            slots[key] = slot
            pairing = listed.get(key)
            if pairing is None:
                continue
            seated = (_number(pairing, "black"), _number(pairing, "white"))
            if seated != (slot.black, slot.white):
                raise BracketError(
                    f"round {slot.round_no} board {slot.board} game {slot.game_no}: the bracket has {slot.black} "
                    f"(Black) against {slot.white}, the pairing {seated[0]} against {seated[1]} (27.1, 10.1.3)"
                )  # fmt: skip
            result = result_of(pairing)
            kinds = STORED_RESULTS.get(result) if isinstance(result, str) else result
            if kinds is None:
                continue
            winner = _winner(kinds, slot)
            if winner is _NO_WINNER:
                label = f"{match.label} game {slot.game_no}"
                if label not in stuck:
                    stuck.append(label)
                continue
            forfeit = kinds[0].forfeit or kinds[1].forfeit
            knockout = knockout.record_game(match.round_no, match.number, winner, forfeit=forfeit)
            moved = True
    extra = sorted(key for key in listed if key not in slots)
    if extra:
        where = ", ".join(f"round {r} board {b} game {g}" for r, b, g in extra)
        raise BracketError(f"{where}: no game of the bracket (27.1: each match's games, then its play-off)")
    due = tuple(slot for key, slot in sorted(slots.items()) if key not in listed)
    return Replayed(knockout, slots, due, tuple(stuck))


_NO_WINNER: Final = -1


def _number(pairing: Any, side: str) -> int | None:
    """A stored pairing's ``black_start_no`` / ``white_start_no``, or an event file's ``black`` / ``white``."""
    column = f"{side}_start_no"
    value = getattr(pairing, column) if hasattr(pairing, column) else getattr(pairing, side)
    return None if value is None else int(value)


def _winner(kinds: Results, slot: GameSlot) -> int | None:
    """The game's winner (a start number), None for a draw, _NO_WINNER when both lost or forfeited."""
    first, second = kinds
    if first in (ResultKind.WIN, ResultKind.FORFEIT_WIN) and second not in (ResultKind.WIN, ResultKind.FORFEIT_WIN):
        return slot.black if second in (ResultKind.LOSS, ResultKind.FORFEIT_LOSS) else _NO_WINNER
    if second in (ResultKind.WIN, ResultKind.FORFEIT_WIN) and first in (ResultKind.LOSS, ResultKind.FORFEIT_LOSS):
        return slot.white
    if first is ResultKind.DRAW and second is ResultKind.DRAW:
        return None
    return _NO_WINNER


# --- Reading and writing ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SectionRow:
    id: int
    slug: str
    name: str
    event: str
    event_name: str
    system: str
    games_per_match: int
    time_control: str
    policy: dict[str, Any]

    @property
    def knockout(self) -> dict[str, Any]:
        return dict(self.policy.get("knockout") or {})

    @property
    def settings(self) -> BracketSettings:
        return BracketSettings.of_section(self.games_per_match, self.policy)


def section_row(connection: Connection, slug: str, section_slug: str) -> SectionRow:
    section, tournament = table_of(Section), table_of(Tournament)
    row = connection.execute(
        select(section, tournament.c.name.label("event_name"))
        .join(tournament, tournament.c.id == section.c.tournament_id)
        .where(tournament.c.slug == slug, section.c.slug == section_slug)
    ).first()  # fmt: skip
    if row is None:
        raise NotFoundError(f"no section {slug}/{section_slug}")
    return SectionRow(row.id, row.slug, row.name, slug, row.event_name, row.system, row.games_per_match,
                      row.time_control, dict(row.policy or {}))  # fmt: skip


def knockout_section(connection: Connection, slug: str, section_slug: str) -> SectionRow:
    row = section_row(connection, slug, section_slug)
    if row.system != "knockout":
        raise ConflictError(f"section {slug}/{section_slug} is a {row.system}, not a knockout: it has no bracket "
                            "(27.1)", article=ARTICLE)  # fmt: skip
    return row


def read_draw(connection: Connection, section_id: int) -> Any:
    draw = table_of(BracketDraw)
    return connection.execute(select(draw).where(draw.c.section_id == section_id)).first()


def _results(
    connection: Connection, section_id: int, states: Mapping[int, Adjudication]
) -> tuple[list[Any], Callable[[Any], Results | str | None]]:
    """The section's pairings and a pairing's result: as entered, else the service's verdict on its game."""
    pairing, game = table_of(Pairing), table_of(Game)
    pairings = list(connection.execute(
        select(pairing).where(pairing.c.section_id == section_id)
        .order_by(pairing.c.round_no, pairing.c.board, pairing.c.game_no)
    ).all())  # fmt: skip
    linked = dict(
        connection.execute(
            select(game.c.pairing_id, game.c.id).where(game.c.pairing_id.in_([p.id for p in pairings]))
        ).all()
    )

    def result_of(row: Any) -> Results | str | None:
        if row.result:
            return str(row.result)
        game_id = linked.get(row.id)
        state = states.get(game_id) if game_id is not None else None
        return game_results(state) if state is not None else None

    return pairings, result_of


def replay_section(
    connection: Connection, row: SectionRow, states: Mapping[int, Adjudication]
) -> tuple[Any, Replayed] | None:
    """The section's draw and bracket as its results stand; None before the draw."""
    draw = read_draw(connection, row.id)
    if draw is None:
        return None
    pairings, result_of = _results(connection, row.id, states)
    return draw, replay_bracket(row.settings, list(draw.seeds), pairings, result_of)


def advance_section(connection: Connection, section_id: int, states: Mapping[int, Adjudication]) -> list[GameSlot]:
    """Create the pairings of the games the bracket needs next (idempotent); the games created."""
    section = table_of(Section)
    found = connection.execute(
        select(section.c.tournament_id, section.c.slug).where(section.c.id == section_id)
    ).first()
    if found is None:
        return []
    slug = connection.execute(select(col(Tournament.slug)).where(col(Tournament.id) == found.tournament_id)).scalar()
    row = section_row(connection, str(slug), found.slug)
    replayed = replay_section(connection, row, states)
    if replayed is None or not replayed[1].due:
        return []
    due = replayed[1].due
    connection.execute(
        insert(Pairing),
        [{"section_id": section_id, "round_no": s.round_no, "board": s.board, "game_no": s.game_no,
          "black_start_no": s.black, "white_start_no": s.white, "platform_game_id": "", "result": "",
          "time_control": s.time_control} for s in due],
    )  # fmt: skip
    return list(due)


def knockout_sections_of_games(connection: Connection, game_ids: Iterable[int]) -> set[int]:
    """The knockout sections the games' pairings belong to."""
    ids = list(game_ids)
    if not ids:
        return set()
    game, pairing, section = table_of(Game), table_of(Pairing), table_of(Section)
    rows = connection.execute(
        select(section.c.id).distinct()
        .join(pairing, pairing.c.section_id == section.c.id)
        .join(game, game.c.pairing_id == pairing.c.id)
        .where(game.c.id.in_(ids), section.c.system == "knockout")
    ).scalars()  # fmt: skip
    return set(rows)


# --- The draw --------------------------------------------------------------------------------------------------------


def store_draw(
    connection: Connection, section_id: int, seeds: list[int], source: dict[str, Any] | None, reason: str, by: str,
    role: str, at: int,
) -> int:  # fmt: skip
    draw_id = connection.execute(
        insert(BracketDraw).values(section_id=section_id, seeds=seeds, source=source, reason=reason, recorded_by=by,
                                   recorded_role=role, created_ms=at).returning(col(BracketDraw.id))
    ).scalar_one()  # fmt: skip
    assert draw_id is not None
    return int(draw_id)


def vars_of(value: Any) -> dict[str, Any]:
    return {name: getattr(value, name) for name in value.__slots__}


# --- What the routes read --------------------------------------------------------------------------------------------


def _match_json(match: Match, names: Mapping[int, str], slots: Mapping[tuple[int, int, int], GameSlot],
                pairings: Mapping[tuple[int, int, int], Any]) -> dict[str, Any]:  # fmt: skip
    def who(no: int | None) -> dict[str, Any] | None:
        return None if no is None else {"start_no": no, "name": names.get(no, "")}

    games = []
    for number, played in enumerate(match.games, start=1):
        winner = played.winner
        games.append({
            "game": number, "black": who(played.first), "white": who(played.second), "winner": who(winner),
            "result": "½-½" if winner is None else "1-0" if winner == played.first else "0-1",
            "forfeit": played.forfeit, "play_off": played.play_off_index is not None,
            "time_control": played.time_control.name if played.time_control else "",
            "linked": (match.round_no, match.number, number) in pairings,
        })  # fmt: skip
    upcoming = slots.get((match.round_no, match.number, len(match.games) + 1))
    return {
        "round": match.round_no, "board": match.number, "label": match.label, "third_place": match.third_place,
        "players": [who(p) for p in match.players], "status": match.status.value, "bye": match.bye,
        "games_per_match": match.best_of, "winner": who(match.winner), "games": games,
        "scores": {str(p): str(match.score(p)) for p in match.players if p is not None and not match.bye},
        "next": None if upcoming is None or match.status in (MatchStatus.DECIDED, MatchStatus.WAITING) else {
            "game": upcoming.game_no, "black": who(upcoming.black), "white": who(upcoming.white),
            "play_off": upcoming.play_off_index is not None, "time_control": upcoming.time_control,
        },
    }  # fmt: skip


def bracket_json(
    connection: Connection, slug: str, section_slug: str, states: Mapping[int, Adjudication]
) -> dict[str, Any]:
    """The bracket as it stands: every match with its players, games and next game; the places once finished."""
    row = knockout_section(connection, slug, section_slug)
    player = table_of(Player)
    names = dict(
        connection.execute(select(player.c.start_no, player.c.name).where(player.c.section_id == row.id)).all()
    )
    head = {"event": row.event_name, "section": section_slug, "section_name": row.name, "system": "knockout",
            "qualify_from": row.knockout.get("qualify_from") or None, "qualifiers": row.knockout.get("qualifiers"),
            "games_per_match": row.games_per_match, "third_place_match": row.settings.third_place_match,
            "play_off": list(row.settings.play_off), "article": ARTICLE}  # fmt: skip
    replayed = replay_section(connection, row, states)
    if replayed is None:
        return {**head, "drawn": False, "matches": [], "places": [], "finished": False, "stuck": []}
    draw, bracket = replayed
    pairings, _ = _results(connection, row.id, states)
    by_key = {(p.round_no, p.board, p.game_no): p for p in pairings}
    knockout = bracket.knockout
    return {
        **head, "drawn": True, "seeds": [{"seed": i + 1, "start_no": no, "name": names.get(no, "")}
                                         for i, no in enumerate(draw.seeds)],
        "drawn_by": draw.recorded_by, "drawn_at": draw.created_ms, "rounds": knockout.rounds,
        "matches": [_match_json(m, names, bracket.slots, by_key) for m in knockout.matches],
        "finished": knockout.finished, "champion": names.get(knockout.champion) if knockout.champion else None,
        "places": places_json(knockout, names) if knockout.finished else [], "stuck": list(bracket.stuck),
    }  # fmt: skip


def places_json(knockout: Knockout, names: Mapping[int, str]) -> list[dict[str, Any]]:
    """28.4: the places, shared where players were eliminated in the same round."""
    try:
        placings = knockout.places()
    except KnockoutError:
        return []
    return [{"place": p.place, "label": p.label, "shared_by": p.shared_by, "start_no": p.player,
             "name": names.get(p.player, ""), "eliminated_in": p.eliminated_in, "article": "28.4"}
            for p in placings]  # fmt: skip


def knockout_standings(
    connection: Connection, slug: str, section_slug: str, states: Mapping[int, Adjudication]
) -> dict[str, Any]:
    """A knockout section's standings: its places (28.4) once the final is decided, in the shape of a points
    section's (``rows`` with ``place``), with the bracket's state."""
    bracket = bracket_json(connection, slug, section_slug, states)
    player = table_of(Player)
    row = section_row(connection, slug, section_slug)
    teams = dict(
        connection.execute(select(player.c.start_no, player.c.team).where(player.c.section_id == row.id)).all()
    )
    rows = [{"place": p["place"], "place_label": p["label"], "start_no": p["start_no"], "name": p["name"],
             "team": teams.get(p["start_no"], ""), "eliminated_in": p["eliminated_in"], "article": "28.4"}
            for p in bracket["places"]]  # fmt: skip
    return {"event": bracket["event"], "section": section_slug, "section_name": bracket["section_name"],
            "system": "knockout", "drawn": bracket["drawn"], "finished": bracket["finished"],
            "rounds": bracket.get("rounds", 0), "rows": rows, "tiebreaks": [], "article": "28.4",
            "bracket": bracket}  # fmt: skip


def knockout_standings_csv(standings: Mapping[str, Any]) -> str:
    """The places as CSV: place (shared as "5–8"), start number, name, team, the round lost (28.4)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["place", "start_no", "name", "team", "eliminated_in_round"])
    for r in standings["rows"]:
        writer.writerow([r["place_label"], r["start_no"], spreadsheet_text(r["name"]), spreadsheet_text(r["team"]),
                         r["eliminated_in"] or ""])  # fmt: skip
    return out.getvalue()
