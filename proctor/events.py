"""Events (tournaments) set up from one TOML file: ``proctor event load event.toml`` and ``proctor event export``.

The file (docs/events.md has a complete example for a national championship):

- ``[event]``: ``slug``, ``name``, optional ``starts``, ``ends``, ``time_zone`` (an IANA zone, UTC by default: every
  page and report shows times in it; proctor.time_zones) and ``appeal_deadline_minutes`` (14.9: how long after the
  end of a round an appeal on its games may be lodged; proctor.appeals);
- ``[[arbiters]]``: ``name`` and ``role`` (arbiter, deputy-chief, chief, committee; 16); their login tokens are issued
  by ``proctor arbiter add``;
- ``[[sections]]``: ``slug``, ``name``, ``rule``, ``opening``, optional ``max_candidates``, ``time_control``,
  ``system`` (swiss, round-robin, knockout), ``rounds``, ``scoring`` (e.g. ``"1/0.5/0"``), ``tiebreaks``,
  ``games_per_match`` and ``match_scoring`` (regulations 2023 VII(2)), a ``[sections.policy]`` table, and the
  players and pairings (a match's games by ``game``), either as ``[[sections.players]]`` and
  ``[[sections.pairings]]`` or from a TRF file (``trf = "men.trf"``, relative to the event file).

Every value is checked before anything is stored; an error names where it is (``sections[1].players[4].gender``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

import tomli_w
from sqlalchemy import Connection, delete, func, insert, select, update
from sqlmodel import col

from engine.adjudication import BothDisconnected, restore
from engine.clock import TimeControl, find_time_control
from engine.errors import EngineError
from engine.game import AdjudicationMode
from engine.knockout import MATCH_LENGTHS
from engine.openings import find_opening
from engine.penalties import DEFAULT_POLICY_LADDERS, Ladder, PenaltyPolicy
from engine.rules import find_rule_set
from engine.standings import RULES_ORDER, ResultKind, System, parse_tiebreaks
from engine.trf import read_trf
from proctor.account_log import record_account
from proctor.brackets import (
    STORED_RESULTS,
    BracketError,
    BracketSettings,
    advance_section,
    replay_bracket,
    replay_section,
    section_row,
    store_draw,
)
from proctor.ear_checks import MAX_PER_HOUR, SPACING_MS
from proctor.errors import BadRequestError, ConflictError, NotFoundError
from proctor.game_results import game_results
from proctor.loaded_results import record_loaded_results
from proctor.models import Arbiter, BracketDraw, Game, Pairing, Player, Section, Tournament, Withdrawal
from proctor.time_zones import DEFAULT_ZONE, find_zone
from video.devices import devices_for_policy

ROLES: Final = ("arbiter", "deputy-chief", "chief", "committee", "appeals-committee")
SYSTEMS: Final = ("swiss", "round-robin", "knockout")
CHECKS: Final = ("virtual-background", "earphones", "absence", "extra-person", "devices", "camera")


class EventFileError(BadRequestError):
    code = "event-file"


@dataclass
class PolicySpec:
    """A section's proctoring policy."""

    camera_required: bool = True
    checks: list[str] = field(default_factory=lambda: list(CHECKS))
    thresholds: dict[str, float] = field(default_factory=dict)
    reconnect_window_s: float | None = None
    lateness_tolerance_s: float = 0
    confirm_time_verdicts: bool = False
    verdict_confirmation_deadline_s: float | None = None
    """How long a pending time verdict may wait for an arbiter before its case escalates to the chief arbiter
    (nothing is ruled automatically; proctor.casebook); None: no deadline."""
    penalties: dict[str, str] = field(default_factory=lambda: {k: v.value for k, v in DEFAULT_POLICY_LADDERS.items()})
    evidence_retention_days: int = 365
    ear_check_at_start: bool = False
    """The service prompts an ear check (36.2) for each player at the start of each game."""
    ear_checks_per_hour: int = 0
    """And this many more an hour of play, at random times (proctor/ear_checks.py)."""
    auto_pan_check: bool = False
    """When the passive virtual-background signal is raised, the service asks the player for the pan check itself
    (36.4) and notes its verdict on the incident."""
    adjudication: str = "automatic"
    """Who acts on Black's forbidden moves (19.1.2): ``automatic``, the service rules at once (35.1); ``claim``, White
    must point them out (a 3-3 or 4-4 lapses once White moves, an overline can be claimed until the game ends)."""
    both_disconnected: str = "arbiter"
    """When a reconnect window or a flag runs out while both players are disconnected (37.7): ``arbiter``, no
    automatic loss, the arbiter decides; ``window``, each player's own window counts, the first to run out loses."""
    devices: list[str] = field(default_factory=lambda: ["front"])
    """The devices each player streams (video.devices): ``front`` (the webcam, always), ``side`` (a second camera,
    usually a phone), ``screen`` (the whole screen, shared; 36.4, 36.4.4)."""
    screen_retention_days: int = 30
    """How long the shared screen's stills and clips are kept (a screen is more private than a face)."""
    microphone_required: bool = False
    """The player's page sends the microphone with the front camera, and the service listens (proctor.microphone):
    speech that is not the player's own is a review flag (36.4.2, 36.4.3), a muted or lost microphone a case (36.4)."""
    sound_retention_days: int = 30
    """How long the microphone's clips are kept (sound is more private than a face)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "camera_required": self.camera_required, "checks": self.checks, "thresholds": self.thresholds,
            "reconnect_window_s": self.reconnect_window_s, "lateness_tolerance_s": self.lateness_tolerance_s,
            "confirm_time_verdicts": self.confirm_time_verdicts,
            "verdict_confirmation_deadline_s": self.verdict_confirmation_deadline_s, "penalties": self.penalties,
            "evidence_retention_days": self.evidence_retention_days, "ear_check_at_start": self.ear_check_at_start,
            "ear_checks_per_hour": self.ear_checks_per_hour, "auto_pan_check": self.auto_pan_check,
            "both_disconnected": self.both_disconnected, "adjudication": self.adjudication,
            "devices": self.devices, "screen_retention_days": self.screen_retention_days,
            "microphone_required": self.microphone_required, "sound_retention_days": self.sound_retention_days,
        }  # fmt: skip


@dataclass
class PlayerSpec:
    start_no: int
    name: str
    team: str = ""
    gender: str = ""
    birth_date: str = ""
    rating: int = 0
    platform_ref: str = ""


@dataclass
class PairingSpec:
    round_no: int
    board: int
    black: int
    white: int | None
    platform_game_id: str = ""
    result: str = ""
    game_no: int = 1
    """The game's number within its match (regulations 2023 VII(2): the two-game system)."""


