"""Team events: matches, match points and game points, team tie-breaks and places (26.2, 28, 29.1.2, 29.2.2, 24.4.4;
FIDE C.07 Arts 11–14 and 16), and the youth team score of the regulations.

A team tournament is a set of :class:`Team` s, each with one :class:`TeamRound` per round: the opposing team and the
:class:`Board` s of the match (each board's result is an :class:`~engine.standings.ResultKind` from the team's side,
so forfeits stay forfeits), or a team bye (pairing-allocated, full-point, half-point or zero-point).  Every match gives
*game points* (GP: the sum of the board results under the game scoring, 28.1/28.2) and *match points* (MP: the team
with more game points wins the match; 2 / 1 / 0 by default as in TRF-26 header 362, configurable, 28.2).

Tie-breaks are named by their TRF-26 descriptors (C.07 Art. 11–14):

- ``MP``, ``GP``, ``MPvGP`` (13.1: the score that is not the primary one);
- ``BH:MP``, ``BH:GP``: Buchholz of the opponents' match or game points (8.1 applied to teams, Art. 13);
- ``EMMSB``, ``EMGSB``, ``EGMSB``, ``EGGSB``: extended Sonneborn-Berger (13.2), Σ opponent's MP or GP (first letter)
  × own MP or GP scored against that opponent (second letter);
- ``DE``, ``EDE``, ``EDET``, ``EDEB``, ``EDEC``, ``EDEBT``, ``EDEBB``: (extended) direct encounter (6, 13.3), a ranking
  stage, not a number: the primary score of the mutual matches, then the secondary, then for exactly two teams still
  tied the board results of their mutual matches (T: top board first, B: bottom board eliminated, C: board count),
  each applied again to the parts still tied (6.2);
- ``BC`` (12.1: Σ board number × GP on that board, lower is better), ``TBR`` (12.2: board 1's GP, then board 2's …),
  ``BBE`` (12.3: all boards but the bottom one, then all but the bottom two …).

Modifiers: ``/C1`` ``/C2`` (cut the least significant values, 14.1, 14.2; for the SB family the value of the opponent
with the lowest score, 14.1.2), ``/M1`` ``/M2`` (median, 14.3, 14.4) and ``/P`` (forfeited matches count as played).

Unplayed rounds follow C.07 §16 as FIDE's TEC reference implementation applies it to teams: a match counts as played
when at least one board was played over the board; a team's own unplayed rounds (byes, forfeited matches) count in
its Buchholz and SB as a dummy opponent on the team's own final score (16.4; capped under the 2026 rules), voluntary
unplayed rounds (half- and zero-point byes, forfeited matches) are cut first (16.5), and as someone's opponent a team's
trailing half- or zero-point byes (after a withdrawal) count as drawn matches (16.3).  In round robins forfeited
matches count as played and byes add nothing (C.07 15.2).  For board tie-breaks a forfeit counts as a standard win or
loss and a pairing-allocated bye as a win on every board (C.07 Art. 12).

The rules' own team orders are :data:`ROUND_ROBIN_TIEBREAKS` (29.1.2) and :data:`SWISS_TIEBREAKS` (29.2.2).

Entry points: :func:`build_team_tournament` (from the individual games and the teams' members), :func:`read_team_trf`
(TRF-26 team records), :func:`match_results` (each round as scored), :func:`team_standings` (the ranked table),
:func:`withdraw_team` (24.4.4) and :func:`youth_team_standings` (the youth team score of the regulations).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Final

from engine.standings import (
    Entrant,
    ResultKind,
    RoundEntry,
    Rules,
    Scoring,
    Standing,
    StandingsError,
    System,
    TieBreak,
    Tournament,
    standings,
)
from engine.trf import TrfError, read_trf

# --- Model -----------------------------------------------------------------------------------------------------------

MATCH_SCORING: Final = Scoring(Fraction(2), Fraction(1), Fraction(0))
"""Match points 2 / 1 / 0: the TRF-26 default (header 362); the rules allow another scale (28.2)."""

_BYES: Final = frozenset({ResultKind.PAB, ResultKind.FPB, ResultKind.HPB, ResultKind.ZPB})
_BOARD_KINDS: Final = frozenset(
    {
        ResultKind.WIN,
        ResultKind.DRAW,
        ResultKind.LOSS,
        ResultKind.UNRATED_WIN,
        ResultKind.UNRATED_DRAW,
        ResultKind.UNRATED_LOSS,
        ResultKind.FORFEIT_WIN,
        ResultKind.FORFEIT_LOSS,
    }
)
_COMPLEMENT: Final = {
    ResultKind.WIN: ResultKind.LOSS,
    ResultKind.LOSS: ResultKind.WIN,
    ResultKind.DRAW: ResultKind.DRAW,
    ResultKind.UNRATED_WIN: ResultKind.UNRATED_LOSS,
    ResultKind.UNRATED_LOSS: ResultKind.UNRATED_WIN,
    ResultKind.UNRATED_DRAW: ResultKind.UNRATED_DRAW,
    ResultKind.FORFEIT_WIN: ResultKind.FORFEIT_LOSS,
    ResultKind.FORFEIT_LOSS: ResultKind.FORFEIT_WIN,
}


def _fits(kind: ResultKind, other: ResultKind) -> bool:
    """The two sides of one board agree; both sides absent (a double forfeit) is a loss for both."""
    return _COMPLEMENT[kind] is other or kind is other is ResultKind.FORFEIT_LOSS


@dataclass(frozen=True, slots=True)
class Board:
    """One board of a team match from one team's side: its number (1 = top board), the result (forfeits as
    ``FORFEIT_WIN`` / ``FORFEIT_LOSS``, 28.3) and the start numbers of the two players (None: nobody sat there)."""

    number: int
    kind: ResultKind
    player: int | None = None
    opponent: int | None = None


@dataclass(frozen=True, slots=True)
class TeamRound:
    """One round of one team: a match against ``opponent`` (a team number) board by board, or a team bye
    (``bye``: ``PAB``, ``FPB``, ``HPB`` or ``ZPB``; ``ZPB`` also for a round the team was not paired or absent)."""

    opponent: int | None = None
    color: str | None = None
    boards: tuple[Board, ...] = ()
    bye: ResultKind | None = None

    @property
    def played(self) -> bool:
        """At least one board was played over the board (otherwise the match is a forfeit, C.07 Art. 16)."""
        return any(board.kind.played for board in self.boards)


ABSENT_TEAM: Final = TeamRound(bye=ResultKind.ZPB)


@dataclass(frozen=True, slots=True)
class Team:
    """A team (26.2): its pairing number, name, members' start numbers in registration (board) order, and its
    rounds; ``declared_*`` are what a source file states, to check against."""

    number: int
    name: str
    members: tuple[int, ...] = ()
    rounds: tuple[TeamRound, ...] = ()
    nickname: str = ""
    rating: int = 0
    declared_match_points: Fraction | None = None
    declared_game_points: Fraction | None = None
    declared_rank: int | None = None

    def round(self, number: int) -> TeamRound:
        """Round ``number`` (1-based); rounds beyond the record are absences."""
        return self.rounds[number - 1] if number <= len(self.rounds) else ABSENT_TEAM


@dataclass(frozen=True, slots=True)
class TeamScoring:
    """Game points per board (28.1: 1 / ½ / 0) and match points per match (TRF-26 default 2 / 1 / 0; 28.2).

    ``pairing_bye`` is the (MP, GP) of a pairing-allocated bye (TRF-26 record 320); None: a drawn match with a draw on
    every board.  A full-point bye scores a won match, won on every board; a half-point bye a drawn one."""

    game: Scoring = field(default_factory=Scoring)
    match: Scoring = MATCH_SCORING
    pairing_bye: tuple[Fraction, Fraction] | None = None


@dataclass(frozen=True, slots=True)
class TeamTournament:
    """A team event (26.2): the teams with their rounds, the number of rounds and of boards per match, the system
    (round robin or Swiss, 27.2, 27.3) and the scoring."""

    name: str
    teams: tuple[Team, ...]
    rounds: int
    boards: int
    """Boards per match."""
    system: System = System.SWISS
    scoring: TeamScoring = field(default_factory=TeamScoring)

    def team(self, number: int) -> Team:
        """The team with pairing number ``number``; an unknown number is a StandingsError."""
        for team in self.teams:
            if team.number == number:
                return team
        raise StandingsError(f"no team with number {number}")


# --- Building from individual results -------------------------------------------------------------------------------


def build_team_tournament(
    tournament: Tournament,
    teams: Sequence[Team],
    *,
    boards: int | None = None,
    scoring: TeamScoring | None = None,
    lineups: Mapping[tuple[int, int], Sequence[int | None]] | None = None,
    byes: Mapping[tuple[int, int], ResultKind] | None = None,
    forfeited_matches: Mapping[tuple[int, int], tuple[int, ResultKind]] | None = None,
) -> TeamTournament:
    """The team tournament made of the individual games of ``tournament`` (26.2): in each round, a team's match is
    all the games between its members and the members of one other team.

    ``teams`` give number, name and members in board order (their ``rounds`` are ignored).  By default a match's
    boards are the members who played it (a game against the other team, or a forfeit win with no opponent named:
    the opposing board was empty) in registration order (fixed boards, 26.2.1); ``lineups`` ((round, team) → start
    numbers board by board, None for an empty board) set them when teams field substitutes or choose the order per
    match (26.2.2, 26.2.3).  ``forfeited_matches`` ((round, team) → (opposing team, ``FORFEIT_WIN`` or
    ``FORFEIT_LOSS``)) are matches not played at all: every board is a forfeit.  A round in which a team has no match
    is a team bye: ``byes`` ((round, team) → ``PAB``, ``FPB``, ``HPB`` or ``ZPB``), or the bye all its members were
    given, or a zero-point bye.  Game points use ``tournament.scoring``; ``boards`` defaults to the widest match.
    """
    team_scoring = scoring or TeamScoring(game=tournament.scoring)
    entrants = tournament.by_start_no()
    team_of = _membership(teams, entrants)
    lineups = lineups or {}
    byes = byes or {}
    forfeited_matches = forfeited_matches or {}
    order = {team.number: team.members for team in teams}
    width = boards or max(
        [len(line) for line in lineups.values()]
        + [_widest_match(r, team, team_of, entrants) for r in range(1, tournament.rounds + 1) for team in teams]
        + [1]
    )
    rows: dict[int, list[TeamRound]] = {team.number: [] for team in teams}
    for round_no in range(1, tournament.rounds + 1):
        opponents = _opponents(round_no, teams, team_of, entrants)
        for (forfeit_round, team_no), (scheduled, _) in forfeited_matches.items():
            if forfeit_round == round_no and opponents.setdefault(team_no, scheduled) != scheduled:
                raise StandingsError(
                    f"round {round_no}: team {team_no} forfeited the match against team {scheduled} but has games "
                    f"against team {opponents[team_no]}"
                )
        for team in teams:
            other = opponents.get(team.number)
            if other is None:
                kinds = [entrants[member].round(round_no).kind for member in team.members]
                rows[team.number].append(TeamRound(bye=byes.get((round_no, team.number)) or _members_bye(kinds)))
                continue
            forfeit = forfeited_matches.get((round_no, team.number))
            own_line = _lineup(round_no, team.number, other, order, lineups, entrants)
            their_line = _lineup(round_no, other, team.number, order, lineups, entrants)
            if forfeit:
                own_line += [None] * (width - len(own_line))
                their_line += [None] * (width - len(their_line))
            if len(own_line) != len(their_line):
                raise StandingsError(
                    f"round {round_no}: teams {team.number} and {other} field {len(own_line)} and {len(their_line)} "
                    "boards; give the lineups"
                )
            where = f"round {round_no}, team {team.number} against team {other}"
            match_boards = _match_boards(where, round_no, own_line, their_line, forfeit, entrants)
            color = next((entry.color for entry in _entries(own_line, round_no, entrants) if entry.color), None)
            rows[team.number].append(TeamRound(other, color, match_boards))
    built = tuple(replace(team, rounds=tuple(rows[team.number])) for team in teams)
    result = TeamTournament(tournament.name, built, tournament.rounds, width, tournament.system, team_scoring)
    _check(result)
    return result


def _membership(teams: Sequence[Team], entrants: Mapping[int, Entrant]) -> dict[int, int]:
    """Each member's team; a player in two teams, an unknown player or a repeated team number is an error."""
    team_of: dict[int, int] = {}
    for team in teams:
        for member in team.members:
            if member in team_of:
                raise StandingsError(f"player {member} is in team {team_of[member]} and in team {team.number}")
            if member not in entrants:
                raise StandingsError(f"team {team.number}: no player with start number {member}")
            team_of[member] = team.number
    if len({team.number for team in teams}) != len(teams):
        raise StandingsError("two teams have the same number")
    return team_of