MATCH_SCORINGS: Final = ("games", "match")
"""How a match of several games scores in the standings (regulations 2023 VII(2) leaves it open; docs/events.md):
``games``, each game's points (a 1-0 and a 0-1 give each player 1); ``match``, the match's result by the games'
total (a win, a draw or a loss of the round, with the section's scoring)."""


@dataclass
class SectionSpec:
    slug: str
    name: str
    rule: str
    opening: str
    time_control: str
    system: str
    rounds: int
    scoring: str
    tiebreaks: str
    games_per_match: int
    max_candidates: int | None
    policy: PolicySpec
    players: list[PlayerSpec]
    pairings: list[PairingSpec]
    match_scoring: str = "games"
    knockout: KnockoutSpec | None = None
    """The bracket's settings, for a knockout section."""
    play_off_ties: str = "none"
    """Which ties a play-off decides (PLAY_OFF_TIES)."""


PLAY_OFF_TIES: Final = ("none", "qualification", "medals")
"""Which ties left after every tie-break a play-off decides (regulations 2023 VII(4)3): ``none``, places are shared;
``qualification``, a tie across the cut to the knockout finals; ``medals``, a tie touching places 1 to 3."""
DEFAULT_PLAY_OFF: Final = ("playoff-5+3", "playoff-3+2")
"""The regulations' play-off (2023 VII(4)3, 2021 VIII(5)): two games at 5 min + 3 s, then single games at 3 min + 2 s
until one is won."""
KNOCKOUT_KEYS: Final = ("qualify_from", "qualifiers", "third_place_match", "final_games", "play_off", "seeds")
"""The keys of a knockout section only."""
MEDAL_PLACES: Final = 3
"""Places 1 to 3 receive medals (regulations 2023 IX(1))."""


@dataclass
class KnockoutSpec:
    """A knockout section (27.1; regulations 2023 VII(3): the top eight of the preliminaries play the finals)."""

    qualify_from: str = ""
    """The preliminary section whose final standings seed the bracket; empty: the section lists its own players."""
    qualifiers: int = 0
    third_place_match: bool = False
    """28.4: places 3 and 4 decided by a match of the semi-finals' losers; otherwise they share 3rd."""
    final_games: int | None = None
    """The final's games when it is a longer match than the others (27.7); None: ``games_per_match``."""
    play_off: tuple[str, str] = DEFAULT_PLAY_OFF
    """A tied match's play-off: the time control of its two first games, then of the single games (30.4)."""
    seeds: list[int] = field(default_factory=list)
    """The listed players' start numbers by seed; empty: by start number."""

    def to_dict(self) -> dict[str, Any]:
        return {"qualify_from": self.qualify_from, "qualifiers": self.qualifiers,
                "third_place_match": self.third_place_match, "final_games": self.final_games,
                "play_off": list(self.play_off), "seeds": list(self.seeds)}  # fmt: skip


TEAM_SCORINGS: Final = ("youth",)
"""How a team event is scored: ``youth``, each unit's best-placed male plus best-placed female player's points, ties
to the lower sum of their places, then the male player's place (2021 regulations VI(2), VIII(6)2)."""


@dataclass
class TeamSpec:
    slug: str
    name: str
    sections: list[str]
    scoring: str = "youth"


@dataclass
class EventSpec:
    slug: str
    name: str
    starts: str
    ends: str
    arbiters: list[tuple[str, str]]
    sections: list[SectionSpec]
    raw: dict[str, Any]
    time_zone: str = DEFAULT_ZONE
    """The IANA zone in which pages and reports show the event's times."""
    teams: list[TeamSpec] = field(default_factory=list)
    """Team events scored from the individual sections (``[[teams]]``)."""


# --- Reading ---------------------------------------------------------------------------------------------------------


class _Reader:
    """Typed access to one table of the file, with the table's path in every error."""

    def __init__(self, table: object, where: str, known: tuple[str, ...]) -> None:
        if not isinstance(table, dict):
            raise EventFileError(f"{where}: expected a table")
        unknown = sorted(set(table) - set(known))
        if unknown:
            raise EventFileError(f"{where}: unknown key(s) {', '.join(unknown)}; expected {', '.join(known)}")
        self.table: dict[str, Any] = table
        self.where = where

    def fail(self, key: str, expected: str) -> EventFileError:
        return EventFileError(f"{self.where}.{key}: expected {expected}, got {self.table.get(key)!r}")

    def text(self, key: str, default: str | None = None, pattern: str | None = None) -> str:
        value = self.table.get(key, default)
        if not isinstance(value, str) or (pattern and not re.fullmatch(pattern, value)):
            raise self.fail(key, f"text{' matching ' + pattern if pattern else ''}")
        return value

    def integer(self, key: str, default: int | None = None, minimum: int = 0) -> int:
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"a whole number of at least {minimum}")
        return value

    def optional_integer(self, key: str, minimum: int = 0) -> int | None:
        return None if key not in self.table else self.integer(key, minimum=minimum)

    def number(self, key: str, default: float | None = None) -> float:
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise self.fail(key, "a number, 0 or more")
        return float(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.table.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, "true or false")
        return value

    def tables(self, key: str) -> list[Any]:
        value = self.table.get(key, [])
        if not isinstance(value, list):
            raise self.fail(key, "an array of tables")
        return value