def _match_boards(
    where: str,
    round_no: int,
    own_line: list[int | None],
    their_line: list[int | None],
    forfeit: tuple[int, ResultKind] | None,
    entrants: Mapping[int, Entrant],
) -> tuple[Board, ...]:
    """The boards of one match from one side: each player's own result, a forfeit loss on an empty board."""
    boards = []
    for number, (player, opponent) in enumerate(zip(own_line, their_line, strict=True), start=1):
        entry = entrants[player].round(round_no) if player is not None else None
        if forfeit:
            kind = forfeit[1]
        elif entry is None:
            kind = ResultKind.FORFEIT_LOSS
        elif entry.opponent != opponent and not (entry.opponent is None and entry.kind.forfeit):
            raise StandingsError(
                f"{where}, board {number}: player {player} met {entry.opponent}, not {opponent} who sits on that "
                "board for the other team; give the lineups"
            )
        else:
            kind = entry.kind
        if kind not in _BOARD_KINDS:
            raise StandingsError(f"{where}, board {number}: {kind.name} is not a board result")
        boards.append(Board(number, kind, player, opponent))
    return tuple(boards)


def _opponents(
    round_no: int, teams: Sequence[Team], team_of: dict[int, int], entrants: Mapping[int, Entrant]
) -> dict[int, int]:
    """Each team's opposing team in a round, from its members' games."""
    opponents: dict[int, int] = {}
    for team in teams:
        for member in team.members:
            entry = entrants[member].round(round_no)
            if entry.opponent is None:
                continue
            other = team_of.get(entry.opponent)
            if other is None or other == team.number:
                raise StandingsError(
                    f"round {round_no}: player {member} (team {team.number}) met player {entry.opponent}, "
                    "who is not in another team"
                )
            if opponents.setdefault(team.number, other) != other:
                raise StandingsError(
                    f"round {round_no}: team {team.number} has games against teams {opponents[team.number]} "
                    f"and {other}; a team plays one match a round"
                )
    return opponents


def _widest_match(round_no: int, team: Team, team_of: dict[int, int], entrants: Mapping[int, Entrant]) -> int:
    return sum(1 for member in team.members if entrants[member].round(round_no).opponent in team_of)


def _entries(line: list[int | None], round_no: int, entrants: Mapping[int, Entrant]) -> list[RoundEntry]:
    return [entrants[player].round(round_no) for player in line if player is not None]


def _members_bye(kinds: list[ResultKind]) -> ResultKind:
    """A team bye the members were all given; otherwise the team was absent (zero-point bye)."""
    first = kinds[0] if kinds else ResultKind.ZPB
    return first if first in _BYES and all(kind is first for kind in kinds) else ResultKind.ZPB


def _lineup(
    round_no: int,
    team: int,
    other: int,
    order: dict[int, tuple[int, ...]],
    lineups: Mapping[tuple[int, int], Sequence[int | None]],
    entrants: Mapping[int, Entrant],
) -> list[int | None]:
    """The team's players board by board: as given, else the members who played the match in registration order."""
    given = lineups.get((round_no, team))
    if given is not None:
        return list(given)
    line: list[int | None] = []
    for member in order[team]:
        entry = entrants[member].round(round_no)
        if entry.opponent in order[other] or (entry.opponent is None and entry.kind is ResultKind.FORFEIT_WIN):
            line.append(member)
    return line