def _check(where: str, action: Any) -> Any:
    try:
        return action()
    except EngineError as error:
        raise EventFileError(f"{where}: {error}") from None


def _microphone(reader: _Reader) -> tuple[bool, int]:
    """``microphone_required`` and ``sound_retention_days`` (proctor.microphone)."""
    return reader.flag("microphone_required", False), reader.integer("sound_retention_days", 30, minimum=1)


def _policy(table: object, where: str) -> PolicySpec:
    known = ("camera_required", "checks", "thresholds", "reconnect_window_s", "lateness_tolerance_s",
             "confirm_time_verdicts", "verdict_confirmation_deadline_s", "penalties", "evidence_retention_days",
             "ear_check_at_start", "ear_checks_per_hour", "auto_pan_check", "both_disconnected",
             "adjudication", "devices", "screen_retention_days", "microphone_required",
             "sound_retention_days")  # fmt: skip
    reader = _Reader(table, where, known)
    policy = PolicySpec()
    policy.camera_required = reader.flag("camera_required", True)
    checks = reader.table.get("checks", list(CHECKS))
    if not isinstance(checks, list) or any(c not in CHECKS for c in checks):
        raise reader.fail("checks", f"a list drawn from {', '.join(CHECKS)}")
    policy.checks = list(checks)
    thresholds = reader.table.get("thresholds", {})
    if not isinstance(thresholds, dict) or any(
        not isinstance(v, (int, float)) or isinstance(v, bool) for v in thresholds.values()
    ):
        raise reader.fail("thresholds", "a table of numbers")
    policy.thresholds = {str(k): float(v) for k, v in thresholds.items()}
    policy.reconnect_window_s = reader.number("reconnect_window_s") if "reconnect_window_s" in reader.table else None
    policy.both_disconnected = reader.text("both_disconnected", "arbiter")
    if policy.both_disconnected not in {item.value for item in BothDisconnected}:
        raise reader.fail("both_disconnected", "arbiter or window (37.7: when both players are disconnected)")
    policy.adjudication = reader.text("adjudication", "automatic")
    if policy.adjudication not in {mode.value for mode in AdjudicationMode}:
        raise reader.fail("adjudication", "automatic or claim (19.1.2: who acts on Black's forbidden moves)")
    policy.lateness_tolerance_s = reader.number("lateness_tolerance_s", 0)
    policy.confirm_time_verdicts = reader.flag("confirm_time_verdicts", False)
    if "verdict_confirmation_deadline_s" in reader.table:
        policy.verdict_confirmation_deadline_s = reader.number("verdict_confirmation_deadline_s")
    penalties = reader.table.get("penalties", {})
    if not isinstance(penalties, dict):
        raise reader.fail("penalties", "a table of article = ladder")
    merged = {k: v.value for k, v in DEFAULT_POLICY_LADDERS.items()}
    for article, ladder in penalties.items():
        if ladder not in {item.value for item in Ladder}:
            raise EventFileError(f"{where}.penalties.{article}: expected one of {', '.join(i.value for i in Ladder)}")
        merged[article] = ladder
    _check(f"{where}.penalties", lambda: PenaltyPolicy({k: Ladder(v) for k, v in merged.items()}))
    policy.penalties = merged
    policy.evidence_retention_days = reader.integer("evidence_retention_days", 365, minimum=1)
    policy.screen_retention_days = reader.integer("screen_retention_days", 30, minimum=1)
    policy.microphone_required, policy.sound_retention_days = _microphone(reader)
    devices = reader.table.get("devices", ["front"])
    try:
        if not isinstance(devices, list):
            raise ValueError("not a list")
        policy.devices = [device.value for device in devices_for_policy(devices)]
    except ValueError as error:
        raise reader.fail("devices", f'a list drawn from front, side, screen, with "front" ({error})') from None
    policy.ear_check_at_start = reader.flag("ear_check_at_start", False)
    policy.auto_pan_check = reader.flag("auto_pan_check", False)
    per_hour = reader.table.get("ear_checks_per_hour", 0)
    if isinstance(per_hour, bool) or not isinstance(per_hour, int) or not 0 <= per_hour <= MAX_PER_HOUR:
        raise reader.fail("ear_checks_per_hour", f"a whole number from 0 to {MAX_PER_HOUR} (36.2: scheduled ear "
                          f"checks are at least {SPACING_MS // 60_000} minutes apart)")  # fmt: skip
    policy.ear_checks_per_hour = per_hour
    if (policy.ear_check_at_start or policy.ear_checks_per_hour) and "earphones" not in policy.checks:
        raise EventFileError(f"{where}: the scheduled ear checks (ear_check_at_start, ear_checks_per_hour; 36.2) need "
                             f'"earphones" in checks')  # fmt: skip
    return policy