# --- Scores ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Contribution:
    value: Fraction
    """The opponent's (adjusted or dummy) score."""
    scored: Fraction
    """What the team scored in that round (for the SB family)."""
    voluntary: bool


class _Results:
    """Match points, game points, §16 categories and board points of every team round, computed once."""

    def __init__(self, tournament: TeamTournament, rules: Rules, system: System) -> None:
        _check(tournament)
        self.tournament = tournament
        self.rules = rules
        self.system = system
        scoring = tournament.scoring
        boards = tournament.boards
        self.teams = {team.number: team for team in tournament.teams}
        self.rows = {no: [team.round(r) for r in range(1, tournament.rounds + 1)] for no, team in self.teams.items()}
        self.game_points: dict[int, list[Fraction]] = {}
        for no, row in self.rows.items():
            self.game_points[no] = [self._round_game_points(entry) for entry in row]
        self.match_points: dict[int, list[Fraction]] = {}
        self.kinds: dict[int, list[ResultKind]] = {}
        for no, row in self.rows.items():
            points, kinds = [], []
            for index, entry in enumerate(row):
                mp, kind = self._match_result(no, index, entry)
                points.append(mp)
                kinds.append(kind)
            self.match_points[no] = points
            self.kinds[no] = kinds
        self.totals = {
            "MP": {no: sum(points, Fraction(0)) for no, points in self.match_points.items()},
            "GP": {no: sum(points, Fraction(0)) for no, points in self.game_points.items()},
        }
        self.draw_value = {"MP": scoring.match.draw, "GP": scoring.game.draw * boards}
        self.adjusted = {score: {no: self._adjusted(no, score) for no in self.teams} for score in ("MP", "GP")}
        self.board_points = {no: self._board_points(row) for no, row in self.rows.items()}

    def points(self, score: str, no: int) -> list[Fraction]:
        return self.match_points[no] if score == "MP" else self.game_points[no]

    def _round_game_points(self, entry: TeamRound) -> Fraction:
        scoring = self.tournament.scoring
        if entry.opponent is not None:
            return sum((scoring.game.points(board.kind) for board in entry.boards), Fraction(0))
        bye = entry.bye or ResultKind.ZPB
        if bye is ResultKind.PAB:
            return scoring.pairing_bye[1] if scoring.pairing_bye else scoring.game.draw * self.tournament.boards
        return scoring.game.points(bye) * self.tournament.boards

    def _match_result(self, no: int, index: int, entry: TeamRound) -> tuple[Fraction, ResultKind]:
        """The match points and the round's category: a played match is won, drawn or lost on game points; a match
        with no board played over the board is a forfeit (C.07 Art. 16), a forfeit loss unless the team won it."""
        match = self.tournament.scoring.match
        if entry.opponent is None:
            bye = entry.bye or ResultKind.ZPB
            if bye is ResultKind.PAB:
                return (
                    self.tournament.scoring.pairing_bye[0] if self.tournament.scoring.pairing_bye else match.draw
                ), bye
            return match.points(bye), bye
        own = self.game_points[no][index]
        theirs = self.game_points[entry.opponent][index]
        if own > theirs:
            points, kind = match.win, ResultKind.WIN
        elif own < theirs or own == 0:
            points, kind = match.loss, ResultKind.LOSS  # equal with nothing scored: a double forfeit, lost by both
        else:
            points, kind = match.draw, ResultKind.DRAW
        if not entry.played:
            kind = ResultKind.FORFEIT_WIN if kind is ResultKind.WIN else ResultKind.FORFEIT_LOSS
        return points, kind

    def _adjusted(self, no: int, score: str) -> Fraction:
        """The score a team counts for as someone's opponent (C.07 16.3): half- and zero-point byes after the last
        round the team took part in (a withdrawal) count as drawn matches."""
        kinds = self.kinds[no]
        last_part = max((i for i, kind in enumerate(kinds) if kind.took_part), default=-1)
        total = Fraction(0)
        for i, (kind, points) in enumerate(zip(kinds, self.points(score, no), strict=True)):
            if kind in (ResultKind.HPB, ResultKind.ZPB) and i > last_part:
                total += self.draw_value[score]
            else:
                total += points
        return total

    def _board_points(self, row: list[TeamRound]) -> list[Fraction]:
        """Game points on each board over the event (C.07 Art. 12: forfeits as standard results, a pairing-allocated
        bye as a win on every board)."""
        game = self.tournament.scoring.game
        totals = [Fraction(0)] * self.tournament.boards
        for entry in row:
            if entry.opponent is None:
                bye = entry.bye or ResultKind.ZPB
                per_board = game.win if bye is ResultKind.PAB else game.points(bye)
                totals = [total + per_board for total in totals]
                continue
            for board in entry.boards:
                if 1 <= board.number <= len(totals):
                    totals[board.number - 1] += game.points(board.kind)
        return totals

    # --- Buchholz and the extended Sonneborn-Berger family (C.07 8.1, 13.2, 14, 16) ---------------------------------

    def counts_as_played(self, no: int, index: int, forfeits_played: bool) -> bool:
        entry = self.rows[no][index]
        if entry.opponent is None:
            return False
        return entry.played or forfeits_played or self.system is System.ROUND_ROBIN

    def contributions(
        self, no: int, opponents_score: str, own_score: str, forfeits_played: bool
    ) -> list[_Contribution]:
        own_total = self.totals[opponents_score][no]
        cap = self.draw_value[opponents_score] * self.tournament.rounds
        scored_points = self.points(own_score, no)
        out = []
        for index, entry in enumerate(self.rows[no]):
            scored = scored_points[index]
            kind = self.kinds[no][index]
            if self.counts_as_played(no, index, forfeits_played):
                assert entry.opponent is not None
                out.append(_Contribution(self.adjusted[opponents_score][entry.opponent], scored, False))
                continue
            if self.system is System.ROUND_ROBIN:
                continue  # C.07 15.2: no dummy opponents in round robins; a bye adds nothing
            dummy = own_total  # 16.4: a dummy opponent on the team's own final score
            if self.rules is Rules.FIDE_2026:
                if entry.opponent is not None:
                    dummy = min(dummy, self.adjusted[opponents_score][entry.opponent])  # 16.4.1 (2026)
                else:
                    dummy = min(dummy, cap)  # 16.4.2 (2026)
            out.append(_Contribution(dummy, scored, kind.voluntary_unplayed))
        return out

    def buchholz(self, no: int, tiebreak: TeamTieBreak, primary: str) -> Fraction:
        score = tiebreak.score or primary
        values = _cut(
            self.contributions(no, score, score, tiebreak.forfeits_played), tiebreak, self.tournament.rounds, False
        )
        return sum((c.value for c in values), Fraction(0))

    def sonneborn_berger(self, no: int, tiebreak: TeamTieBreak) -> Fraction:
        """13.2: Σ over opponents of the opponent's MP or GP (first letter) × the MP or GP scored against them."""
        opponents_score, own_score = _SB_SCORES[tiebreak.name]
        contributions = self.contributions(no, opponents_score, own_score, tiebreak.forfeits_played)
        values = _cut(contributions, tiebreak, self.tournament.rounds, True)
        return sum((c.value * c.scored for c in values), Fraction(0))

    def value(self, no: int, tiebreak: TeamTieBreak, primary: str) -> TieBreakValue:
        name = tiebreak.name
        secondary = "GP" if primary == "MP" else "MP"
        if name in ("MP", "GP"):
            return self.totals[name][no]
        if name == "MPVGP":
            return self.totals[secondary][no]
        if name == "BH":
            return self.buchholz(no, tiebreak, primary)
        if name in _SB_SCORES:
            return self.sonneborn_berger(no, tiebreak)
        if name == "BC":
            return sum((number * points for number, points in enumerate(self.board_points[no], start=1)), Fraction(0))
        if name == "TBR":
            return tuple(self.board_points[no])
        if name == "BBE":
            points = self.board_points[no]
            return tuple(sum(points[: len(points) - k], Fraction(0)) for k in range(1, len(points)))
        raise StandingsError(f"{tiebreak.label} is a ranking stage, not a value")

    # --- (Extended) direct encounter (C.07 6, 13.3) -----------------------------------------------------------------

    def direct_encounter(self, group: list[int], tiebreak: TeamTieBreak, primary: str) -> list[list[int]]:
        """Order a tied group by its mutual matches (C.07 6, 13.3): the primary score, then the secondary score
        (13.3.1), then for exactly two teams still tied the board stages of the descriptor (13.3.2).  A stage that
        splits a group is applied again to the parts still tied (6.2) before the next stage; after the last stage
        the first comes again, until a whole round of stages changes nothing (as FIDE's TEC reference does, and as
        in the worked team exercises)."""
        secondary = "GP" if primary == "MP" else "MP"
        steps = [
            (stage, scorer, best)
            for stage in _STAGES[tiebreak.name]
            for scorer, best in self._stage_scores(stage, primary, secondary)
        ]
        groups = [group]
        step = idle = 0
        while idle < len(steps):
            stage, scorer, best = steps[step]
            changed = False
            split: list[list[int]] = []
            for part in groups:
                if len(part) > 1 and (stage in ("P", "S") or len(part) == 2):
                    parts = self._encounter_split(part, scorer, best, tiebreak.forfeits_played)
                    changed = changed or len(parts) > 1
                    split.extend(parts)
                else:
                    split.append(part)
            groups = split
            if changed:
                idle = 0
            else:
                idle += 1
                step = (step + 1) % len(steps)
        return groups

    def _stage_scores(
        self, stage: str, primary: str, secondary: str
    ) -> list[tuple[Callable[[int, int], Fraction], Fraction]]:
        """For each step of a stage: the points of a team in a round, and the most a match can give."""
        scoring = self.tournament.scoring
        boards = self.tournament.boards
        most = {"MP": scoring.match.win, "GP": scoring.game.win * boards}
        if stage == "P":
            return [(lambda no, i: self.points(primary, no)[i], most[primary])]
        if stage == "S":
            return [(lambda no, i: self.points(secondary, no)[i], most[secondary])]
        if stage == "T":  # TBR on the mutual matches: board 1, then board 2 …
            return [(self._board_scorer(_only_board(n)), scoring.game.win) for n in range(1, boards + 1)]
        if stage == "B":  # BBE on the mutual matches: all but the bottom board, then all but the bottom two …
            return [
                (self._board_scorer(_boards_down_to(boards - k)), scoring.game.win * boards) for k in range(1, boards)
            ]
        # C: board count on the mutual matches, lower is better (12.1), so ranked on its negative
        return [(self._board_scorer(lambda b: Fraction(-b)), Fraction(0))]

    def _board_scorer(self, weight: Callable[[int], Fraction]) -> Callable[[int, int], Fraction]:
        game = self.tournament.scoring.game

        def points_of(no: int, index: int) -> Fraction:
            boards = self.rows[no][index].boards
            return sum((weight(board.number) * game.points(board.kind) for board in boards), Fraction(0))

        return points_of

    def _encounter_split(
        self, group: list[int], points_of: Callable[[int, int], Fraction], best: Fraction, forfeits_played: bool
    ) -> list[list[int]]:
        members = set(group)
        results: dict[int, dict[int, list[Fraction]]] = {no: {} for no in group}
        for no in group:
            for index, entry in enumerate(self.rows[no]):
                if entry.opponent in members and self.counts_as_played(no, index, forfeits_played):
                    results[no].setdefault(entry.opponent, []).append(points_of(no, index))
        # 6.1.2: repeated meetings are averaged.
        score = {
            no: sum((sum(p, Fraction(0)) / len(p) for p in met.values()), Fraction(0)) for no, met in results.items()
        }
        missing = {no: len(group) - 1 - len(results[no]) for no in group}
        if self.system is System.ROUND_ROBIN or all(count == 0 for count in missing.values()):
            return _split_by(group, score)
        # 6.3: not all have met: the leader is separated only if it is first whatever the missing results; then
        # the next one against those below it, and so on (the rest stays tied and is ranked again, 6.2).
        best_case = {no: score[no] + missing[no] * best for no in group}
        ordered = sorted(group, key=lambda n: (-score[n], -best_case[n], n))
        parts = []
        for index, no in enumerate(ordered[:-1]):
            if score[no] <= max(best_case[other] for other in ordered[index + 1 :]):
                parts.append(ordered[index:])
                return parts
            parts.append([no])
        parts.append(ordered[-1:])
        return parts


def _only_board(number: int) -> Callable[[int], Fraction]:
    return lambda board: Fraction(board == number)


def _boards_down_to(last: int) -> Callable[[int], Fraction]:
    return lambda board: Fraction(board <= last)


TieBreakValue = Fraction | int | tuple[Fraction, ...] | None

_SB_SCORES: Final = {"EMMSB": ("MP", "MP"), "EMGSB": ("MP", "GP"), "EGMSB": ("GP", "MP"), "EGGSB": ("GP", "GP")}
_STAGES: Final = {
    "DE": "P",
    "EDE": "PS",
    "EDEC": "PSC",
    "EDET": "PST",
    "EDEB": "PSB",
    "EDEBT": "PSCT",
    "EDEBB": "PSCB",
}


def _cut(values: list[_Contribution], tiebreak: TeamTieBreak, rounds: int, sonneborn: bool) -> list[_Contribution]:
    """Cut the least significant values (14.1, 14.2: the opponent with the lowest score; for the SB family the lowest
    contribution among such opponents, 14.1.2), then for medians the most significant (14.3, 14.4).  16.5: the
    voluntary unplayed round with the lowest contribution is cut instead, unless the least significant value counts
    for more (for Buchholz it never does)."""

    def worth(c: _Contribution) -> Fraction:
        return c.value * c.scored if sonneborn else c.value

    low = min(tiebreak.cut, rounds)
    high = min(tiebreak.top_cut, rounds - low)
    remaining = list(values)
    for _ in range(low):
        if not remaining:
            break
        least = min(range(len(remaining)), key=lambda i: (remaining[i].value, worth(remaining[i])))
        voluntary = [i for i, c in enumerate(remaining) if c.voluntary]
        if voluntary:
            lowest = min(voluntary, key=lambda i: (worth(remaining[i]), remaining[i].value))
            if worth(remaining[least]) <= worth(remaining[lowest]):
                least = lowest
        del remaining[least]
    for _ in range(high):
        if not remaining:
            break
        del remaining[max(range(len(remaining)), key=lambda i: (remaining[i].value, worth(remaining[i])))]
    return remaining


def _split_by(
    group: list[int], values: Mapping[int, Fraction | tuple[Fraction, ...]], lower_first: bool = False
) -> list[list[int]]:
    ordered = sorted(group, key=lambda no: (_sort_key(values[no], lower_first), no))
    parts: list[list[int]] = []
    for no in ordered:
        if parts and values[parts[-1][0]] == values[no]:
            parts[-1].append(no)
        else:
            parts.append([no])
    return parts


def _sort_key(value: Fraction | tuple[Fraction, ...], lower_first: bool) -> tuple[Fraction, ...]:
    values = value if isinstance(value, tuple) else (value,)
    return values if lower_first else tuple(-v for v in values)


def _check(tournament: TeamTournament) -> None:
    """Every match is seen the same way from both sides."""
    teams = {team.number: team for team in tournament.teams}
    if len(teams) != len(tournament.teams):
        raise StandingsError("two teams have the same number")
    for team in tournament.teams:
        if len(team.rounds) > tournament.rounds:
            raise StandingsError(f"team {team.number} has {len(team.rounds)} rounds; the event has {tournament.rounds}")
        for round_no, entry in enumerate(team.rounds, start=1):
            where = f"team {team.number}, round {round_no}"
            if entry.opponent is None:
                if entry.bye is not None and entry.bye not in _BYES:
                    raise StandingsError(f"{where}: {entry.bye.name} is not a team bye (PAB, FPB, HPB or ZPB)")
                continue
            if entry.opponent not in teams or entry.opponent == team.number:
                raise StandingsError(f"{where}: opponent {entry.opponent} is not another team")
            if not entry.boards:
                raise StandingsError(f"{where}: a match against team {entry.opponent} needs its boards")
            numbers = [board.number for board in entry.boards]
            if len(set(numbers)) != len(numbers) or not all(1 <= n <= tournament.boards for n in numbers):
                raise StandingsError(f"{where}: boards {numbers} are not distinct boards 1–{tournament.boards}")
            other = teams[entry.opponent].round(round_no)
            if other.opponent != team.number:
                raise StandingsError(f"{where}: team {entry.opponent} does not show the match against {team.number}")
            theirs = {board.number: board for board in other.boards}
            for board in entry.boards:
                if board.kind not in _BOARD_KINDS:
                    raise StandingsError(f"{where}, board {board.number}: {board.kind.name} is not a board result")
                mirror = theirs.get(board.number)
                if mirror is None or not _fits(board.kind, mirror.kind):
                    raise StandingsError(
                        f"{where}, board {board.number}: {board.kind.value!r} does not match team "
                        f"{entry.opponent}'s {mirror.kind.value if mirror else 'missing board'!r}"
                    )
            if len(theirs) != len(entry.boards):
                raise StandingsError(f"{where}: the two teams show different boards")