def _players(items: list[Any], where: str) -> list[PlayerSpec]:
    players = []
    seen: set[int] = set()
    for index, item in enumerate(items):
        path = f"{where}[{index}]"
        reader = _Reader(item, path, ("start_no", "name", "team", "gender", "birth_date", "rating", "platform_ref"))
        player = PlayerSpec(
            start_no=reader.integer("start_no", minimum=1),
            name=reader.text("name", pattern=r".*\S.*"),
            team=reader.text("team", ""),
            gender=reader.text("gender", "", pattern=r"[mf]?"),
            birth_date=reader.text("birth_date", "", pattern=r"(\d{4}-\d{2}-\d{2})?"),
            rating=reader.integer("rating", 0),
            platform_ref=reader.text("platform_ref", ""),
        )
        if player.start_no in seen:
            raise EventFileError(f"{path}.start_no: {player.start_no} is given twice")
        seen.add(player.start_no)
        players.append(player)
    return players


def _pairings(
    items: list[Any], where: str, numbers: set[int], games_per_match: int, play_offs: bool = False
) -> list[PairingSpec]:
    """The pairings, each game of a match its own (``game``, 1 by default); a match's games missing from the file are
    added with the colours swapped game by game (regulations 2023 VII(2): in the second game the players swap first
    and second).  ``play_offs``: a knockout's match may go on past ``games_per_match`` (its play-off games)."""
    pairings = []
    seen: dict[tuple[int, int, int], PairingSpec] = {}
    for index, item in enumerate(items):
        path = f"{where}[{index}]"
        reader = _Reader(item, path, ("round", "board", "game", "black", "white", "platform_game_id", "result"))
        white = reader.optional_integer("white", minimum=1)
        pairing = PairingSpec(
            reader.integer("round", minimum=1), reader.integer("board", minimum=1), reader.integer("black", minimum=1),
            white, reader.text("platform_game_id", ""),
            reader.text("result", "", pattern=r"(1-0|0-1|½-½|\+/-|-/\+|-/-|0-0)?"),
            reader.integer("game", 1, minimum=1),
        )  # fmt: skip
        if pairing.game_no > games_per_match and not play_offs:
            raise EventFileError(f"{path}.game: the section plays {games_per_match} game(s) per match "
                                 "(games_per_match)")  # fmt: skip
        for side, number in (("black", pairing.black), ("white", pairing.white)):
            if number is not None and number not in numbers:
                raise EventFileError(f"{path}.{side}: no player with start number {number}")
        key = (pairing.round_no, pairing.board, pairing.game_no)
        if key in seen:
            game = f" game {pairing.game_no}" if games_per_match > 1 else ""
            raise EventFileError(f"{path}: round {pairing.round_no} board {pairing.board}{game} is given twice")
        seen[key] = pairing
        pairings.append(pairing)
    if not play_offs:
        pairings.extend(_missing_games(pairings, games_per_match))
    _check_matches(pairings, where)
    return sorted(pairings, key=lambda p: (p.round_no, p.board, p.game_no))


def _missing_games(pairings: list[PairingSpec], games_per_match: int) -> list[PairingSpec]:
    """A match's games that the file does not list, colours swapped game by game from its first (VII(2))."""
    given = {(p.round_no, p.board, p.game_no) for p in pairings}
    added = []
    for first in [p for p in pairings if p.game_no == 1]:
        if first.white is None:
            continue
        for game_no in range(2, games_per_match + 1):
            if (first.round_no, first.board, game_no) not in given:
                black, white = (first.black, first.white) if game_no % 2 else (first.white, first.black)
                added.append(PairingSpec(first.round_no, first.board, black, white, game_no=game_no))
    return added


def _check_matches(pairings: list[PairingSpec], where: str) -> None:
    """A player plays once a round, except the games of one match (the same two players on one board), which swap
    colours game by game (regulations 2023 VII(2)); a match's games are numbered from 1 without a gap."""
    boards: dict[tuple[int, int], list[PairingSpec]] = {}
    for pairing in pairings:
        boards.setdefault((pairing.round_no, pairing.board), []).append(pairing)
    seats: dict[tuple[int, int], int] = {}
    for (round_no, board), games in sorted(boards.items()):
        games.sort(key=lambda p: p.game_no)
        first = games[0]
        place = f"{where}: round {round_no} board {board}"
        if [p.game_no for p in games] != list(range(1, len(games) + 1)):
            raise EventFileError(f"{place}: its games must be numbered 1, 2, … (game 1 is missing or one is skipped)")
        if first.white is None and len(games) > 1:
            raise EventFileError(f"{place}: a bye is one pairing, with no further games")
        for game in games[1:]:
            expected = (first.black, first.white) if game.game_no % 2 else (first.white, first.black)
            if (game.black, game.white) != expected:
                raise EventFileError(
                    f"{place} game {game.game_no}: a match's games are between the same two players, colours "
                    f"swapped game by game (regulations 2023 VII(2)): expected black {expected[0]}, white {expected[1]}"
                )  # fmt: skip
        for player in (first.black, first.white):
            if player is None:
                continue
            other = seats.setdefault((round_no, player), board)
            if other != board:
                raise EventFileError(
                    f"{place}: player {player} already plays on board {other} in round {round_no}; a player plays "
                    "once a round, or the games of one match on one board (regulations 2023 VII(2))"
                )  # fmt: skip