@dataclass(frozen=True, slots=True)
class MatchResult:
    """One round of one team as scored (28): the opposing team (None for a bye), the round's category (``WIN``
    ``DRAW`` ``LOSS`` for a match played; ``FORFEIT_WIN`` / ``FORFEIT_LOSS`` when no board was played over the board,
    28.3; ``PAB`` ``FPB`` ``HPB`` ``ZPB`` for byes), and the match points and game points it gave."""

    opponent: int | None
    kind: ResultKind
    match_points: Fraction
    game_points: Fraction


def match_results(tournament: TeamTournament) -> dict[int, tuple[MatchResult, ...]]:
    """Every team's rounds as scored, by team number."""
    results = _Results(tournament, Rules.FIDE_2024, tournament.system)
    return {
        no: tuple(
            MatchResult(entry.opponent, kind, mp, gp)
            for entry, kind, mp, gp in zip(
                row, results.kinds[no], results.match_points[no], results.game_points[no], strict=True
            )
        )
        for no, row in results.rows.items()
    }


# --- Tie-break descriptors -------------------------------------------------------------------------------------------

TEAM_TIEBREAK_NAMES: Final = ("MP", "GP", "MPVGP", "BH", *_SB_SCORES, *_STAGES, "BC", "TBR", "BBE")
_ALIASES: Final = {"PTS": "MP", "MPTS": "MP", "GPTS": "GP"}
_DESCRIPTOR: Final = re.compile(r"^([A-Z]+)(?::(MP|GP))?((?:/[A-Z0-9]+)*)$")


@dataclass(frozen=True, slots=True)
class TeamTieBreak:
    """One team tie-break, as a TRF-26 descriptor names it (``"BH:MP/C1/P"``)."""

    name: str
    score: str | None = None
    """``MP`` or ``GP`` for Buchholz (``BH:MP``); None: the primary score."""
    cut: int = 0
    top_cut: int = 0
    forfeits_played: bool = False

    @property
    def label(self) -> str:
        parts = ["MPvGP" if self.name == "MPVGP" else self.name + (f":{self.score}" if self.score else "")]
        if self.top_cut:
            parts.append(f"M{self.top_cut}")
        elif self.cut:
            parts.append(f"C{self.cut}")
        if self.forfeits_played:
            parts.append("P")
        return "/".join(parts)


def parse_team_tiebreaks(text: str) -> list[TeamTieBreak]:
    """``"EDET/P,EMGSB/C1/P,BH:MP/C1/P,MPvGP"`` → the list; an unknown name or modifier is a StandingsError."""
    result = []
    for raw in (part.strip() for part in text.split(",")):
        match = _DESCRIPTOR.match(raw.upper())
        if not raw or match is None:
            raise StandingsError(f"team tie-break {raw!r} is not a descriptor like 'BH:MP/C1'")
        name = _ALIASES.get(match.group(1), match.group(1))
        score = match.group(2)
        if name not in TEAM_TIEBREAK_NAMES:
            raise StandingsError(f"unknown team tie-break {name!r}: expected one of {', '.join(TEAM_TIEBREAK_NAMES)}")
        if score and name != "BH":
            raise StandingsError(f"{raw!r}: ':MP' and ':GP' choose the score of a Buchholz only")
        cut = top_cut = 0
        forfeits_played = False
        for modifier in (m for m in match.group(3).split("/") if m):
            if modifier == "P" and (name in ("BH", *_SB_SCORES, *_STAGES)):
                forfeits_played = True
            elif re.fullmatch(r"[CM][12]", modifier) and (name == "BH" or name in _SB_SCORES):
                cut = int(modifier[1])
                top_cut = cut if modifier[0] == "M" else 0
            else:
                raise StandingsError(
                    f"modifier /{modifier} does not apply to {name} in {raw!r}: /C1 /C2 /M1 /M2 apply to BH and the SB "
                    "family, /P to BH, the SB family and the direct encounters"
                )
        result.append(TeamTieBreak(name, score, cut, top_cut, forfeits_played))
    return result


ROUND_ROBIN_TIEBREAKS: Final = "MP,GP,EMGSB,EDE,TBR"
"""29.1.2: match points, then game points, the team Sonneborn-Berger (the opponents' match points × the game points
scored against them, EMGSB; the rules leave open which score), direct encounter, board by board from board 1."""
SWISS_TIEBREAKS: Final = "MP,BH:MP,BH:MP/M1,GP,TBR"
"""29.2.2: match points, then the opponents' match points (Buchholz), the median of it, game points, board by board
from board 1."""


# --- Ranking ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TeamStanding:
    """One row of the team table: the place (shared when still tied), the team, its match and game points."""

    rank: int
    team: Team
    match_points: Fraction
    game_points: Fraction
    tiebreaks: dict[str, TieBreakValue]
    """Each tie-break's value by descriptor label; for a direct-encounter stage the team's place in the group it
    ranked (None where it was not needed)."""


def team_standings(
    tournament: TeamTournament,
    tiebreaks: Sequence[TeamTieBreak] | str | None = None,
    rules: Rules = Rules.FIDE_2024,
    system: System | None = None,
) -> list[TeamStanding]:
    """The ranked team table: match points (or game points when the list starts with ``GP``) first, then each
    tie-break on the still-tied groups (C.07 Art. 4.2); teams still tied share the place (29.1.2 E, 29.2.2 E).

    Without ``tiebreaks`` the rules' own order for the system: :data:`ROUND_ROBIN_TIEBREAKS` (29.1.2) or
    :data:`SWISS_TIEBREAKS` (29.2.2)."""
    system = system or tournament.system
    if tiebreaks is None:
        tiebreaks = ROUND_ROBIN_TIEBREAKS if system is System.ROUND_ROBIN else SWISS_TIEBREAKS
    criteria = parse_team_tiebreaks(tiebreaks) if isinstance(tiebreaks, str) else list(tiebreaks)
    if not criteria or criteria[0].name not in ("MP", "GP"):
        criteria.insert(0, TeamTieBreak("MP"))
    primary = criteria[0].name
    results = _Results(tournament, rules, system)
    numbers = sorted(results.teams)
    values: dict[str, dict[int, TieBreakValue]] = {}
    for criterion in criteria:
        if criterion.name in _STAGES:
            values[criterion.label] = dict.fromkeys(numbers)
        else:
            values[criterion.label] = {no: results.value(no, criterion, primary) for no in numbers}

    def order(group: list[int], level: int) -> list[list[int]]:
        if len(group) == 1 or level == len(criteria):
            return [group]
        criterion = criteria[level]
        column = values[criterion.label]
        if criterion.name in _STAGES:
            parts = results.direct_encounter(group, criterion, primary)
            place = 1
            for part in parts:
                for no in part:
                    column[no] = place
                place += len(part)
        else:
            parts = _split_by(group, {no: _comparable(column[no]) for no in group}, lower_first=criterion.name == "BC")
        result: list[list[int]] = []
        for part in parts:
            result.extend(order(part, level + 1))
        return result

    table = []
    place = 1
    for group in order(numbers, 0):
        for no in sorted(group):
            table.append(
                TeamStanding(
                    rank=place,
                    team=results.teams[no],
                    match_points=results.totals["MP"][no],
                    game_points=results.totals["GP"][no],
                    tiebreaks={label: column[no] for label, column in values.items()},
                )
            )
        place += len(group)
    return table


def _comparable(value: TieBreakValue) -> Fraction | tuple[Fraction, ...]:
    if value is None:
        return Fraction(0)
    if isinstance(value, int):
        return Fraction(value)
    return value


# --- Withdrawals (24.4.4) --------------------------------------------------------------------------------------------


def withdraw_team(
    tournament: TeamTournament, team: int, after_round: int, schedule: Mapping[int, int] | None = None
) -> TeamTournament:
    """The tournament after team ``team`` withdrew once ``after_round`` rounds were played (24.4.4): the results
    played stand, and every later match the team was due to play is a forfeit, won on every board by the opponent.

    The later matches are those already in the tournament and ``schedule`` (round → opponent team, e.g. a round
    robin's table).  A later round with no scheduled opponent is a round the team is not paired (a zero-point bye,
    24.4.3)."""
    withdrawn = tournament.team(team)
    if not 0 <= after_round <= tournament.rounds:
        raise StandingsError(f"after round {after_round}: the event has rounds 0–{tournament.rounds}")
    rows = {t.number: [t.round(r) for r in range(1, tournament.rounds + 1)] for t in tournament.teams}
    due = {r: entry.opponent for r, entry in enumerate(rows[team], start=1) if r > after_round and entry.opponent}
    for round_no, scheduled in (schedule or {}).items():
        if round_no > after_round:
            if due.get(round_no, scheduled) != scheduled:
                raise StandingsError(f"round {round_no}: team {team} met team {due[round_no]}, not {scheduled}")
            due[round_no] = scheduled
    boards = range(1, tournament.boards + 1)
    for round_no in range(after_round + 1, tournament.rounds + 1):
        opponent = due.get(round_no)
        if opponent is None:
            rows[team][round_no - 1] = ABSENT_TEAM
            continue
        if opponent not in rows or opponent == team:
            raise StandingsError(f"round {round_no}: team {opponent} is not another team")
        theirs = rows[opponent][round_no - 1]
        if theirs.opponent not in (None, team):
            raise StandingsError(f"round {round_no}: team {opponent} played team {theirs.opponent}, not {team}")
        color = withdrawn.round(round_no).color
        rows[team][round_no - 1] = TeamRound(opponent, color, tuple(Board(b, ResultKind.FORFEIT_LOSS) for b in boards))
        rows[opponent][round_no - 1] = TeamRound(
            team, theirs.color or _other_color(color), tuple(Board(b, ResultKind.FORFEIT_WIN) for b in boards)
        )
    teams = tuple(
        replace(t, rounds=tuple(rows[t.number]), declared_match_points=None, declared_game_points=None,
                declared_rank=None)
        for t in tournament.teams
    )  # fmt: skip
    return replace(tournament, teams=teams)


def _other_color(color: str | None) -> str | None:
    return {"w": "b", "b": "w"}.get(color or "")


# --- Youth team score (regulations, doc 003 VIII(6)2) ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class YouthTeamStanding:
    """One row of the youth team table: the place, the unit, its points and the sum of its two players' places."""

    rank: int
    unit: str
    points: Fraction
    """The points of the unit's best-placed male player plus those of its best-placed female player."""
    place_sum: int
    male: Standing
    female: Standing


def youth_team_standings(
    sections: Tournament | Sequence[Tournament],
    tiebreaks: Sequence[TieBreak] | str = "PTS",
    rules: Rules = Rules.FIDE_2024,
) -> list[YouthTeamStanding]:
    """The youth team event of the regulations (doc 003 VI(2), VIII(6)2; not a FIDE criterion): each unit's score is
    the individual points of its best-placed male player plus its best-placed female player; ties go to the lower sum
    of those two players' individual places, then to the better place of the male player; units still tied share.

    ``sections`` are the individual sections the players come from (the male and the female section of the age
    group, or one mixed section), each ranked by :func:`engine.standings.standings` with ``tiebreaks``.  A player's
    unit is ``Entrant.team`` and the sex ``Entrant.sex`` (``m``, or ``w``/``f``); every unit needs one of each."""
    tables = [
        standings(section, tiebreaks, rules)
        for section in ([sections] if isinstance(sections, Tournament) else sections)
    ]
    best: dict[str, dict[str, Standing]] = {}
    for table in tables:
        for standing in table:
            entrant = standing.entrant
            if not entrant.team:
                continue
            sex = {"m": "m", "w": "f", "f": "f"}.get(entrant.sex.lower())
            if sex is None:
                raise StandingsError(
                    f"player {entrant.start_no} ({entrant.name}, unit {entrant.team}) has sex {entrant.sex!r}: "
                    "expected 'm', 'w' or 'f'"
                )
            current = best.setdefault(entrant.team, {}).get(sex)
            if current is None or (standing.rank, -standing.points) < (current.rank, -current.points):
                best[entrant.team][sex] = standing
    rows = []
    for unit, players in best.items():
        missing = [name for sex, name in (("m", "male"), ("f", "female")) if sex not in players]
        if missing:
            raise StandingsError(f"unit {unit!r} has no {missing[0]} player: a team is 1 male and 1 female player")
        male, female = players["m"], players["f"]
        rows.append((unit, male.points + female.points, male.rank + female.rank, male, female))
    rows.sort(key=lambda row: (-row[1], row[2], row[3].rank, row[0]))
    table_out: list[YouthTeamStanding] = []
    for index, (unit, points, place_sum, male, female) in enumerate(rows):
        rank = index + 1
        if index and (points, place_sum, male.rank) == (
            rows[index - 1][1],
            rows[index - 1][2],
            rows[index - 1][3].rank,
        ):
            rank = table_out[-1].rank
        table_out.append(YouthTeamStanding(rank, unit, points, place_sum, male, female))
    return table_out


# --- TRF-26 team records ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TeamTrfFile:
    """What :func:`read_team_trf` found."""

    tournament: TeamTournament
    tiebreaks: str | None = None
    """The tie-break list declared in header 202."""
    team_lines: dict[int, int] = field(default_factory=dict)
    """Each team's 310 line number."""
    round_lines: dict[int, int] = field(default_factory=dict)
    """Each team's 801 line number."""
    discrepancies: tuple[str, ...] = ()
    """Where the informative 801 records differ from the player records the tournament was built from, each naming
    the 801 line."""


_BOARD_CODES: Final = {kind.value: kind for kind in _BOARD_KINDS}
_BYE_CODES: Final = {
    "U": ResultKind.PAB,
    "F": ResultKind.FPB,
    "H": ResultKind.HPB,
    "Z": ResultKind.ZPB,
    " ": ResultKind.ZPB,
}
_FORFEIT_CODES: Final = {"+": ResultKind.FORFEIT_WIN, "-": ResultKind.FORFEIT_LOSS}