def _from_trf(path: Path, where: str) -> tuple[list[PlayerSpec], list[PairingSpec]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise EventFileError(f"{where}: cannot read {path}: {error.strerror}") from None
    tournament = _check(where, lambda: read_trf(text)).tournament
    players = [PlayerSpec(e.start_no, e.name, e.team, {"w": "f"}.get(e.sex, e.sex) if e.sex in "mwf" else "",
                          "", e.rating) for e in tournament.entrants]  # fmt: skip
    pairings = []
    results = {ResultKind.WIN: "1-0", ResultKind.LOSS: "0-1", ResultKind.DRAW: "½-½",
               ResultKind.FORFEIT_WIN: "+/-", ResultKind.FORFEIT_LOSS: "-/+"}  # fmt: skip
    by_number = tournament.by_start_no()
    for round_no in range(1, tournament.rounds + 1):
        board, done = 0, set()
        for entrant in sorted(tournament.entrants, key=lambda e: e.start_no):
            entry = entrant.round(round_no)
            if entry.opponent is None or frozenset((entrant.start_no, entry.opponent)) in done:
                continue
            done.add(frozenset((entrant.start_no, entry.opponent)))
            # TRF's "w" (chess White, who moves first) is the first player, who takes Black here (art. 10).
            first_is_me = entry.color == "w" or (entry.color is None and entrant.start_no < entry.opponent)
            first, second = (entrant.start_no, entry.opponent) if first_is_me else (entry.opponent, entrant.start_no)
            kind = by_number[first].round(round_no).kind
            board += 1
            pairings.append(PairingSpec(round_no, board, first, second, "", results.get(kind, "")))
    return players, pairings


def _matches(reader: _Reader) -> tuple[int, str]:
    """Games per pairing and how a match of several scores (regulations 2023 VII(2))."""
    games_per_match = reader.integer("games_per_match", 1, 1)
    match_scoring = reader.text("match_scoring", "games")
    if match_scoring not in MATCH_SCORINGS:
        raise reader.fail("match_scoring", f"one of {', '.join(MATCH_SCORINGS)} (regulations 2023 VII(2))")
    return games_per_match, match_scoring


def _entries(
    reader: _Reader, where: str, base: Path, games_per_match: int, play_offs: bool = False
) -> tuple[list[PlayerSpec], list[PairingSpec]]:
    """A section's players and pairings, inline or from its TRF file."""
    if "trf" in reader.table and ("players" in reader.table or "pairings" in reader.table):
        raise EventFileError(f"{where}: give the players and pairings either inline or as a TRF file, not both")
    if "trf" in reader.table:
        if games_per_match > 1:
            raise EventFileError(f"{where}: a TRF file has one game per round: give a match's games inline")
        return _from_trf(base / reader.text("trf"), f"{where}.trf")
    players = _players(reader.tables("players"), f"{where}.players")
    pairings = _pairings(reader.tables("pairings"), f"{where}.pairings", {p.start_no for p in players},
                         games_per_match, play_offs)  # fmt: skip
    return players, pairings


def _section(item: object, where: str, base: Path, earlier: list[SectionSpec]) -> SectionSpec:
    """One ``[[sections]]`` table, checked (``earlier``: the sections before it, which a knockout may qualify from)."""
    known = ("slug", "name", "rule", "opening", "max_candidates", "time_control", "system", "rounds", "scoring",
             "tiebreaks", "games_per_match", "match_scoring", "policy", "players", "pairings", "trf",
             "qualify_from", "qualifiers", "third_place_match", "final_games", "play_off", "seeds",
             "play_off_ties")  # fmt: skip
    reader = _Reader(item, where, known)
    slug = reader.text("slug", pattern=r"[a-z0-9][a-z0-9-]*")
    rule = reader.text("rule", "renju")
    _check(f"{where}.rule", lambda: find_rule_set(rule))
    max_candidates = reader.optional_integer("max_candidates", minimum=1)
    opening = reader.text("opening", "free")
    _check(f"{where}.opening", lambda: find_opening(opening, max_candidates))
    time_control = reader.text("time_control")
    _check(f"{where}.time_control", lambda: find_time_control(time_control))
    system = reader.text("system", "swiss")
    if system not in SYSTEMS:
        raise reader.fail("system", f"one of {', '.join(SYSTEMS)}")
    scoring = reader.text("scoring", "1/0.5/0", pattern=r"\d+(\.\d+)?/\d+(\.\d+)?/\d+(\.\d+)?")
    default_order = RULES_ORDER[System.ROUND_ROBIN if system == "round-robin" else System.SWISS]
    tiebreaks = reader.text("tiebreaks", default_order)
    _check(f"{where}.tiebreaks", lambda: parse_tiebreaks(tiebreaks))
    games_per_match, match_scoring = _matches(reader)
    knockout = _knockout(reader, time_control, earlier) if system == "knockout" else None
    misplaced = [key for key in KNOCKOUT_KEYS if key in reader.table] if knockout is None else []
    if misplaced:
        raise EventFileError(f"{where}.{misplaced[0]}: only a knockout section (system = \"knockout\") has this key; "
                             "a tie in a points table is played off by play_off_ties")  # fmt: skip
    players: list[PlayerSpec] = []
    pairings: list[PairingSpec] = []
    if knockout is None or not knockout.qualify_from or "players" in reader.table:
        players, pairings = _entries(reader, where, base, games_per_match, knockout is not None)
    if knockout is not None and knockout.qualify_from and players and len(players) != knockout.qualifiers:
        raise EventFileError(f"{where}.players: a knockout drawn from {knockout.qualify_from} lists its "
                             f"{knockout.qualifiers} qualifiers by seed, or none before the draw")  # fmt: skip
    play_off_ties = reader.text("play_off_ties", "none")
    if play_off_ties not in PLAY_OFF_TIES or (system == "knockout" and play_off_ties != "none"):
        raise reader.fail("play_off_ties", f"one of {', '.join(PLAY_OFF_TIES)} (regulations 2023 VII(4)3), and "
                          "none in a knockout, whose every tied match is played off")  # fmt: skip
    rounds = reader.integer("rounds", 1, minimum=1)
    if knockout is not None:
        rounds = _knockout_rounds(knockout, players, pairings, games_per_match, where)
    return SectionSpec(
        slug, reader.text("name", pattern=r".*\S.*"), rule, opening, time_control, system, rounds, scoring, tiebreaks,
        games_per_match, max_candidates, _policy(reader.table.get("policy", {}), f"{where}.policy"), players,
        pairings, match_scoring, knockout, play_off_ties,
    )  # fmt: skip


def parse_event(text: str, base: Path) -> EventSpec:
    """Read and check an event file (``base``: the folder TRF paths are relative to)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise EventFileError(f"not valid TOML: {error}") from None
    top = _Reader(raw, "file", ("event", "arbiters", "sections", "teams"))
    head = _Reader(
        raw.get("event"), "event", ("slug", "name", "starts", "ends", "time_zone", "appeal_deadline_minutes")
    )
    time_zone = head.text("time_zone", DEFAULT_ZONE)
    if "appeal_deadline_minutes" in head.table and head.number("appeal_deadline_minutes") <= 0:
        raise head.fail("appeal_deadline_minutes", "a number of minutes after the end of the round, more than 0 (14.9)")
    try:
        find_zone(time_zone)
    except ValueError:
        raise head.fail("time_zone", "an IANA time zone such as Asia/Shanghai or UTC") from None
    arbiters = []
    for index, item in enumerate(top.tables("arbiters")):
        reader = _Reader(item, f"arbiters[{index}]", ("name", "role"))
        role = reader.text("role")
        if role not in ROLES:
            raise reader.fail("role", f"one of {', '.join(ROLES)}")
        arbiters.append((reader.text("name", pattern=r".*\S.*"), role))
    _check_appeals_committee(arbiters)
    sections: list[SectionSpec] = []
    for index, item in enumerate(top.tables("sections")):
        section = _section(item, f"sections[{index}]", base, sections)
        if section.slug in {s.slug for s in sections}:
            raise EventFileError(f"sections[{index}].slug: {section.slug!r} is given twice")
        sections.append(section)
    _check_cuts(sections)
    teams = _teams(top, {s.slug for s in sections})
    date = r"(\d{4}-\d{2}-\d{2})?"
    return EventSpec(
        head.text("slug", pattern=r"[a-z0-9][a-z0-9-]*"), head.text("name", pattern=r".*\S.*"),
        head.text("starts", "", pattern=date), head.text("ends", "", pattern=date), arbiters, sections, raw,
        time_zone, teams,
    )  # fmt: skip


def _nominal_ms(control: TimeControl) -> int:
    """A game's nominal length for one player: the initial time and 60 moves' increments (as FIDE compares rates)."""
    return control.initial_ms + 60 * control.increment_ms + control.after_pool_ms


def _knockout(reader: _Reader, time_control: str, earlier: list[SectionSpec]) -> KnockoutSpec:
    """A knockout section's settings (27.1, 27.7, 28.4; regulations 2023 VII(3), VII(4)3)."""
    games = reader.integer("games_per_match", 1, 1)
    if games not in MATCH_LENGTHS:
        raise reader.fail("games_per_match", "1, 2, 3, 5 or 7 games a match in a knockout (27.7)")
    final = reader.optional_integer("final_games", 1)
    if final is not None and final not in MATCH_LENGTHS:
        raise reader.fail("final_games", "1, 2, 3, 5 or 7 games (27.7)")
    qualify_from = reader.text("qualify_from", "")
    qualifiers = reader.integer("qualifiers", 0, 0)
    if qualify_from:
        source = next((s for s in earlier if s.slug == qualify_from), None)
        if source is None or source.system == "knockout":
            raise reader.fail("qualify_from", "the slug of a preliminary section (Swiss or round robin) listed before "
                              "this one (regulations 2023 VII(3))")  # fmt: skip
        if not 2 <= qualifiers <= max(2, len(source.players)):
            raise reader.fail("qualifiers", f"how many of {qualify_from}'s players go on: 2 to its "
                              f"{len(source.players)} players (regulations 2023 VII(3): the top eight)")  # fmt: skip
    elif "qualifiers" in reader.table:
        raise reader.fail("qualifiers", "no qualifiers without qualify_from (the section's players are listed)")
    listed = reader.table.get("play_off", list(DEFAULT_PLAY_OFF))
    if not isinstance(listed, list) or len(listed) != 2 or not all(isinstance(x, str) for x in listed):
        raise reader.fail("play_off", "two time controls: the play-off's first two games, then its single games "
                          '(regulations 2023 VII(4)3: ["5+3", "3+2"])')  # fmt: skip
    controls = [_check(f"{reader.where}.play_off", lambda text=text: find_time_control(text)) for text in listed]
    regular = find_time_control(time_control)
    if any(_nominal_ms(control) >= _nominal_ms(regular) for control in controls):
        raise reader.fail("play_off", f"time controls faster than the section's own ({time_control}): a play-off's "
                          "rate must be faster than the normal games' (30.4)")  # fmt: skip
    seeds = reader.table.get("seeds", [])
    if not isinstance(seeds, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in seeds):
        raise reader.fail("seeds", "a list of the section's start numbers, seed 1 first")
    third = reader.flag("third_place_match", False)
    return KnockoutSpec(qualify_from, qualifiers, third, final, (listed[0], listed[1]), list(seeds))


def _knockout_rounds(
    spec: KnockoutSpec, players: list[PlayerSpec], pairings: list[PairingSpec], games: int, where: str
) -> int:
    """The bracket's rounds (2^k slots for the field); a listed field is drawn now: its seeds and pairings must fit
    the bracket (proctor.brackets)."""
    field_size = spec.qualifiers if spec.qualify_from else len(players)
    if field_size < 2:
        raise EventFileError(f"{where}: a knockout needs at least 2 players (27.1): list them, or qualify_from a "
                             "preliminary section with qualifiers")  # fmt: skip
    if spec.third_place_match and field_size < 4:
        raise EventFileError(f"{where}.third_place_match: a match for third place needs at least 4 players (28.4)")
    if players:
        numbers = sorted(p.start_no for p in players)
        if spec.seeds and sorted(spec.seeds) != numbers:
            raise EventFileError(f"{where}.seeds: every listed player's start number once, seed 1 first")
        settings = BracketSettings(games, spec.final_games, spec.third_place_match, spec.play_off)
        try:
            replay_bracket(settings, spec.seeds or numbers, pairings, lambda p: p.result or None)
        except (EngineError, BracketError) as error:
            raise EventFileError(f"{where}.pairings: {error}") from None
    return (field_size - 1).bit_length()


def _check_cuts(sections: list[SectionSpec]) -> None:
    """``play_off_ties = "qualification"`` needs a knockout that qualifies from the section."""
    feeding = {s.knockout.qualify_from for s in sections if s.knockout is not None and s.knockout.qualify_from}
    for index, section in enumerate(sections):
        if section.play_off_ties == "qualification" and section.slug not in feeding:
            raise EventFileError(f"sections[{index}].play_off_ties: qualification needs a knockout section that "
                                 f"qualifies from {section.slug} (qualify_from)")  # fmt: skip


def _check_appeals_committee(arbiters: list[tuple[str, str]]) -> None:
    """22.2: an odd number of members, at least 3, when the file names the committee at all."""
    appeals = sum(1 for _, role in arbiters if role == "appeals-committee")
    if appeals and (appeals < 3 or appeals % 2 == 0):
        raise EventFileError(f"arbiters: the appeals committee (role appeals-committee) needs an odd number of "
                             f"members, at least 3 (22.2); the file names {appeals}")  # fmt: skip


def _teams(top: _Reader, sections: set[str]) -> list[TeamSpec]:
    """``[[teams]]``: team events scored from individual sections (2021 regulations VIII(6)2)."""
    teams: list[TeamSpec] = []
    for index, item in enumerate(top.tables("teams")):
        reader = _Reader(item, f"teams[{index}]", ("slug", "name", "sections", "scoring"))
        slug = reader.text("slug", pattern=r"[a-z0-9][a-z0-9-]*")
        if slug in {team.slug for team in teams}:
            raise EventFileError(f"teams[{index}].slug: {slug!r} is given twice")
        listed = reader.table.get("sections")
        if not isinstance(listed, list) or not listed or any(not isinstance(s, str) or s not in sections
                                                             for s in listed):  # fmt: skip
            raise reader.fail("sections", f"a list of this file's section slugs ({', '.join(sorted(sections))})")
        scoring = reader.text("scoring", "youth")
        if scoring not in TEAM_SCORINGS:
            raise reader.fail("scoring", f"one of {', '.join(TEAM_SCORINGS)}")
        teams.append(TeamSpec(slug, reader.text("name", pattern=r".*\S.*"), list(listed), scoring))
    return teams


# --- Storing and exporting -------------------------------------------------------------------------------------------


def store_event(connection: Connection, spec: EventSpec, now: int, replace: bool = False) -> int:
    """Store a checked event in one transaction; an existing slug needs ``replace`` and no linked games."""
    existing = connection.execute(select(col(Tournament.id)).where(col(Tournament.slug) == spec.slug)).scalar()
    if existing is not None:
        if not replace:
            raise ConflictError(f"event {spec.slug!r} already exists: use --replace to load it again")
        sections = select(col(Section.id)).where(col(Section.tournament_id) == existing)
        pairings = select(col(Pairing.id)).where(col(Pairing.section_id).in_(sections))
        linked = connection.execute(select(func.count()).where(col(Game.pairing_id).in_(pairings))).scalar_one()
        if linked:
            raise ConflictError(
                f"event {spec.slug!r} has {linked} game(s) linked to its pairings: it cannot be replaced"
            )
        withdrawn = connection.execute(
            select(func.count()).where(col(Withdrawal.section_id).in_(sections))
        ).scalar_one()
        if withdrawn:
            raise ConflictError(f"event {spec.slug!r} has {withdrawn} withdrawal(s) recorded (24.4): it cannot be "
                                "replaced")  # fmt: skip
        connection.execute(delete(Pairing).where(col(Pairing.section_id).in_(sections)))
        connection.execute(delete(BracketDraw).where(col(BracketDraw.section_id).in_(sections)))
        connection.execute(delete(Player).where(col(Player.section_id).in_(sections)))
        connection.execute(delete(Section).where(col(Section.tournament_id) == existing))
        connection.execute(delete(Tournament).where(col(Tournament.id) == existing))
    tournament_id = connection.execute(
        insert(Tournament)
        .values(slug=spec.slug, name=spec.name, config=spec.raw, created_ms=now)
        .returning(col(Tournament.id))
    ).scalar_one()
    for name, role in spec.arbiters:
        if connection.execute(select(col(Arbiter.id)).where(col(Arbiter.name) == name)).scalar() is None:
            connection.execute(insert(Arbiter).values(name=name, role=role, token_hash=""))
            record_account(connection, name, f"event {spec.slug}", "added", now)
    for section in spec.sections:
        section_id = connection.execute(
            insert(Section).values(
                tournament_id=tournament_id, slug=section.slug, name=section.name, rule=section.rule,
                opening=section.opening, time_control=section.time_control, system=section.system,
                tiebreaks=section.tiebreaks, scoring=section.scoring, games_per_match=section.games_per_match,
                policy={**section.policy.to_dict(), "rounds": section.rounds, "max_candidates": section.max_candidates,
                        "match_scoring": section.match_scoring, "play_off_ties": section.play_off_ties,
                        **({"knockout": section.knockout.to_dict()} if section.knockout else {})},
            ).returning(col(Section.id))
        ).scalar_one()  # fmt: skip
        if section.players:
            connection.execute(insert(Player), [{**vars(p), "section_id": section_id} for p in section.players])
        if section.pairings:
            connection.execute(
                insert(Pairing),
                [{"section_id": section_id, "round_no": p.round_no, "board": p.board, "game_no": p.game_no,
                  "black_start_no": p.black,
                  "white_start_no": p.white, "platform_game_id": p.platform_game_id, "result": p.result}
                 for p in section.pairings],
            )  # fmt: skip
            stored = connection.execute(
                select(col(Pairing.id), col(Pairing.result))
                .where(col(Pairing.section_id) == section_id)
                .order_by(col(Pairing.id))
            ).all()
            loaded = [(pairing, result) for pairing, result in stored if pairing is not None]
            record_loaded_results(connection, loaded, f"event {spec.slug}", now)
        if section.knockout is not None and section.players:
            assert section_id is not None
            _draw_listed(connection, section_id, section, spec.slug, now)
    assert tournament_id is not None
    return tournament_id


def _draw_listed(connection: Connection, section_id: int, section: SectionSpec, slug: str, now: int) -> None:
    """A knockout that lists its players is drawn as the file seeds it (27.1); its listed play-off games get their
    time controls and the games due next their pairings (proctor.brackets)."""
    assert section.knockout is not None
    seeds = section.knockout.seeds or sorted(p.start_no for p in section.players)
    store_draw(connection, section_id, seeds, {"event_file": slug}, "seeded by the event file", "event file",
               "file", now)  # fmt: skip
    replayed = replay_section(connection, section_row(connection, slug, section.slug), {})
    assert replayed is not None
    for (round_no, board, game_no), slot in replayed[1].slots.items():
        if slot.time_control:
            connection.execute(
                update(Pairing)
                .where(col(Pairing.section_id) == section_id, col(Pairing.round_no) == round_no,
                       col(Pairing.board) == board, col(Pairing.game_no) == game_no)
                .values(time_control=slot.time_control)
            )  # fmt: skip
    advance_section(connection, section_id, {})


def load_event_file(connection: Connection, path: Path, now: int, replace: bool = False) -> EventSpec:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise EventFileError(f"cannot read {path}: {error.strerror}") from None
    spec = parse_event(text, path.parent)
    store_event(connection, spec, now, replace)
    return spec


def export_event(connection: Connection, slug: str) -> str:
    """The event as a TOML file: settings as loaded, with players and pairings (and results) as stored now."""
    tournament = connection.execute(select(Tournament).where(col(Tournament.slug) == slug)).first()
    if tournament is None:
        raise NotFoundError(f"no event {slug!r}")
    config = dict(tournament.config or {})
    sections_out = []
    raw_sections = {s.get("slug"): s for s in config.get("sections", []) if isinstance(s, dict)}
    for section in connection.execute(
        select(Section).where(col(Section.tournament_id) == tournament.id).order_by(col(Section.id))
    ):
        out = {k: v for k, v in raw_sections.get(section.slug, {}).items() if k not in ("players", "pairings", "trf")}
        drawn = connection.execute(select(col(BracketDraw.seeds)).where(col(BracketDraw.section_id) == section.id))
        seeds = drawn.scalar()
        if section.system == "knockout" and out.get("qualify_from"):
            if seeds is None:  # not drawn yet: the players will come from the preliminaries
                sections_out.append(out)
                continue
            # Drawn: the qualifiers listed by seed, drawn again when the file is loaded.
            out["seeds"] = list(seeds)
        players = connection.execute(
            select(Player).where(col(Player.section_id) == section.id).order_by(col(Player.start_no))
        ).all()
        out["players"] = [
            {k: v for k, v in (("start_no", p.start_no), ("name", p.name), ("team", p.team), ("gender", p.gender),
                               ("birth_date", p.birth_date), ("rating", p.rating), ("platform_ref", p.platform_ref))
             if v not in ("", None)}
            for p in players
        ]  # fmt: skip
        pairings = connection.execute(
            select(Pairing)
            .where(col(Pairing.section_id) == section.id)
            .order_by(col(Pairing.round_no), col(Pairing.board), col(Pairing.game_no))
        ).all()
        numbered = section.games_per_match > 1 or section.system == "knockout"  # a knockout's play-off games
        played = _played_results(connection, [p.id for p in pairings])
        out["pairings"] = [
            {k: v for k, v in (("round", p.round_no), ("board", p.board),
                               ("game", p.game_no if numbered else None),
                               ("black", p.black_start_no),
                               ("white", p.white_start_no), ("platform_game_id", p.platform_game_id),
                               ("result", p.result or played.get(p.id))) if v not in ("", None)}
            for p in pairings
        ]  # fmt: skip
        sections_out.append(out)
    config["sections"] = sections_out
    return tomli_w.dumps(config)


def _played_results(connection: Connection, pairing_ids: list[int]) -> dict[int, str]:
    """The results of the pairings' games that are over, as TRF writes them (from each game's final state)."""
    rows = connection.execute(
        select(col(Game.pairing_id), col(Game.snapshot))
        .where(col(Game.pairing_id).in_(pairing_ids), col(Game.status) == "over", col(Game.snapshot).is_not(None))
    ).all()  # fmt: skip
    texts = {kinds: text for text, kinds in STORED_RESULTS.items()}
    found = {}
    for pairing_id, snapshot in rows:
        kinds = game_results(restore(snapshot))
        if pairing_id is not None and kinds in texts:
            found[int(pairing_id)] = texts[kinds]
    return found


def section_scoring(text: str) -> tuple[Fraction, Fraction, Fraction]:
    win, draw, loss = (Fraction(part) for part in text.split("/"))
    return win, draw, loss