def read_team_trf(text: str, system: System | None = None) -> TeamTrfFile:
    """Read the team part of a TRF-26 file.

    Headers: 012 (name), 092/192 (round robin or Swiss), 142 (rounds), 162 (game points), 202 (tie-breaks), 352
    (colours by board, hence the number of boards), 362 (match points).  Records: ``310`` teams (number, name,
    nickname, strength, MP, GP, rank, members in board order); ``801`` team rounds (per round: opposing team, colour,
    board results like ``=0=1``, lineup like ``1234`` naming members by their place in the 310 record, ``0`` for an
    empty board; ``FFFF`` ``HHHH`` ``ZZZZ`` ``UUUU`` for the team byes).

    TRF-26 makes the player records normative and 801 informative.  When the file has player records (``001``) the
    matches are built from them (:func:`build_team_tournament`) with the ``300`` lineups, the ``240`` and ``320``
    team byes and the ``330`` forfeited matches, and each 801 record is checked against the result (differences go to
    :attr:`TeamTrfFile.discrepancies`); without player records the 801 records are the matches, and both sides of
    every match must agree.  A bad line raises :class:`~engine.trf.TrfError` naming its line number."""
    records: dict[str, list[tuple[int, str]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        records.setdefault(line[:3], []).append((number, line))
    headers = {code: (entries[0][0], entries[0][1][4:].rstrip()) for code, entries in records.items() if code.isdigit()}
    boards = _boards_of(headers, records.get("801", []))
    scoring = TeamScoring(_game_scoring(headers.get("162")), _match_scoring(headers.get("362")), None)
    if records.get("320"):
        scoring = replace(scoring, pairing_bye=_pairing_bye(*records["320"][0]))
    teams, team_lines = _teams(records.get("310", []))
    rows: dict[int, list[TeamRound]] = {}
    round_lines: dict[int, int] = {}
    for number, line in records.get("801", []):
        assert boards is not None  # known from 352 or the 801 records
        team_no, row = _parse_team_rounds(line, number, boards, teams)
        if team_no in rows:
            raise TrfError(
                f"line {number}: team {team_no} has a second 801 record (first on line {round_lines[team_no]})"
            )
        rows[team_no] = row
        round_lines[team_no] = number
    rounds = max((len(row) for row in rows.values()), default=0)
    if "142" in headers:
        line_no, value = headers["142"]
        rounds = max(rounds, _integer(value.strip(), "number of rounds (142)", line_no))
    if system is None:
        kind = " ".join(value for code, (_, value) in headers.items() if code in ("092", "192")).upper()
        system = System.ROUND_ROBIN if "ROBIN" in kind.replace(" ", "") else System.SWISS
    name = headers.get("012", (0, ""))[1].strip()
    discrepancies: list[str] = []
    if "001" in records:
        tournament = _from_player_records(text, records, teams, boards, scoring, rounds, system)
        tournament = replace(tournament, name=name or tournament.name)
        discrepancies = _compare(tournament, rows, round_lines, records.get("801", []))
    else:
        _mirror_opponents(rows, round_lines)
        built = tuple(replace(team, rounds=tuple(rows.get(no, []))) for no, team in sorted(teams.items()))
        tournament = TeamTournament(name, built, rounds, boards or 1, system, scoring)
    _check(tournament)
    tiebreaks = headers.get("202", (0, ""))[1].strip() or None
    return TeamTrfFile(tournament, tiebreaks, team_lines, round_lines, tuple(discrepancies))


def _teams(records: list[tuple[int, str]]) -> tuple[dict[int, Team], dict[int, int]]:
    """The 310 records: the teams by number and each one's line number."""
    if not records:
        raise TrfError("no team records (310) in the file")
    teams: dict[int, Team] = {}
    lines: dict[int, int] = {}
    listed: dict[int, int] = {}
    for number, line in records:
        team = _parse_team(line, number)
        if team.number in teams:
            raise TrfError(f"line {number}: team {team.number} is given twice (first on line {lines[team.number]})")
        for member in team.members:
            if member in listed:
                raise TrfError(f"line {number}: player {member} is also in team {listed[member]}")
            listed[member] = team.number
        teams[team.number] = team
        lines[team.number] = number
    return teams, lines


def _from_player_records(
    text: str,
    records: dict[str, list[tuple[int, str]]],
    teams: dict[int, Team],
    boards: int | None,
    scoring: TeamScoring,
    rounds: int,
    system: System,
) -> TeamTournament:
    """The matches built from the player records (001) with the lineups (300), byes (240, 320) and forfeited
    matches (330)."""
    individual = read_trf(text, system).tournament
    rounds = max(rounds, individual.rounds)
    try:
        return build_team_tournament(
            replace(individual, rounds=rounds),
            [teams[no] for no in sorted(teams)],
            boards=boards,
            scoring=scoring,
            lineups=_out_of_order(records.get("300", []), teams, rounds),
            byes=_team_byes(records.get("240", []), records.get("320", []), teams, rounds),
            forfeited_matches=_forfeited_matches(records.get("330", []), teams, rounds),
        )
    except TrfError:
        raise
    except StandingsError as error:
        raise TrfError(f"the player records (001) and the team records do not fit together: {error}") from None


def _compare(
    tournament: TeamTournament,
    rows: dict[int, list[TeamRound]],
    round_lines: dict[int, int],
    records: list[tuple[int, str]],
) -> list[str]:
    """The differences between the 801 records and the tournament built from the player records."""
    found = []
    totals = _Results(tournament, Rules.FIDE_2024, tournament.system).totals
    stated = {int(line[3:7]): (line[12:17].strip(), line[17:22].strip()) for _, line in records}
    for team in tournament.teams:
        if team.number not in rows:
            continue
        where = f"line {round_lines[team.number]}: team {team.number}"
        for round_no in range(1, tournament.rounds + 1):
            built, shown = team.round(round_no), _round_of(rows[team.number], round_no)
            if _describe(built) != _describe(shown):
                found.append(
                    f"{where}, round {round_no}: 801 shows {_describe(shown)}, the player records {_describe(built)}"
                )
        mp, gp = stated.get(team.number, ("", ""))
        if mp and gp and (Fraction(mp), Fraction(gp)) != (totals["MP"][team.number], totals["GP"][team.number]):
            found.append(
                f"{where}: 801 states MP {mp} GP {gp}, the player records give "
                f"MP {_plain(totals['MP'][team.number])} GP {_plain(totals['GP'][team.number])}"
            )
    return found


def _round_of(row: list[TeamRound], round_no: int) -> TeamRound:
    return row[round_no - 1] if round_no <= len(row) else ABSENT_TEAM


def _describe(entry: TeamRound) -> str:
    if entry.opponent is None:
        return (entry.bye or ResultKind.ZPB).name
    return f"{''.join(board.kind.value for board in entry.boards)} against team {entry.opponent}"


def _plain(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def _out_of_order(
    records: list[tuple[int, str]], teams: dict[int, Team], rounds: int
) -> dict[tuple[int, int], list[int | None]]:
    """Records 300: round 5–7, team 9–11, opposing team 13–15, the players board by board from column 17 (4 columns
    each, one blank between; ``0`` for an empty board)."""
    lineups: dict[tuple[int, int], list[int | None]] = {}
    for number, line in records:
        round_no = _round_number(line[4:7], rounds, number)
        team_no = _team_number(line[8:11], teams, number)
        _team_number(line[12:15], teams, number)
        players: list[int | None] = []
        for column in range(16, len(line.rstrip()), 5):
            player = _integer(line[column : column + 4].strip() or "0", "player", number)
            if player and player not in teams[team_no].members:
                raise TrfError(f"line {number}: player {player} is not a member of team {team_no}")
            players.append(player or None)
        if (round_no, team_no) in lineups:
            raise TrfError(f"line {number}: a second lineup for team {team_no} in round {round_no}")
        lineups[round_no, team_no] = players
    return lineups


def _team_byes(
    byes: list[tuple[int, str]], pairing_byes: list[tuple[int, str]], teams: dict[int, Team], rounds: int
) -> dict[tuple[int, int], ResultKind]:
    """Records 240 (type F, H or Z in column 5, round 7–9, teams from column 11) and 320 (the team given the
    pairing-allocated bye in each round, columns 15–17, 19–21 …)."""
    found: dict[tuple[int, int], ResultKind] = {}
    for number, line in byes:
        kind = {"F": ResultKind.FPB, "H": ResultKind.HPB, "Z": ResultKind.ZPB}.get(line[4:5])
        if kind is None:
            raise TrfError(f"line {number}: bye type {line[4:5]!r} is not F, H or Z")
        round_no = _round_number(line[6:9], rounds, number)
        for text in line[9:].split():
            found[round_no, _team_number(text, teams, number)] = kind
    for number, line in pairing_byes:
        for round_no, column in enumerate(range(14, len(line.rstrip()), 4), start=1):
            text = line[column : column + 3].strip()
            if text and int(_integer(text, "team number", number)):
                _round_number(str(round_no), rounds, number)
                found[round_no, _team_number(text, teams, number)] = ResultKind.PAB
    return found


def _forfeited_matches(
    records: list[tuple[int, str]], teams: dict[int, Team], rounds: int
) -> dict[tuple[int, int], tuple[int, ResultKind]]:
    """Records 330: ``+-`` / ``-+`` / ``--`` (columns 5–6: white's and black's result), round 8–10, white team 12–14,
    black team 16–18."""
    found: dict[tuple[int, int], tuple[int, ResultKind]] = {}
    for number, line in records:
        code = line[4:6]
        if len(code) != 2 or any(c not in _FORFEIT_CODES for c in code) or code == "++":
            raise TrfError(f"line {number}: forfeit type {code!r} is not '+-', '-+' or '--'")
        round_no = _round_number(line[7:10], rounds, number)
        white, black = _team_number(line[11:14], teams, number), _team_number(line[15:18], teams, number)
        found[round_no, white] = (black, _FORFEIT_CODES[code[0]])
        found[round_no, black] = (white, _FORFEIT_CODES[code[1]])
    return found


def _round_number(text: str, rounds: int, line_no: int) -> int:
    round_no = _integer(text.strip(), "round", line_no)
    if not 1 <= round_no <= rounds:
        raise TrfError(f"line {line_no}: round {round_no} is not one of the event's rounds 1–{rounds}")
    return round_no


def _team_number(text: str, teams: dict[int, Team], line_no: int) -> int:
    team_no = _integer(text.strip(), "team number", line_no)
    if team_no not in teams:
        raise TrfError(f"line {line_no}: team {team_no} has no team record (310)")
    return team_no


def _integer(text: str, what: str, line_no: int) -> int:
    if not text.isdigit():
        raise TrfError(f"line {line_no}: {what} {text!r} is not a number")
    return int(text)


def _score(text: str, what: str, line_no: int) -> Fraction:
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise TrfError(f"line {line_no}: {what} {text!r} is not a score") from None


def _boards_of(headers: dict[str, tuple[int, str]], round_records: list[tuple[int, str]]) -> int | None:
    """Boards per match: the length of the colour sequence (352), else the width of the 801 board results; None
    when the file has neither (the widest match then)."""
    if "352" in headers and headers["352"][1].strip():
        return len(headers["352"][1].strip())
    for _, line in round_records:
        match = re.search(r"\d+ [wb] (\S+)", line[22:])
        if match:
            return len(match.group(1))
    if round_records:
        raise TrfError(f"line {round_records[0][0]}: cannot tell the number of boards; give header 352 (e.g. 'WBWB')")
    return None


def _game_scoring(header: tuple[int, str] | None) -> Scoring:
    """Header 162: ``W 1.0 D 0.5 L 0.0``."""
    if header is None:
        return Scoring()
    values = dict(re.findall(r"\b([WDL])\s+(\d+(?:\.\d+)?)", header[1]))
    return Scoring(Fraction(values.get("W", "1")), Fraction(values.get("D", "0.5")), Fraction(values.get("L", "0")))


def _match_scoring(header: tuple[int, str] | None) -> Scoring:
    """Header 362: ``TW 2 TD 1 TL 0``."""
    if header is None:
        return MATCH_SCORING
    values = dict(re.findall(r"\bT([WDL])\s+(\d+(?:\.\d+)?)", header[1]))
    return Scoring(Fraction(values.get("W", "2")), Fraction(values.get("D", "1")), Fraction(values.get("L", "0")))


def _pairing_bye(line_no: int, line: str) -> tuple[Fraction, Fraction]:
    """Record 320: the match points (columns 5–8) and game points (10–13) of a pairing-allocated bye."""
    return _score(line[4:8].strip(), "PAB match points", line_no), _score(
        line[9:13].strip(), "PAB game points", line_no
    )


def _parse_team(line: str, number: int) -> Team:
    """Record 310: number 5–7, name 9–40, nickname 42–46, strength 48–53, MP 55–60, GP 62–67, rank 69–71, members
    from column 74 (4 columns each, one blank between)."""
    team_no = _integer(line[4:7].strip(), "team number", number)
    name = line[8:40].strip()
    if not name:
        raise TrfError(f"line {number}: team {team_no} has no name (columns 9–40)")
    rating = line[47:53].strip()
    mp, gp, rank = line[54:60].strip(), line[61:67].strip(), line[68:71].strip()
    members = []
    for column in range(73, len(line.rstrip()), 5):
        text = line[column : column + 4].strip()
        if text:
            members.append(_integer(text, "member start number", number))
    if not members:
        raise TrfError(f"line {number}: team {team_no} has no members (from column 74)")
    return Team(
        number=team_no,
        name=name,
        members=tuple(members),
        nickname=line[41:46].strip(),
        rating=_integer(rating, "strength", number) if rating else 0,
        declared_match_points=_score(mp, "match points", number) if mp else None,
        declared_game_points=_score(gp, "game points", number) if gp else None,
        declared_rank=_integer(rank, "rank", number) if rank else None,
    )


def _parse_team_rounds(line: str, number: int, boards: int, teams: dict[int, Team]) -> tuple[int, list[TeamRound]]:
    """Record 801: team 4–7, nickname 8–12, MP 13–17, GP 18–22, then from column 23 one block per round of
    ``8 + 2 × boards`` columns: opposing team (4), colour, board results, lineup."""
    team_no = _integer(line[3:7].strip(), "team number", number)
    if team_no not in teams:
        raise TrfError(f"line {number}: team {team_no} has no team record (310)")
    members = teams[team_no].members
    width = 8 + 2 * boards
    rows = []
    body = line.rstrip()
    for start in range(22, len(body), width):
        round_no = (start - 22) // width + 1
        block = body[start : start + width].ljust(width)
        where = f"line {number}: round {round_no}"
        opponent_text, color, results, lineup = block[0:4].strip(), block[5], block[7 : 7 + boards], block[8 + boards :]
        if not opponent_text:
            code = results[0]
            if code not in _BYE_CODES or results != code * boards:
                raise TrfError(f"{where}: {results!r} is not a team bye (FFFF, HHHH, ZZZZ or UUUU)")
            rows.append(TeamRound(bye=_BYE_CODES[code]))
            continue
        opponent = _integer(opponent_text, "opposing team", number)
        if color not in "wb":
            raise TrfError(f"{where}: colour {color!r} is not w or b")
        lineup = lineup.strip()
        if lineup and len(lineup) != boards:
            raise TrfError(f"{where}: lineup {lineup!r} does not name {boards} boards")
        match_boards = []
        for board, code in enumerate(results, start=1):
            kind = _BOARD_CODES.get(code)
            if kind is None:
                raise TrfError(f"{where}, board {board}: unknown result code {code!r}")
            place = int(lineup[board - 1], 36) if lineup and lineup[board - 1].isalnum() else 0
            if place > len(members):
                raise TrfError(f"{where}, board {board}: team {team_no} has no member {lineup[board - 1]!r}")
            if not place and not kind.forfeit:
                raise TrfError(f"{where}, board {board}: a played result {code!r} on a board with no player")
            match_boards.append(Board(board, kind, members[place - 1] if place else None))
        rows.append(TeamRound(opponent, color, tuple(match_boards)))
    return team_no, rows


def _mirror_opponents(rows: dict[int, list[TeamRound]], lines: dict[int, int]) -> None:
    """Check each match against the opposing team's record and fill in the opposing players."""
    for team_no, row in rows.items():
        for index, entry in enumerate(row):
            if entry.opponent is None:
                continue
            where = f"line {lines[team_no]}: round {index + 1}"
            other_row = rows.get(entry.opponent)
            other = other_row[index] if other_row and index < len(other_row) else None
            if other is None or other.opponent != team_no:
                raise TrfError(
                    f"{where}: team {team_no} meets team {entry.opponent}, whose 801 record"
                    f"{f' (line {lines[entry.opponent]})' if entry.opponent in lines else ''} does not show the match"
                )
            if other.color == entry.color:
                raise TrfError(f"{where}: teams {team_no} and {entry.opponent} both have colour {entry.color!r}")
            boards = []
            for board, mirror in zip(entry.boards, other.boards, strict=True):
                if not _fits(board.kind, mirror.kind):
                    raise TrfError(
                        f"{where}, board {board.number}: {board.kind.value!r} against {mirror.kind.value!r} "
                        f"on line {lines[entry.opponent]}"
                    )
                boards.append(replace(board, opponent=mirror.player))
            row[index] = replace(entry, boards=tuple(boards))
